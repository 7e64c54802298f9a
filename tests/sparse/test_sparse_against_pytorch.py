"""Sparse COO tensors against answers recorded from PyTorch (tests/fixtures/make_sparse_reference.py):
repr, coalesce, graph nodes and what they save, values and gradients, a GCN layer, errors."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import engine as torch
import engine.nn.functional as F

with open(os.path.join(os.path.dirname(__file__), "..", "fixtures", "sparse", "sparse_reference.json")) as _f:
    REF = json.load(_f)
I = [[0, 1, 1, 2, 0], [1, 0, 2, 1, 1]]
V = [1.0, 2.0, 3.0, 4.0, 5.0]
X = [[0.5, -1.0], [1.5, 0.25], [-2.0, 0.75]]
G = [[1.0, -2.0], [0.5, 3.0], [-1.0, 0.25]]


def sp(values=V, **kw):
    return torch.sparse_coo_tensor(torch.tensor(I), values if isinstance(values, torch.Tensor)
                                   else torch.tensor(values), (3, 3), **kw)


def names(node):
    return [node.name(), [n.name() if n is not None else None for n, _ in node.next_functions]]


def saved_names(node):
    """The saved tensors' names; a sparse one is kept as ``<name>`` and ``<name>_indices``."""
    return sorted({name.removesuffix("_indices") for name, _ in node.saved_tensors_info})


def torch_name(name):
    return name


def test_repr_matches_pytorch():
    v = torch.tensor(V, requires_grad=True)
    got = {
        "with_grad_fn": repr(sp(v)),
        "coalesced": repr(sp(v).coalesce()),
        "leaf_requires_grad": repr(sp(requires_grad=True)),
        "int_values": repr(sp([1, 2, 3, 4, 5])),
        "float64": repr(sp(dtype=torch.float64)),
        "hybrid": repr(torch.sparse_coo_tensor(torch.tensor(I), torch.ones(5, 2), (3, 3, 2))),
        "empty": repr(torch.sparse_coo_tensor(torch.zeros(2, 0, dtype=torch.long), torch.zeros(0), (2, 2))),
        "to_sparse": repr(torch.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse()),
        "sum_dim0": repr(torch.sparse.sum(sp(v), dim=0)),
        "softmax": repr(torch.sparse.softmax(sp(v), 1)),
    }
    assert got == REF["repr"]


def test_coalesce_to_dense_and_metadata_match_pytorch():
    ref = REF["coalesce"]
    a = sp()
    c = a.coalesce()
    assert c.indices().tolist() == ref["indices"] and c.values().tolist() == ref["values"]
    assert (c.is_coalesced(), a.is_coalesced()) == (ref["is_coalesced"], ref["before"])
    assert c.coalesce() is c
    assert a.to_dense().tolist() == ref["dense"]
    assert torch.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse().indices().tolist() == ref["to_sparse_indices"]
    assert (c.sparse_dim(), c.dense_dim(), a._nnz(), list(a.stride())) == \
        (ref["sparse_dim"], ref["dense_dim"], ref["nnz"], ref["stride"])
    assert [repr(torch.strided), repr(torch.sparse_coo)] == ref["layouts"]
    assert (a.layout is torch.sparse_coo, a.is_sparse, torch.ones(2).layout is torch.strided,
            torch.ones(2).is_sparse) == (True, True, True, False)
    assert (a.shape, a.dim(), a.numel(), a.dtype) == (torch.Size([3, 3]), 2, 9, torch.float32)
    # _indices()/_values() are the tensors themselves, coalesced or not
    assert a._indices().tolist() == I and a._values().tolist() == V and a._values().grad_fn is None


