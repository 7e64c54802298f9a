"""engine.nn.utils: conv/linear + batch-norm fusion, skip_init and stateless.functional_call, against
PyTorch 2.13's results and messages."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import engine
import engine.nn as nn
from engine.nn.utils import (fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, skip_init,
                             stateless)
from tests.checks import f64, gradcheck

D = engine.float64


def err(fn, kind):
    with pytest.raises(kind) as e:
        fn()
    return str(e.value)


def _trained_bn(bn, x):
    bn.train()
    for _ in range(3):
        bn(x + engine.randn(*x.shape, dtype=D))
    return bn.eval()


@pytest.mark.parametrize("conv_cls,transpose", [(nn.Conv1d, False), (nn.Conv2d, False), (nn.ConvTranspose2d, True)])
def test_fuse_conv_bn_eval_computes_bn_of_conv(conv_cls, transpose):
    engine.manual_seed(0)
    nd = 1 if conv_cls is nn.Conv1d else 2
    conv = conv_cls(3, 4, 3, bias=conv_cls is not nn.Conv2d, dtype=D).eval()
    bn = getattr(nn, f"BatchNorm{nd}d")(4, dtype=D)
    x = engine.randn(2, 3, *([6] * nd), dtype=D)
    with engine.no_grad():
        bn.weight.uniform_(0.5, 2.0)
        bn.bias.uniform_(-1.0, 1.0)
    _trained_bn(bn, conv(x).detach())
    fused = fuse_conv_bn_eval(conv, bn, transpose=transpose)
    assert fused is not conv and type(fused) is conv_cls and isinstance(fused.bias, nn.Parameter)
    np.testing.assert_allclose(fused(x).detach().numpy(), bn(conv(x)).detach().numpy(), rtol=1e-12, atol=1e-12)
    assert fused.weight.requires_grad and fused.weight.is_leaf and fused.weight._storage.base == "parameter"


def test_fuse_linear_bn_eval_and_one_feature_norms():
    engine.manual_seed(1)
    x = engine.randn(5, 3, dtype=D)
    for features in (4, 1):
        lin, bn = nn.Linear(3, 4, dtype=D).eval(), nn.BatchNorm1d(features, dtype=D)
        _trained_bn(bn, lin(x).detach() if features == 4 else lin(x).detach()[:, :1])
        fused = fuse_linear_bn_eval(lin, bn)
        want = bn(lin(x)) if features == 4 else bn(lin(x).reshape(-1, 1)).reshape(5, 4)
        np.testing.assert_allclose(fused(x).detach().numpy(), want.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_fusion_errors_and_defaults():
    assert err(lambda: fuse_conv_bn_eval(nn.Conv2d(1, 2, 1), nn.BatchNorm2d(2)), AssertionError) == (
        "Fusion only for eval!")
    assert err(lambda: fuse_linear_bn_eval(nn.Linear(1, 2).eval(), nn.BatchNorm1d(3).eval()), AssertionError) == (
        "To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got linear.out_features=2 and "
        "bn.num_features=3")
    assert err(lambda: fuse_linear_bn_eval(nn.Linear(1, 2).eval(), nn.BatchNorm1d(2, track_running_stats=False)
                                           .eval()), AssertionError) == (
        "bn.running_mean and bn.running_var must not be None")
    w = engine.ones(2, 1, 1, dtype=D)
    rm, rv = engine.tensor([1.0, -1.0], dtype=D), engine.tensor([3.0, 0.0], dtype=D)
    fw, fb = fuse_conv_bn_weights(w, None, rm, rv, 1.0, None, None)      # no bias, no affine: gamma 1, beta 0
    np.testing.assert_allclose(fw.detach().numpy().ravel(), [0.5, 1.0])
    np.testing.assert_allclose(fb.detach().numpy(), [-0.5, 1.0])
    assert not fb.requires_grad and fw.requires_grad is False


def test_skip_init_draws_nothing_and_checks_the_class():
    engine.manual_seed(4)
    state = engine.get_rng_state()
    m = skip_init(nn.Linear, 3, 4, dtype=D)
    assert repr(m) == "Linear(in_features=3, out_features=4, bias=True)" and m.weight.dtype is D
    assert (engine.get_rng_state() == state).all()
    bn = skip_init(nn.BatchNorm1d, 3)
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    assert engine.nn.init.kaiming_uniform_ is not None and engine.Tensor.uniform_.__name__ != "_keep"
    assert err(lambda: skip_init(int), RuntimeError) == "Expected a Module; got <class 'int'>"
    assert err(lambda: skip_init(nn.ReLU), RuntimeError) == "Module must support a 'device' arg to skip initialization"


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 2, bias=False)
        self.b = nn.Linear(2, 2, bias=False)
        self.b.weight = self.a.weight

    def forward(self, x):
        return self.b(self.a(x))


def _call(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return stateless.functional_call(*args, **kwargs)


def test_functional_call_swaps_and_restores():
    lin = nn.Linear(3, 2, dtype=D)
    w0, b0 = lin.weight, lin.bias
    x = f64(4, 3, seed=1, requires_grad=False)
    msg = (r"^`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed in a "
           r"future version of PyTorch. Please use `torch.func.functional_call` instead which is a drop-in "
           r"replacement.$")
    with pytest.warns(FutureWarning, match=msg):
        y = stateless.functional_call(lin, {"weight": engine.zeros(2, 3, dtype=D)}, x)
    np.testing.assert_allclose(y.detach().numpy(), np.broadcast_to(b0.detach().numpy(), (4, 2)))
    assert lin.weight is w0 and lin.bias is b0
    gradcheck(lambda w, b: _call(lin, {"weight": w, "bias": b}, (x,)), [f64(2, 3, seed=2), f64(2, seed=3)])

    class Boom(nn.Linear):
        def forward(self, x):
            raise ValueError("boom")
    bm = Boom(3, 2)
    w = bm.weight
    with pytest.raises(ValueError):
        _call(bm, {"weight": engine.zeros(2, 3), "extra": engine.ones(1)}, (x,))
    assert bm.weight is w and "extra" not in bm.__dict__


def test_functional_call_buffers_kwargs_and_strict():
    m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2)).eval()
    x = engine.ones(3, 2)
    given = {"1.running_mean": engine.tensor([10.0, 20.0]), "1.running_var": engine.tensor([4.0, 4.0])}
    y = _call(m, given, kwargs={"input": x})                                 # no args: everything by keyword
    z = (m[0](x) - engine.tensor([10.0, 20.0])) / np.sqrt(4.0 + 1e-5)
    np.testing.assert_allclose(y.detach().numpy(), z.detach().numpy(), rtol=1e-6)
    assert m[1].running_mean.tolist() == [0.0, 0.0]
    assert err(lambda: _call(m, {"0.weight": engine.eye(2), "foo": engine.ones(1)}, (x,), strict=True),
               RuntimeError) == (
        "Error(s) in reparametrizing for Sequential:\n\tUnexpected key(s): 'foo'.\n\tMissing key(s): '0.bias', "
        "'1.bias', '1.num_batches_tracked', '1.running_mean', '1.running_var', '1.weight'.")


def test_functional_call_tied_weights():
    t, x = Tied(), engine.ones(1, 2)
    assert _call(t, {"a.weight": engine.eye(2) * 2}, (x,)).tolist() == [[4.0, 4.0]]
    assert err(lambda: _call(t, {"a.weight": engine.eye(2) * 2, "b.weight": engine.eye(2)}, (x,)), ValueError) == (
        "functional_call got multiple values for keys ['a.weight', 'b.weight'], which are tied. Consider using "
        "tie_weights=False")
    assert _call(t, {"a.weight": engine.eye(2) * 2, "b.weight": engine.eye(2)}, (x,),
                 tie_weights=False).tolist() == [[2.0, 2.0]]
    assert t.b.weight is t.a.weight
