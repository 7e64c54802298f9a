"""F.embedding_bag and nn.EmbeddingBag (engine/nn/functional/sparse.py, engine/nn/modules/sparse.py,
engine/ops/nn/embedding.py)."""
from __future__ import annotations

import numpy as np
import pytest

import engine
import engine.nn as nn
import engine.nn.functional as F
from tests.checks import BACKENDS, f64, gradcheck, gradgradcheck, matches_numpy

IDX = [1, 2, 4, 5, 4, 3, 2, 9]


def _np_bags(w, idx, offsets, mode, psw=None, padding_idx=None):
    """Bag by bag with Python loops: (output, the winning rows for max)."""
    bounds = list(offsets) + [len(idx)]
    out = np.zeros((len(offsets), w.shape[1]))
    win = np.zeros((len(offsets), w.shape[1]), dtype=np.int64)
    for b in range(len(offsets)):
        members = [(i, idx[i]) for i in range(bounds[b], bounds[b + 1]) if idx[i] != padding_idx]
        if not members:
            continue
        rows = np.stack([w[r] * (psw[i] if psw is not None else 1.0) for i, r in members])
        if mode == "sum":
            out[b] = rows.sum(0)
        elif mode == "mean":
            out[b] = rows.mean(0)
        else:
            first = rows.argmax(0)
            out[b] = rows.max(0)
            win[b] = [members[k][1] for k in first]
    return out, win


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("offsets,padding_idx", [([0, 4], None), ([0, 3, 3], None), ([0, 4], 4), ([0, 1, 5], 2)])
def test_bags_match_loops(mode, offsets, padding_idx):
    w = f64(10, 3, seed=1)
    out = F.embedding_bag(engine.tensor(IDX), w, engine.tensor(offsets), mode=mode, padding_idx=padding_idx)
    want, win = _np_bags(w.detach().numpy(), IDX, offsets, mode, padding_idx=padding_idx)
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-12, atol=1e-15)
    node = out.grad_fn
    assert node.name() == "EmbeddingBagBackward0"
    assert node._saved_mode == {"sum": 0, "mean": 1, "max": 2}[mode]
    assert node._saved_padding_idx == (-1 if padding_idx is None else padding_idx)
    if mode == "max":
        assert node._saved_result3.tolist() == win.tolist()
    if mode != "sum":
        sizes = [sum(1 for i in range(a, b) if IDX[i] != padding_idx) for a, b in zip(offsets, offsets[1:] + [8])]
        assert node._saved_result2.tolist() == sizes


def test_per_sample_weights_two_d_input_and_last_offset():
    w = f64(10, 3, seed=2)
    p = f64(8, seed=3)
    out = F.embedding_bag(engine.tensor(IDX), w, engine.tensor([0, 4]), mode="sum", per_sample_weights=p)
    want, _ = _np_bags(w.detach().numpy(), IDX, [0, 4], "sum", psw=p.detach().numpy())
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-12)
    node = out.grad_fn
    assert node._saved_weight is w and node._saved_per_sample_weights is p
    two = F.embedding_bag(engine.tensor(IDX).reshape(2, 4), w, mode="max")
    np.testing.assert_array_equal(two.detach().numpy(), F.embedding_bag(engine.tensor(IDX), w, engine.tensor([0, 4]),
                                                                         mode="max").detach().numpy())
    assert two.grad_fn._saved_offsets.tolist() == [0, 4]
    last = F.embedding_bag(engine.tensor(IDX), w, engine.tensor([0, 3, 8]), include_last_offset=True)
    assert tuple(last.shape) == (2, 3)
    np.testing.assert_allclose(last.detach().numpy(), _np_bags(w.detach().numpy(), IDX, [0, 3], "mean")[0])


