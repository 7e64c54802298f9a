"""Sparse COO tensors: gradients against finite differences, bytes (allocated and saved), recorded
events, a sparse leaf's ``.grad``, and the error an unsupported op raises."""
from __future__ import annotations

import copy
import io
import json
import os

import numpy as np
import pytest

import engine as torch
import engine.nn.functional as F
from engine import memory
from replay.model import TraceModel

with open(os.path.join(os.path.dirname(__file__), "..", "fixtures", "sparse", "sparse_reference.json")) as _f:
    REF = json.load(_f)
I = [[0, 1, 1, 2, 0, 3], [1, 0, 2, 1, 1, 3]]        # (0, 1) twice: uncoalesced
NNZ = len(I[0])


def _numeric_grad(f, v0, eps=1e-6):
    g = np.zeros_like(v0)
    for k in range(v0.size):
        d = np.zeros_like(v0)
        d[k] = eps
        g[k] = (f(v0 + d) - f(v0 - d)) / (2 * eps)
    return g


@pytest.mark.parametrize("route", ["sparse.mm", "mm", "to_dense", "coalesce", "sum_dim", "softmax"])
def test_gradients_match_finite_differences(route):
    rng = np.random.default_rng(0)
    v0, x0, w = rng.normal(size=NNZ), rng.normal(size=(4, 3)), rng.normal(size=(4, 3))

    def loss(v, x, grad=False):
        v = torch.tensor(v, dtype=torch.float64, requires_grad=grad)
        x = torch.tensor(x, dtype=torch.float64, requires_grad=grad)
        a = torch.sparse_coo_tensor(torch.tensor(I), v, (4, 4))
        if route == "sparse.mm":
            out = (torch.sparse.mm(a, x) * torch.tensor(w)).sum()
        elif route == "mm":
            out = ((a @ x) ** 2).sum()
        elif route == "to_dense":
            out = (a.to_dense() ** 3).sum() + (x * 0).sum()
        elif route == "coalesce":
            out = (a.coalesce().values() ** 2).sum() + (x * 0).sum()
        elif route == "sum_dim":
            out = (torch.sparse.sum(a, dim=0).to_dense() ** 2).sum() + (x * 0).sum()
        else:
            out = (torch.sparse.softmax(a, 0).to_dense() ** 2 * torch.arange(16.0).reshape(4, 4)).sum() + (x * 0).sum()
        if grad:
            out.backward()
            return v.grad.numpy(), x.grad.numpy()
        return out.item()

    gv, gx = loss(v0, x0, grad=True)
    np.testing.assert_allclose(gv, _numeric_grad(lambda v: loss(v, x0), v0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gx.reshape(-1), _numeric_grad(lambda x: loss(v0, x.reshape(4, 3)), x0.reshape(-1)),
                               rtol=1e-6, atol=1e-8)


def test_two_layer_gcn_gradients_match_finite_differences():
    """adj is used by both layers: its values' gradient is the sum of both (NOTE [ Sparse gradients in flight ] 1)."""
    rng = np.random.default_rng(1)
    n, fin, hid, c = 5, 3, 4, 2
    edges = [[0, 1, 1, 2, 3, 4, 0, 2], [1, 0, 2, 1, 4, 3, 0, 2]]
    ew0, x = rng.uniform(0.2, 1.0, size=8), rng.normal(size=(n, fin))
    w1, w2 = rng.normal(size=(fin, hid)), rng.normal(size=(hid, c))
    y = torch.tensor([0, 1, 1, 0, 1])

    def loss(ew, grad=False):
        vals = torch.tensor(ew, dtype=torch.float64, requires_grad=grad)
        adj = torch.sparse_coo_tensor(torch.tensor(edges), vals, (n, n))
        h = torch.relu(torch.sparse.mm(adj, torch.tensor(x) @ torch.tensor(w1)))
        out = F.cross_entropy(torch.mm(adj, h @ torch.tensor(w2)), y)
        if grad:
            out.backward()
            return vals.grad.numpy()
        return out.item()

    np.testing.assert_allclose(loss(ew0, grad=True), _numeric_grad(loss, ew0), rtol=1e-5, atol=1e-8)


def test_sparse_leaf_grad_accumulates_sparse_then_dense():
    leaf = torch.sparse_coo_tensor(torch.tensor(I), torch.ones(NNZ), (4, 4), requires_grad=True)
    x = torch.ones(4, 2)
    torch.sparse.mm(leaf, x).sum().backward()
    g1 = leaf.grad
    assert g1.is_sparse and g1._indices().tolist() == [[0, 1, 1, 2, 3], [1, 0, 2, 1, 3]]
    assert g1._values().tolist() == [2.0] * 5
    torch.sparse.mm(leaf, x * 3).sum().backward()          # sparse + sparse: sparse, summed
    assert leaf.grad.is_sparse and leaf.grad._values().tolist() == [8.0] * 5
    torch.mm(leaf, x).sum().backward()                     # + a dense gradient: dense
    assert not leaf.grad.is_sparse
    expected = np.zeros((4, 4))
    expected[tuple(np.array(g1._indices().tolist()))] = 8.0
    assert leaf.grad.tolist() == (expected + 2.0).tolist()


def test_bytes_allocated_and_saved_are_the_indices_and_the_values():
    d = torch.tensor([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]])
    before = memory.memory_allocated()
    s = d.to_sparse()                                        # nnz 3: int64 (2, 3) + float32 (3,)
    assert memory.memory_allocated() - before == 2 * 3 * 8 + 3 * 4
    before = memory.memory_allocated()
    v = torch.ones(NNZ, requires_grad=True)
    idx = torch.tensor(I)
    a = torch.sparse_coo_tensor(idx, v, (4, 4))              # over the two tensors: no new bytes
    assert memory.memory_allocated() - before == NNZ * 4 + 2 * NNZ * 8
    x = torch.ones(4, 5, requires_grad=True)
    saved = {n: s.nbytes for n, s in torch.sparse.mm(a, x).grad_fn.saved_tensors_info}
    assert saved == {"mat1": NNZ * 4, "mat1_indices": 2 * NNZ * 8, "mat2": 4 * 5 * 4}
    # with one operand requiring grad, each product saves what PyTorch saves (recorded)
    got = {"mm_x": torch.mm(a.detach(), x), "mm_a": torch.mm(a, x.detach()),
           "sparse.mm_x": torch.sparse.mm(a.detach(), x), "sparse.mm_a": torch.sparse.mm(a, x.detach())}
    got = {k: sorted({n.removesuffix("_indices") for n, _ in h.grad_fn.saved_tensors_info}) for k, h in got.items()}
    assert got == REF["nodes"]["saved_one_operand"]
    assert s.layout is torch.sparse_coo