@pytest.mark.parametrize("route", ["sparse.mm", "mm", "matmul", "spmm", "@"])
def test_product_nodes_match_pytorch(route):
    fn = {"sparse.mm": torch.sparse.mm, "mm": torch.mm, "matmul": torch.matmul, "spmm": torch.spmm,
          "@": lambda p, q: p @ q}[route]
    h = fn(sp(torch.tensor(V, requires_grad=True)), torch.tensor(X, requires_grad=True))
    name, nxt, saved = REF["nodes"][route]
    assert names(h.grad_fn) == [name, [torch_name(n) if n else None for n in nxt]]
    assert saved_names(h.grad_fn) == saved


def test_other_nodes_match_pytorch():
    a = sp(torch.tensor(V, requires_grad=True))
    made = {"constructor": a, "coalesce": a.coalesce(), "to_dense": a.to_dense(), "values": a.coalesce().values(),
            "sum": torch.sparse.sum(a), "sum_dim": torch.sparse.sum(a, dim=1),
            "sum_all_dims": torch.sparse.sum(a, dim=(0, 1)),
            "to_sparse": torch.tensor(X, requires_grad=True).to_sparse(), "softmax": torch.sparse.softmax(a, 1)}
    for key, t in made.items():
        name, nxt, saved = REF["nodes"][key]
        assert names(t.grad_fn) == [name, [torch_name(n) for n in nxt]], key
        assert saved_names(t.grad_fn) == saved, key
    assert names(made["sum"].grad_fn.next_functions[0][0]) == REF["nodes"]["sum_values"]
    # grad_fn._saved_<name> gives a saved sparse tensor back
    s = made["to_dense"].grad_fn._saved_self
    assert s.is_sparse and s._indices().tolist() == I and s._values().tolist() == V


@pytest.mark.parametrize("route", ["sparse.mm", "mm"])
def test_product_values_and_gradients_match_pytorch(route):
    fn = torch.sparse.mm if route == "sparse.mm" else torch.mm
    ref = REF["grads"][route]
    v, x = torch.tensor(V, requires_grad=True), torch.tensor(X, requires_grad=True)
    h = fn(sp(v), x)
    (h * torch.tensor(G)).sum().backward()
    np.testing.assert_allclose(h.tolist(), ref["out"], rtol=1e-6)
    np.testing.assert_allclose(v.grad.tolist(), ref["values_grad"], rtol=1e-6)
    np.testing.assert_allclose(x.grad.tolist(), ref["x_grad"], rtol=1e-6)
    # a sparse leaf: torch.sparse.mm gives it a sparse gradient with its pattern, torch.mm a dense one
    leaf = sp(requires_grad=True)
    (fn(leaf, torch.tensor(X)) * torch.tensor(G)).sum().backward()
    g = leaf.grad
    assert repr(g.layout) == ref["leaf_grad_layout"]
    if g.is_sparse:
        assert g._indices().tolist() == ref["leaf_grad"]["indices"]
        assert g.is_coalesced() == ref["leaf_grad"]["is_coalesced"]
        np.testing.assert_allclose(g._values().tolist(), ref["leaf_grad"]["values"], rtol=1e-6)
    else:
        np.testing.assert_allclose(g.tolist(), ref["leaf_grad"], rtol=1e-6)


def test_other_gradients_match_pytorch():
    fns = {"to_dense": lambda s: (s.to_dense() * torch.arange(9.0).reshape(3, 3)).sum(),
           "coalesce_values": lambda s: (s.coalesce().values() * torch.tensor([1.0, -1.0, 2.0, 3.0])).sum(),
           "sum": lambda s: torch.sparse.sum(s) * 2,
           "sum_dim1": lambda s: (torch.sparse.sum(s, dim=1).to_dense() * torch.tensor([1.0, 2.0, 3.0])).sum(),
           "softmax_dim1": lambda s: (torch.sparse.softmax(s, 1).to_dense() * torch.arange(9.0).reshape(3, 3)).sum(),
           "softmax_dim0": lambda s: (torch.sparse.softmax(s, 0).to_dense() * torch.arange(9.0).reshape(3, 3)).sum()}
    for key, fn in fns.items():
        v = torch.tensor(V, requires_grad=True)
        out = fn(sp(v))
        out.backward()
        assert out.item() == pytest.approx(REF["grads"][key]["out"]), key
        np.testing.assert_allclose(v.grad.tolist(), REF["grads"][key]["values_grad"], rtol=1e-6, err_msg=key)
    d = torch.tensor(X, requires_grad=True)
    (d.to_sparse().to_dense() * torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])).sum().backward()
    assert d.grad.tolist() == REF["grads"]["to_sparse"]["grad"]


