"""nll_loss / cross_entropy on (N, C, d...) input: one NllLoss2DBackward0, as PyTorch builds it."""
import numpy as np
import pytest

import engine
import engine.nn.functional as F
from tests.checks import gradcheck

D = engine.float64


def _chain(t):
    names, f = [], t.grad_fn
    while f is not None and f.name() != "torch::autograd::AccumulateGrad":
        names.append(f.name())
        f = f.next_functions[0][0] if f.next_functions else None
    return names


def _data(shape, seed=0, ignore=False):
    rng = np.random.default_rng(seed)
    x = engine.tensor(rng.standard_normal(shape), dtype=D, requires_grad=True)
    t = rng.integers(0, shape[1], (shape[0],) + tuple(shape[2:]))
    if ignore:
        t.reshape(-1)[::3] = -100
    return x, engine.tensor(t)


def _flat(x, t, **kw):
    """The same loss through the 2-D case: classes moved last and flattened."""
    perm = (0,) + tuple(range(2, x.ndim)) + (1,)
    out = F.nll_loss(x.permute(*perm).reshape(-1, x.shape[1]), t.reshape(-1), **kw)
    return out.reshape(t.shape) if kw.get("reduction") == "none" else out


@pytest.mark.parametrize("shape,chain_mean,chain_none", [
    ((2, 3, 4), ["NllLoss2DBackward0", "ViewBackward0"], ["ViewBackward0", "NllLoss2DBackward0", "ViewBackward0"]),
    ((2, 3, 4, 5), ["NllLoss2DBackward0"], ["NllLoss2DBackward0"]),
    ((2, 3, 2, 3, 2), ["NllLoss2DBackward0", "ViewBackward0"],
     ["ViewBackward0", "NllLoss2DBackward0", "ViewBackward0"]),
])
def test_graph_is_pytorchs(shape, chain_mean, chain_none):
    x, t = _data(shape)
    assert _chain(F.nll_loss(x, t)) == chain_mean
    out = F.nll_loss(x, t, reduction="none")
    assert _chain(out) == chain_none and tuple(out.shape) == tuple(t.shape)
    node = F.nll_loss(x, t).grad_fn
    four = tuple(shape) if len(shape) == 4 else (shape[0], shape[1], 1, int(np.prod(shape[2:])))
    assert tuple(node._saved_self.shape) == four
    assert tuple(node._saved_target.shape) == (four[0],) + four[2:]
    assert node._saved_total_weight.shape == ()


@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 3, 2, 2), (2, 3, 2, 1, 2)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_values_and_gradients(shape, reduction, weighted, each_backend):
    x, t = _data(shape, ignore=True)
    w = engine.tensor([0.5, 2.0, 1.5], dtype=D) if weighted else None
    got, want = F.nll_loss(x, t, w, reduction=reduction), _flat(x, t, weight=w, reduction=reduction)
    np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().cpu().numpy(), rtol=1e-12, atol=1e-12)
    gradcheck(lambda a: F.nll_loss(a, t, w, reduction=reduction), [x])


def test_cross_entropy_4d_keeps_log_softmax_output():
    x, t = _data((2, 3, 2, 2))
    loss = F.cross_entropy(x, t)
    assert _chain(loss) == ["NllLoss2DBackward0", "LogSoftmaxBackward0"]
    gradcheck(lambda a: F.cross_entropy(a, t), [x])


def test_bad_targets():
    x, _ = _data((2, 3, 4))
    with pytest.raises(IndexError, match="^Target 3 is out of bounds.$"):
        F.nll_loss(x, engine.tensor([[0, 1, 2, 3], [0, 0, 0, 0]]))
    with pytest.raises(RuntimeError, match=r"^Expected target size \[2, 4\], got \[2, 3\]$"):
        F.nll_loss(x, engine.tensor([[0, 1, 2], [0, 0, 0]]))


def exercise_nll_kdim_ops():
    """One call of the k-d rows (test_ops_grad checks every table op is exercised)."""
    x, t = _data((2, 3, 2, 2))
    F.nll_loss(x, t).backward()
    F.nll_loss(x, t, engine.tensor([1.0, 2.0, 3.0], dtype=D)).backward()