def test_max_takes_the_first_row_that_reaches_the_maximum_and_empty_bags_are_zero():
    w = engine.tensor([[1.0, 5.0], [1.0, 2.0], [0.0, 5.0]], requires_grad=True)
    out = F.embedding_bag(engine.tensor([0, 1, 2, 1]), w, engine.tensor([0, 3, 3]), mode="max")
    assert out.tolist() == [[1.0, 5.0], [0.0, 0.0], [1.0, 2.0]]
    assert out.grad_fn._saved_result3.tolist() == [[0, 0], [0, 0], [1, 1]]
    out.backward(engine.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    assert w.grad.tolist() == [[1.0, 2.0], [5.0, 6.0], [0.0, 0.0]]


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_weight_gradients(mode):
    idx, off = engine.tensor(IDX), engine.tensor([0, 3, 3])
    gradcheck(lambda w: F.embedding_bag(idx, w, off, mode=mode, padding_idx=4), [f64(10, 3, seed=4)])


def test_per_sample_weight_gradients_and_second_order():
    idx, off = engine.tensor(IDX), engine.tensor([0, 5])

    def fn(w, p):
        return F.embedding_bag(idx, w, off, mode="sum", per_sample_weights=p, padding_idx=2)
    w, p = f64(10, 3, seed=5), f64(8, seed=6)
    gradcheck(fn, [w, p])
    gradgradcheck(fn, [w, p])
    out = fn(w, p)
    out.sum().backward()
    assert p.grad[1].item() == 0.0 and p.grad[6].item() == 0.0            # padding entries: no gradient


def test_padding_rows_get_no_gradient_and_scale_grad_by_freq_divides_by_the_count():
    w = f64(10, 2, seed=7)
    F.embedding_bag(engine.tensor(IDX), w, engine.tensor([0, 4]), mode="sum", padding_idx=4).sum().backward()
    g = w.grad.numpy()
    assert g[4].tolist() == [0.0, 0.0] and g[2].tolist() == [2.0, 2.0] and g[9].tolist() == [1.0, 1.0]
    w.grad = None
    F.embedding_bag(engine.tensor(IDX), w, engine.tensor([0, 4]), mode="sum",
                    scale_grad_by_freq=True).sum().backward()
    # each row's gradient divided by how often it occurs (PyTorch's CPU kernel divides by another row's count)
    assert w.grad.numpy()[[1, 2, 3, 4, 9, 0]].tolist() == [[1.0, 1.0]] * 5 + [[0.0, 0.0]]


def test_max_norm_rescales_the_rows_used_in_place():
    w = engine.tensor([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])
    F.embedding_bag(engine.tensor([0, 1]), w, engine.tensor([0]), max_norm=1.0)
    np.testing.assert_allclose(w.numpy(), [[0.6, 0.8], [0.3, 0.4], [6.0, 8.0]], rtol=1e-6)


def test_module():
    engine.manual_seed(0)
    bag = nn.EmbeddingBag(10, 3, mode="sum", padding_idx=-1)
    assert bag.padding_idx == 9 and bag.weight[9].tolist() == [0.0, 0.0, 0.0]
    assert repr(bag) == "EmbeddingBag(10, 3, mode='sum', padding_idx=9)"
    assert repr(nn.EmbeddingBag(10, 3, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True)) == \
        "EmbeddingBag(10, 3, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True, mode='mean')"
    out = bag(engine.tensor(IDX), engine.tensor([0, 4]))
    np.testing.assert_allclose(out.detach().numpy(), _np_bags(bag.weight.detach().numpy(), IDX, [0, 4], "sum")[0],
                               rtol=1e-6)
    pre = nn.EmbeddingBag.from_pretrained(engine.ones(4, 2), mode="max")
    assert not pre.weight.requires_grad and pre(engine.tensor([[0, 3]])).tolist() == [[1.0, 1.0]]
    with pytest.raises(AssertionError, match="padding_idx must be within num_embeddings"):
        nn.EmbeddingBag(10, 3, padding_idx=10)


def test_errors():
    w = engine.randn(10, 3)
    with pytest.raises(RuntimeError, match=r"Index 1 of input takes value 10 which is not in the valid range"):
        F.embedding_bag(engine.tensor([1, 10]), w, engine.tensor([0]))
    with pytest.raises(RuntimeError, match="offsets must be non-decreasing"):
        F.embedding_bag(engine.tensor(IDX), w, engine.tensor([0, 5, 4]))
    with pytest.raises(NotImplementedError, match="sparse"):
        F.embedding_bag(engine.tensor(IDX), w, engine.tensor([0]), sparse=True)


def _run_all():
    w = engine.tensor(np.random.default_rng(8).standard_normal((10, 3)), requires_grad=True)
    p = engine.tensor(np.linspace(-1.0, 1.0, 8), requires_grad=True)
    idx, off = engine.tensor(IDX), engine.tensor([0, 3, 3])
    outs = [F.embedding_bag(idx, w, off, mode=m, padding_idx=2) for m in ("sum", "mean", "max")]
    outs.append(F.embedding_bag(idx, w, off, mode="sum", per_sample_weights=p))
    outs.append(F.embedding_bag(idx.reshape(2, 4), w, mode="max"))
    winners = outs[2].grad_fn._saved_result3
    sum(((k + 1) * o).sum() for k, o in enumerate(outs)).backward()
    return outs + [w.grad, p.grad, winners]


@pytest.mark.parametrize("backend", BACKENDS)
def test_other_backends_match_numpy(backend):
    matches_numpy(backend, _run_all)


def exercise_embedding_bag_ops():
    """Runs the embedding_bag row once (for test_every_table_op_is_exercised)."""
    F.embedding_bag(engine.tensor(IDX), f64(10, 3, seed=40), engine.tensor([0, 4]))