@pytest.mark.parametrize("route", ["sparse.mm", "spmm", "mm", "@", "to_sparse"])
def test_gcn_layer_matches_pytorch(route):
    """A Kipf-Welling GCN layer as tutorials write it: normalized adjacency (sparse) times X W."""
    ref = REF["gcn"]
    n = len(ref["x"])
    W = torch.tensor(ref["w"], requires_grad=True)
    vals = torch.tensor(ref["edge_weight"], requires_grad=True)
    if route == "to_sparse":
        adj = torch.sparse_coo_tensor(torch.tensor(ref["edges"]), vals.detach(), (n, n)).to_dense().to_sparse()
    else:
        adj = torch.sparse_coo_tensor(torch.tensor(ref["edges"]), vals, (n, n))
    xw = torch.tensor(ref["x"]) @ W
    h = {"sparse.mm": torch.sparse.mm, "spmm": torch.spmm, "mm": torch.mm, "to_sparse": torch.sparse.mm,
         "@": lambda p, q: p @ q}[route](adj, xw)
    m = torch.tensor(ref["mask"])
    loss = F.cross_entropy(h[m], torch.tensor(ref["y"])[m])
    loss.backward()
    got = ref[route]
    assert h.grad_fn.name() == got["grad_fn"]
    assert loss.item() == pytest.approx(got["loss"], rel=1e-6)
    np.testing.assert_allclose(W.grad.tolist(), got["w_grad"], rtol=1e-5, atol=1e-7)
    if got["values_grad"] is None:
        assert vals.grad is None
    else:
        np.testing.assert_allclose(vals.grad.tolist(), got["values_grad"], rtol=1e-5, atol=1e-7)


def test_errors_match_pytorch():
    ref = REF["errors"]
    calls = {
        "indices": lambda: sp().indices(), "values": lambda: sp().values(), "view": lambda: sp().view(9),
        "reshape": lambda: sp().reshape(9), "numpy": lambda: sp().numpy(),
        "untyped_storage": lambda: sp().untyped_storage(), "data_ptr": lambda: sp().data_ptr(),
        "tolist": lambda: sp().tolist(), "contiguous": lambda: sp().contiguous(), "item": lambda: sp().item(),
        "nnz": lambda: torch.sparse_coo_tensor(torch.tensor(I), torch.ones(4), (3, 3)),
        "ndims": lambda: torch.sparse_coo_tensor(torch.tensor(I), torch.ones(5), (3, 3, 3)),
        "index_too_big": lambda: torch.sparse_coo_tensor(torch.tensor(I), torch.ones(5), (2, 3)),
        "index_negative": lambda: torch.sparse_coo_tensor(torch.tensor([[0, -1], [0, 0]]), torch.ones(2), (3, 3)),
        "mm_shape": lambda: torch.sparse.mm(sp(), torch.ones(4, 2)),
        "torch_mm_shape": lambda: torch.mm(sp(), torch.ones(4, 2)),
        "mm_dtype": lambda: torch.sparse.mm(sp(), torch.ones(3, 2, dtype=torch.float64)),
        "torch_mm_dtype": lambda: torch.mm(sp(), torch.ones(3, 2, dtype=torch.float64)),
    }
    for key, call in calls.items():
        kind, message = ref[key]
        with pytest.raises(Exception) as e:
            call()
        assert type(e.value).__name__ == kind, key
        # PyTorch's dispatcher error goes on with its build's backend list; the rest is word for word
        assert message.startswith(str(e.value)) if key == "view" else str(e.value) == message, key