def test_recorded_events_name_the_sparse_storages():
    with torch.record() as tr:
        d = torch.tensor([[0.0, 1.0, 0.0], [2.0, 0.0, 3.0]], requires_grad=True)
        s = d.to_sparse()
        h = torch.sparse.mm(s, torch.ones(3, 2))
        h.sum().backward()
    ev = tr.events
    allocs = {e["storage"]: e["bytes"] for e in ev if e["kind"] == "alloc"}
    op = next(e for e in ev if e["kind"] == "op" and e["op"] == "to_sparse")
    assert op["node"]["name"] == "ToSparseBackward1"
    assert op["output"]["storage"] == s._values()._storage.id and allocs[s._values()._storage.id] == 12
    assert allocs[s._indices()._storage.id] == 48 and op["output"]["bytes"] == 60
    mm = next(e for e in ev if e["kind"] == "op" and e["op"] == "sparse.mm")
    packed = {e["name"]: (e["storage"], e["bytes"]) for e in ev if e["kind"] == "pack" and e["node"] == mm["node"]["id"]}
    assert packed["mat1"] == (s._values()._storage.id, 12)
    assert packed["mat1_indices"] == (s._indices()._storage.id, 48)
    assert [e["name"] for e in ev if e["kind"] == "execute"] == ["SumBackward0", "SparseAddmmBackward0",
                                                                 "ToSparseBackward1"]
    assert d.grad.tolist() == [[0.0, 2.0, 0.0], [2.0, 0.0, 2.0]]
    model = TraceModel.from_trace(tr)                      # the one trace model reads it
    assert model.view(len(ev) - 1) is not None


@pytest.mark.parametrize("call", ["a.exp()", "a + 1", "a * 2", "F.relu(a)", "torch.exp(a)", "a.mean()", "a[0]",
                                  "a.t()", "torch.mm(torch.ones(2, 4), a)", "torch.save(a, io.BytesIO())",
                                  "copy.deepcopy(a)", "a.retain_grad()", "a.register_hook(print)"])
def test_unsupported_ops_raise_not_implemented(call):
    a = torch.sparse_coo_tensor(torch.tensor(I), torch.ones(NNZ), (4, 4))
    with pytest.raises(NotImplementedError, match="glassgrad does not implement .* for sparse tensors yet; "
                                                  r"call \.to_dense\(\) first"):
        eval(call, {"a": a, "torch": torch, "F": F, "io": io, "copy": copy})
    assert str(a) == repr(a) == f"{a}"       # the tensor is untouched and still prints


@pytest.mark.parametrize("reentrant", [False, True])
def test_checkpointed_gcn_layer_gives_the_same_gradients(reentrant):
    from engine.utils.checkpoint import checkpoint
    rng = np.random.default_rng(2)
    x = torch.tensor(rng.normal(size=(4, 3)))
    vals = torch.tensor(rng.uniform(size=NNZ), requires_grad=True)
    W = torch.tensor(rng.normal(size=(3, 2)), requires_grad=True)

    def layer(v, w):
        return torch.relu(torch.sparse.mm(torch.sparse_coo_tensor(torch.tensor(I), v, (4, 4)), x @ w))

    layer(vals, W).pow(2).sum().backward()
    plain = (vals.grad.tolist(), W.grad.tolist())
    vals.grad = W.grad = None
    checkpoint(layer, vals, W, use_reentrant=reentrant).pow(2).sum().backward()
    assert (vals.grad.tolist(), W.grad.tolist()) == plain
