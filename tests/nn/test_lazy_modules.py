"""Lazy modules and UninitializedParameter/UninitializedBuffer against PyTorch 2.13: reprs before and after
the first forward, state_dict layout, errors, the class switch, and the same initial values as the eager
layer given the same draws."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import engine
import engine.nn as nn
import engine.nn.functional as F
from engine.nn.parameter import UninitializedBuffer, UninitializedParameter

USE = ("This error happens when you are using a `LazyModule` or explicitly manipulating "
       "`torch.nn.parameter.UninitializedParameter` objects. When using LazyModules Call `forward` with a dummy "
       "batch to initialize the parameters before calling torch functions")
SHAPE = ("Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
         "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call `forward` "
         "to initialize the parameters before accessing their attributes.")


def err(fn, kind):
    with pytest.raises(kind) as e:
        fn()
    return str(e.value)


def test_lazy_linear_before_and_after_the_first_forward():
    m = nn.LazyLinear(4)
    assert repr(m) == "LazyLinear(in_features=0, out_features=4, bias=True)"
    assert repr(m.weight) == "<UninitializedParameter>" and type(m.weight) is UninitializedParameter
    assert m.has_uninitialized_params()
    sd = m.state_dict()
    assert list(sd) == ["weight", "bias"] and sd["weight"] is m.weight      # placeholders, not detached copies
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]
    w, b = m.weight, m.bias
    opt = engine.optim.SGD(m.parameters(), lr=0.1)                          # before the first forward: fine
    engine.manual_seed(0)
    y = m(engine.randn(2, 3))
    assert type(m) is nn.Linear and repr(m) == "Linear(in_features=3, out_features=4, bias=True)"
    assert m.weight is w and type(w) is nn.Parameter and tuple(w.shape) == (4, 3)
    assert m.bias is b and type(b) is nn.Parameter and w._storage.base == "parameter"
    assert not m._forward_pre_hooks and not hasattr(m, "_initialize_hook")
    before = w.detach().numpy().copy()
    y.sum().backward()
    opt.step()
    assert opt.param_groups[0]["params"][0] is w
    np.testing.assert_allclose(w.detach().numpy(), before - 0.1 * w.grad.numpy(), rtol=1e-6)


def test_lazy_linear_draws_what_linear_draws():
    x = engine.randn(5, 7)
    engine.manual_seed(3)
    lazy = nn.LazyLinear(2)
    lazy(x)
    engine.manual_seed(3)
    eager = nn.Linear(7, 2)
    np.testing.assert_array_equal(lazy.weight.detach().numpy(), eager.weight.detach().numpy())
    np.testing.assert_array_equal(lazy.bias.detach().numpy(), eager.bias.detach().numpy())


def test_lazy_linear_options():
    m = nn.LazyLinear(3, bias=False)
    assert repr(m) == "LazyLinear(in_features=0, out_features=3, bias=False)" and list(m.state_dict()) == ["weight"]
    m(engine.randn(2))                                                       # unbatched
    assert repr(m) == "Linear(in_features=2, out_features=3, bias=False)"
    d = nn.LazyLinear(3, dtype=engine.float64)
    d(engine.randn(1, 2, dtype=engine.float64))
    assert d.weight.dtype is engine.float64
    t = nn.LazyLinear(3).to(engine.float64)                                 # .to before the forward carries over
    assert type(t.weight) is UninitializedParameter and t.weight.dtype is engine.float64
    t(engine.randn(1, 2, dtype=engine.float64))
    assert t.weight.dtype is engine.float64 and t.bias.dtype is engine.float64


def test_using_a_placeholder_raises_pytorchs_errors():
    p = nn.LazyLinear(3).weight
    assert err(lambda: F.linear(engine.randn(2, 3), p), ValueError) == (
        f"Attempted to use an uninitialized parameter in linear. {USE}")
    assert err(lambda: p + 1, ValueError).startswith("Attempted to use an uninitialized parameter in add. ")
    assert err(lambda: p.sum(), ValueError).startswith("Attempted to use an uninitialized parameter in sum. ")
    assert err(lambda: p.numel(), ValueError).startswith("Attempted to use an uninitialized parameter in numel. ")
    assert err(lambda: p.shape, RuntimeError) == SHAPE
    assert err(lambda: p.share_memory_(), RuntimeError) == (
        "Can't share memory on an uninitialized parameter or buffer. Call `forward` to initialize the parameters "
        "before calling `module.share_memory()`.")
    assert tuple(p.size()) == (0,) and p.dtype is engine.float32 and p.requires_grad
    assert p.data.tolist() == [] and p.device.type == "cpu"


def test_placeholders_themselves():
    p = UninitializedParameter()
    assert repr(p) == "<UninitializedParameter>" and p.requires_grad and isinstance(p, nn.Parameter)
    c = copy.deepcopy(p)
    assert type(c) is UninitializedParameter and c is not p
    p.materialize((2, 3))
    assert type(p) is nn.Parameter and tuple(p.shape) == (2, 3) and p._storage.base == "parameter"
    b = UninitializedBuffer(dtype=engine.float64)
    assert repr(b) == "<UninitializedBuffer>" and not b.requires_grad and b.dtype is engine.float64
    b.materialize(4)
    assert type(b) is engine.Tensor and tuple(b.shape) == (4,) and b.dtype is engine.float64
    assert nn.UninitializedParameter is UninitializedParameter


CONVS = [("LazyConv1d", (4, 3), (2, 6, 9), "Conv1d(6, 4, kernel_size=(3,), stride=(2,), groups=2)", (4, 3, 3)),
         ("LazyConv2d", (4, 3), (2, 6, 7, 7), "Conv2d(6, 4, kernel_size=(3, 3), stride=(2, 2), groups=2)",
          (4, 3, 3, 3)),
         ("LazyConv3d", (4, 2), (1, 6, 4, 4, 4), "Conv3d(6, 4, kernel_size=(2, 2, 2), stride=(2, 2, 2), groups=2)",
          (4, 3, 2, 2, 2)),
         ("LazyConvTranspose1d", (4, 3), (2, 6, 5), "ConvTranspose1d(6, 4, kernel_size=(3,), stride=(2,), groups=2)",
          (6, 2, 3)),
         ("LazyConvTranspose2d", (4, 3), (2, 6, 5, 5),
          "ConvTranspose2d(6, 4, kernel_size=(3, 3), stride=(2, 2), groups=2)", (6, 2, 3, 3)),
         ("LazyConvTranspose3d", (4, 2), (1, 6, 3, 3, 3),
          "ConvTranspose3d(6, 4, kernel_size=(2, 2, 2), stride=(2, 2, 2), groups=2)", (6, 2, 2, 2, 2))]


@pytest.mark.parametrize("name,args,shape,after,wshape", CONVS)
def test_lazy_convolutions(name, args, shape, after, wshape):
    m = getattr(nn, name)(*args, stride=2, groups=2)
    eager_name = after.split("(")[0]
    assert repr(m) == "Lazy" + after.replace("(6, ", "(0, ", 1)
    assert m.cls_to_become is getattr(nn, eager_name)
    x = engine.randn(*shape)
    engine.manual_seed(9)
    y = m(x)
    assert repr(m) == after and type(m) is getattr(nn, eager_name) and tuple(m.weight.shape) == wshape
    engine.manual_seed(9)
    eager = getattr(nn, eager_name)(6, *args, stride=2, groups=2)
    np.testing.assert_array_equal(m.weight.detach().numpy(), eager.weight.detach().numpy())
    np.testing.assert_array_equal(m.bias.detach().numpy(), eager.bias.detach().numpy())
    np.testing.assert_allclose(y.detach().numpy(), eager(x).detach().numpy(), rtol=1e-6)


def test_lazy_convolution_errors():
    assert err(lambda: nn.LazyConv2d(4, 3, groups=2)(engine.randn(1, 5, 5, 5)), ValueError) == (
        "in_channels must be divisible by groups")
    assert err(lambda: nn.LazyConv1d(4, 3)(engine.randn(2, 3, 4, 5)), RuntimeError) == (
        "Expected 2D (unbatched) or 3D (batched) input to LazyConv1d, but got input of size: "
        "torch.Size([2, 3, 4, 5])")
    m = nn.LazyConv1d(4, 3, bias=False)
    assert repr(m) == "LazyConv1d(0, 4, kernel_size=(3,), stride=(1,), bias=False)"
    m(engine.randn(3, 8))                                                    # unbatched: channels first
    assert tuple(m.weight.shape) == (4, 3, 3)


NORMS = [("LazyBatchNorm1d", (4, 3)), ("LazyBatchNorm2d", (2, 3, 2, 2)), ("LazyBatchNorm3d", (2, 3, 2, 2, 2)),
         ("LazyInstanceNorm1d", (2, 3, 4)), ("LazyInstanceNorm2d", (2, 3, 2, 2)),
         ("LazyInstanceNorm3d", (2, 3, 2, 2, 2))]
OPTS = "eps=1e-05, momentum=0.2, affine=True, bias=True, track_running_stats=True)"


@pytest.mark.parametrize("name,shape", NORMS)
def test_lazy_norms(name, shape):
    m = getattr(nn, name)(momentum=0.2)
    eager_name = name[4:]
    assert repr(m) == f"{name}(0, {OPTS}"
    assert list(m.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    assert type(m.running_mean) is UninitializedBuffer and type(m.num_batches_tracked) is engine.Tensor
    x = engine.randn(*shape)
    y = m(x)
    assert repr(m) == f"{eager_name}(3, {OPTS}" and type(m) is getattr(nn, eager_name)
    assert type(m.running_mean) is engine.Tensor
    eager = getattr(nn, eager_name)(3, momentum=0.2, affine=True, track_running_stats=True)
    np.testing.assert_allclose(y.detach().numpy(), eager(x).detach().numpy(), rtol=1e-6)
    for key in ("weight", "bias", "running_mean", "running_var", "num_batches_tracked"):
        np.testing.assert_allclose(m.state_dict()[key].numpy(), eager.state_dict()[key].numpy(), rtol=1e-6)


def test_conversions_before_the_first_forward():
    m = nn.LazyInstanceNorm2d().double()
    assert type(m.running_mean) is UninitializedBuffer and m.running_mean.dtype is engine.float64
    assert type(m.weight) is UninitializedParameter and m.weight.dtype is engine.float64
    m(engine.randn(2, 3, 4, 4, dtype=engine.float64))
    assert type(m) is nn.InstanceNorm2d and m.weight.dtype is engine.float64 and m.running_var.dtype is engine.float64
    assert m.float().weight.dtype is engine.float32                          # InstanceNorm's own .to works too
    b = UninitializedBuffer().to(engine.float64)
    assert type(b) is UninitializedBuffer and b.dtype is engine.float64
    p = UninitializedParameter().double()
    assert type(p) is engine.Tensor and p.dtype is engine.float64 and p.numel() == 0


def test_lazy_norm_without_affine_or_statistics():
    m = nn.LazyBatchNorm1d(affine=False, track_running_stats=False)
    assert repr(m) == ("LazyBatchNorm1d(0, eps=1e-05, momentum=0.1, affine=False, bias=False, "
                       "track_running_stats=False)")
    assert list(m.state_dict()) == [] and not m.has_uninitialized_params()
    m(engine.randn(3, 2))
    assert repr(m) == "BatchNorm1d(0, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)"


def test_load_state_dict_materializes_and_the_forward_switches_the_class():
    src = nn.Linear(2, 3)
    m = nn.LazyLinear(3)
    assert str(m.load_state_dict(src.state_dict())) == "<All keys matched successfully>"
    assert type(m) is nn.LazyLinear and type(m.weight) is nn.Parameter      # as PyTorch: still Lazy...
    np.testing.assert_array_equal(m.weight.detach().numpy(), src.weight.detach().numpy())
    assert repr(m) == "LazyLinear(in_features=0, out_features=3, bias=True)"
    m(engine.randn(1, 2))
    assert type(m) is nn.Linear                                              # ...until its next forward
    np.testing.assert_array_equal(m.weight.detach().numpy(), src.weight.detach().numpy())
    seq = nn.Sequential(nn.LazyLinear(3), nn.ReLU())
    seq.load_state_dict(nn.Sequential(nn.Linear(2, 3), nn.ReLU()).state_dict())
    assert tuple(seq[0].weight.shape) == (3, 2)
    assert err(lambda: nn.Linear(2, 3).load_state_dict(nn.LazyLinear(3).state_dict()), RuntimeError) == SHAPE


def test_deepcopy_before_the_forward_and_the_norm_hooks_refuse_placeholders():
    m = copy.deepcopy(nn.LazyLinear(3))
    assert type(m) is nn.LazyLinear and type(m.weight) is UninitializedParameter
    m(engine.randn(2, 2))
    assert repr(m) == "Linear(in_features=2, out_features=3, bias=True)"
    with pytest.warns(FutureWarning):
        assert err(lambda: nn.utils.weight_norm(nn.LazyLinear(3)), ValueError) == (
            "The module passed to `WeightNorm` can't have uninitialized parameters. Make sure to run the dummy "
            "forward before applying weight normalization")
    assert err(lambda: nn.utils.spectral_norm(nn.LazyLinear(3)), ValueError) == (
        "The module passed to `SpectralNorm` can't have uninitialized parameters. Make sure to run the dummy "
        "forward before applying spectral normalization")


def test_a_model_of_lazy_layers_trains():
    engine.manual_seed(1)
    model = nn.Sequential(nn.LazyConv2d(4, 3), nn.LazyBatchNorm2d(), nn.ReLU(), nn.Flatten(), nn.LazyLinear(2))
    opt = engine.optim.Adam(model.parameters(), lr=0.01)
    x, t = engine.randn(8, 3, 6, 6), engine.randint(0, 2, (8,))
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), t)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert [type(m).__name__ for m in model] == ["Conv2d", "BatchNorm2d", "ReLU", "Flatten", "Linear"]
    assert losses[-1] < losses[0]
    assert [n for n, _ in model.named_parameters()] == ["0.weight", "0.bias", "1.weight", "1.bias", "4.weight",
                                                        "4.bias"]
    assert model[4].weight._gg_name == "4.weight"
