"""In-place ops and views (engine/core/inplace.py; NOTE [ A view's grad_fn after an in-place op ] in
engine/ops/shape/view_history.py): a view made before its base, or another view of it, changed in place gets
its node rebuilt (AsStridedBackward0 over the base's new history), so its gradient flows through the write.

Every expected name, value and gradient below was recorded from PyTorch 2.13.
"""
from __future__ import annotations

import numpy as np
import pytest

import engine as torch

# (in-place op on y, how v = y<view> was taken) -> (v.grad_fn, its next node (PyTorch's name), v's values, x.grad,
# w.grad)
# for: x, w (2, 3) float64 leaves; y = x * 1; v = y<view>; y.<op>; (v * arange(1, n + 1)).sum().backward()
CASES = {
    ('mul_(2)', '[0]'): ('AsStridedBackward0', 'MulBackward0', [1.25, -0.5, 3.0], [[2.0, 4.0, 6.0], [0.0, 0.0, 0.0]], None),
    ('mul_(2)', '[..., :1]'): ('AsStridedBackward0', 'MulBackward0', [[1.25], [0.25]], [[2.0, 0.0, 0.0], [4.0, 0.0, 0.0]], None),
    ('mul_(2)', '.view(-1)'): ('AsStridedBackward0', 'MulBackward0', [1.25, -0.5, 3.0, 0.25, -0.375, 3.25], [[2.0, 4.0, 6.0], [8.0, 10.0, 12.0]], None),
    ('mul_(2)', '.transpose(0, -1)'): ('AsStridedBackward0', 'MulBackward0', [[1.25, 0.25], [-0.5, -0.375], [3.0, 3.25]], [[2.0, 6.0, 10.0], [4.0, 8.0, 12.0]], None),
    ('add_(1)', '[0]'): ('AsStridedBackward0', 'AddBackward0', [1.625, 0.75, 2.5], [[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]], None),
    ('add_(1)', '[..., :1]'): ('AsStridedBackward0', 'AddBackward0', [[1.625], [1.125]], [[1.0, 0.0, 0.0], [2.0, 0.0, 0.0]], None),
    ('add_(1)', '.view(-1)'): ('AsStridedBackward0', 'AddBackward0', [1.625, 0.75, 2.5, 1.125, 0.8125, 2.625], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], None),
    ('add_(1)', '.transpose(0, -1)'): ('AsStridedBackward0', 'AddBackward0', [[1.625, 1.125], [0.75, 0.8125], [2.5, 2.625]], [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]], None),
    ('zero_()', '[0]'): ('AsStridedBackward0', 'ZeroBackward0', [0.0, 0.0, 0.0], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], None),
    ('zero_()', '[..., :1]'): ('AsStridedBackward0', 'ZeroBackward0', [[0.0], [0.0]], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], None),
    ('zero_()', '.view(-1)'): ('AsStridedBackward0', 'ZeroBackward0', [0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], None),
    ('zero_()', '.transpose(0, -1)'): ('AsStridedBackward0', 'ZeroBackward0', [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], None),
    ('copy_(w)', '[0]'): ('AsStridedBackward0', 'torch::autograd::CopyBackwards', [0.5, -0.375, 1.25], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], [[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]),
    ('copy_(w)', '[..., :1]'): ('AsStridedBackward0', 'torch::autograd::CopyBackwards', [[0.5], [-0.5]], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], [[1.0, 0.0, 0.0], [2.0, 0.0, 0.0]]),
    ('copy_(w)', '.view(-1)'): ('AsStridedBackward0', 'torch::autograd::CopyBackwards', [0.5, -0.375, 1.25, -0.5, 0.75, -1.5], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]),
    ('copy_(w)', '.transpose(0, -1)'): ('AsStridedBackward0', 'torch::autograd::CopyBackwards', [[0.5, -0.5], [-0.375, 0.75], [1.25, -1.5]], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]),
    ('clamp_(-0.5, 0.5)', '[0]'): ('AsStridedBackward0', 'ClampBackward1', [0.5, -0.25, 0.5], [[0.0, 2.0, 0.0], [0.0, 0.0, 0.0]], None),
    ('clamp_(-0.5, 0.5)', '[..., :1]'): ('AsStridedBackward0', 'ClampBackward1', [[0.5], [0.125]], [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]], None),
    ('clamp_(-0.5, 0.5)', '.view(-1)'): ('AsStridedBackward0', 'ClampBackward1', [0.5, -0.25, 0.5, 0.125, -0.1875, 0.5], [[0.0, 2.0, 0.0], [4.0, 5.0, 0.0]], None),
    ('clamp_(-0.5, 0.5)', '.transpose(0, -1)'): ('AsStridedBackward0', 'ClampBackward1', [[0.5, 0.125], [-0.25, -0.1875], [0.5, 0.5]], [[0.0, 3.0, 0.0], [2.0, 4.0, 0.0]], None),
    ('relu_()', '[0]'): ('AsStridedBackward0', 'ReluBackward0', [0.625, 0.0, 1.5], [[1.0, 0.0, 3.0], [0.0, 0.0, 0.0]], None),
    ('relu_()', '[..., :1]'): ('AsStridedBackward0', 'ReluBackward0', [[0.625], [0.125]], [[1.0, 0.0, 0.0], [2.0, 0.0, 0.0]], None),
    ('relu_()', '.view(-1)'): ('AsStridedBackward0', 'ReluBackward0', [0.625, 0.0, 1.5, 0.125, 0.0, 1.625], [[1.0, 0.0, 3.0], [4.0, 0.0, 6.0]], None),
    ('relu_()', '.transpose(0, -1)'): ('AsStridedBackward0', 'ReluBackward0', [[0.625, 0.125], [0.0, 0.0], [1.5, 1.625]], [[1.0, 0.0, 5.0], [2.0, 0.0, 6.0]], None),
    ('sigmoid_()', '[0]'): ('AsStridedBackward0', 'SigmoidBackward0', [0.6513548646660542, 0.43782349911420193, 0.8175744761936437], [[0.2270917049419204, 0.4922681654751967, 0.44743935621099856], [0.0, 0.0, 0.0]], None),
    ('sigmoid_()', '[..., :1]'): ('AsStridedBackward0', 'SigmoidBackward0', [[0.6513548646660542], [0.5312093733737563]], [[0.2270917049419204, 0.0, 0.0], [0.49805195002723496, 0.0, 0.0]], None),
    ('sigmoid_()', '.view(-1)'): ('AsStridedBackward0', 'SigmoidBackward0', [0.6513548646660542, 0.43782349911420193, 0.8175744761936437, 0.5312093733737563, 0.45326184801538616, 0.8354835371034369], [[0.2270917049419204, 0.4922681654751967, 0.44743935621099856], [0.9961039000544699, 1.2390777257453156, 0.8247047779954012]], None),
    ('sigmoid_()', '.transpose(0, -1)'): ('AsStridedBackward0', 'SigmoidBackward0', [[0.6513548646660542, 0.5312093733737563], [0.43782349911420193, 0.45326184801538616], [0.8175744761936437, 0.8354835371034369]], [[0.2270917049419204, 0.738402248212795, 0.7457322603516643], [0.49805195002723496, 0.9912621805962526, 0.8247047779954012]], None),
    ('exp_()', '[0]'): ('AsStridedBackward0', 'ExpBackward0', [1.8682459574322223, 0.7788007830714049, 4.4816890703380645], [[1.8682459574322223, 1.5576015661428098, 13.445067211014194], [0.0, 0.0, 0.0]], None),
    ('exp_()', '[..., :1]'): ('AsStridedBackward0', 'ExpBackward0', [[1.8682459574322223], [1.1331484530668263]], [[1.8682459574322223, 0.0, 0.0], [2.2662969061336526, 0.0, 0.0]], None),
    ('exp_()', '.view(-1)'): ('AsStridedBackward0', 'ExpBackward0', [1.8682459574322223, 0.7788007830714049, 4.4816890703380645, 1.1331484530668263, 0.8290291181804004, 5.0784190371800815], [[1.8682459574322223, 1.5576015661428098, 13.445067211014194], [4.532593812267305, 4.145145590902002, 30.47051422308049]], None),
    ('exp_()', '.transpose(0, -1)'): ('AsStridedBackward0', 'ExpBackward0', [[1.8682459574322223, 1.1331484530668263], [0.7788007830714049, 0.8290291181804004], [4.4816890703380645, 5.0784190371800815]], [[1.8682459574322223, 2.3364023492142145, 22.40844535169032], [2.2662969061336526, 3.3161164727216015, 30.47051422308049]], None),
    ('fill_(1.0)', '[0]'): ('AsStridedBackward0', 'FillBackward2', [1.0, 1.0, 1.0], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], None),
    ('fill_(1.0)', '[..., :1]'): ('AsStridedBackward0', 'FillBackward2', [[1.0], [1.0]], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], None),
    ('fill_(1.0)', '.view(-1)'): ('AsStridedBackward0', 'FillBackward2', [1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], None),
    ('fill_(1.0)', '.transpose(0, -1)'): ('AsStridedBackward0', 'FillBackward2', [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], None),
    ('neg_()', '[0]'): ('AsStridedBackward0', 'NegBackward0', [-0.625, 0.25, -1.5], [[-1.0, -2.0, -3.0], [-0.0, -0.0, -0.0]], None),
    ('neg_()', '[..., :1]'): ('AsStridedBackward0', 'NegBackward0', [[-0.625], [-0.125]], [[-1.0, -0.0, -0.0], [-2.0, -0.0, -0.0]], None),
    ('neg_()', '.view(-1)'): ('AsStridedBackward0', 'NegBackward0', [-0.625, 0.25, -1.5, -0.125, 0.1875, -1.625], [[-1.0, -2.0, -3.0], [-4.0, -5.0, -6.0]], None),
    ('neg_()', '.transpose(0, -1)'): ('AsStridedBackward0', 'NegBackward0', [[-0.625, -0.125], [0.25, 0.1875], [-1.5, -1.625]], [[-1.0, -3.0, -5.0], [-2.0, -4.0, -6.0]], None),
    ('sub_(w, alpha=2)', '[0]'): ('AsStridedBackward0', 'SubBackward0', [-0.375, 0.5, -1.0], [[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]], [[-2.0, -4.0, -6.0], [-0.0, -0.0, -0.0]]),
    ('sub_(w, alpha=2)', '[..., :1]'): ('AsStridedBackward0', 'SubBackward0', [[-0.375], [1.125]], [[1.0, 0.0, 0.0], [2.0, 0.0, 0.0]], [[-2.0, -0.0, -0.0], [-4.0, -0.0, -0.0]]),
    ('sub_(w, alpha=2)', '.view(-1)'): ('AsStridedBackward0', 'SubBackward0', [-0.375, 0.5, -1.0, 1.125, -1.6875, 4.625], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[-2.0, -4.0, -6.0], [-8.0, -10.0, -12.0]]),
    ('sub_(w, alpha=2)', '.transpose(0, -1)'): ('AsStridedBackward0', 'SubBackward0', [[-0.375, 1.125], [0.5, -1.6875], [-1.0, 4.625]], [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]], [[-2.0, -6.0, -10.0], [-4.0, -8.0, -12.0]]),
    ('masked_fill_(w > 0, 0.0)', '[0]'): ('AsStridedBackward0', 'MaskedFillBackward0', [0.0, -0.25, 0.0], [[0.0, 2.0, 0.0], [0.0, 0.0, 0.0]], None),
    ('masked_fill_(w > 0, 0.0)', '[..., :1]'): ('AsStridedBackward0', 'MaskedFillBackward0', [[0.0], [0.125]], [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]], None),
    ('masked_fill_(w > 0, 0.0)', '.view(-1)'): ('AsStridedBackward0', 'MaskedFillBackward0', [0.0, -0.25, 0.0, 0.125, 0.0, 1.625], [[0.0, 2.0, 0.0], [4.0, 0.0, 6.0]], None),
    ('masked_fill_(w > 0, 0.0)', '.transpose(0, -1)'): ('AsStridedBackward0', 'MaskedFillBackward0', [[0.0, 0.125], [-0.25, 0.0], [0.0, 1.625]], [[0.0, 3.0, 0.0], [2.0, 0.0, 6.0]], None),
    ('tanh_()', '[0]'): ('AsStridedBackward0', 'TanhBackward0', [0.5545997223493823, -0.24491866240370913, 0.9051482536448664], [[0.6924191479699882, 1.880029697612756, 0.5421199167709458], [0.0, 0.0, 0.0]], None),
    ('tanh_()', '[..., :1]'): ('AsStridedBackward0', 'TanhBackward0', [[0.5545997223493823], [0.12435300177159621]], [[0.6924191479699882, 0.0, 0.0], [1.9690726619007868, 0.0, 0.0]], None),
    ('tanh_()', '.view(-1)'): ('AsStridedBackward0', 'TanhBackward0', [0.5545997223493823, -0.24491866240370913, 0.9051482536448664, 0.12435300177159621, -0.1853331999081395, 0.925346225311741], [[0.6924191479699882, 1.880029697612756, 0.5421199167709458], [3.9381453238015736, 4.828258025059048, 0.8624061798078755]], None),
    ('tanh_()', '.transpose(0, -1)'): ('AsStridedBackward0', 'TanhBackward0', [[0.5545997223493823, 0.12435300177159621], [-0.24491866240370913, -0.1853331999081395], [0.9051482536448664, 0.925346225311741]], [[0.6924191479699882, 2.820044546419134, 0.903533194618243], [1.9690726619007868, 3.8626064200472383, 0.8624061798078755]], None),
    ('div_(2)', '[0]'): ('AsStridedBackward0', 'DivBackward0', [0.3125, -0.125, 0.75], [[0.5, 1.0, 1.5], [0.0, 0.0, 0.0]], None),
    ('div_(2)', '[..., :1]'): ('AsStridedBackward0', 'DivBackward0', [[0.3125], [0.0625]], [[0.5, 0.0, 0.0], [1.0, 0.0, 0.0]], None),
    ('div_(2)', '.view(-1)'): ('AsStridedBackward0', 'DivBackward0', [0.3125, -0.125, 0.75, 0.0625, -0.09375, 0.8125], [[0.5, 1.0, 1.5], [2.0, 2.5, 3.0]], None),
    ('div_(2)', '.transpose(0, -1)'): ('AsStridedBackward0', 'DivBackward0', [[0.3125, 0.0625], [-0.125, -0.09375], [0.75, 0.8125]], [[0.5, 1.5, 2.5], [1.0, 2.0, 3.0]], None),
    ('pow_(2)', '[0]'): ('AsStridedBackward0', 'PowBackward0', [0.390625, 0.0625, 2.25], [[1.25, -1.0, 9.0], [0.0, -0.0, 0.0]], None),
    ('pow_(2)', '[..., :1]'): ('AsStridedBackward0', 'PowBackward0', [[0.390625], [0.015625]], [[1.25, -0.0, 0.0], [0.5, -0.0, 0.0]], None),
    ('pow_(2)', '.view(-1)'): ('AsStridedBackward0', 'PowBackward0', [0.390625, 0.0625, 2.25, 0.015625, 0.03515625, 2.640625], [[1.25, -1.0, 9.0], [1.0, -1.875, 19.5]], None),
    ('pow_(2)', '.transpose(0, -1)'): ('AsStridedBackward0', 'PowBackward0', [[0.390625, 0.015625], [0.0625, 0.03515625], [2.25, 2.640625]], [[1.25, -1.5, 15.0], [0.5, -1.5, 19.5]], None),
    ('__setitem__(0, 1.0)', '[0]'): ('AsStridedBackward0', 'torch::autograd::CopySlices', [1.0, 1.0, 1.0], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], None),
    ('__setitem__(0, 1.0)', '[..., :1]'): ('AsStridedBackward0', 'torch::autograd::CopySlices', [[1.0], [0.125]], [[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]], None),
    ('__setitem__(0, 1.0)', '.view(-1)'): ('AsStridedBackward0', 'torch::autograd::CopySlices', [1.0, 1.0, 1.0, 0.125, -0.1875, 1.625], [[0.0, 0.0, 0.0], [4.0, 5.0, 6.0]], None),
    ('__setitem__(0, 1.0)', '.transpose(0, -1)'): ('AsStridedBackward0', 'torch::autograd::CopySlices', [[1.0, 0.125], [1.0, -0.1875], [1.0, 1.625]], [[0.0, 0.0, 0.0], [2.0, 4.0, 6.0]], None),
}


X = [[0.625, -0.25, 1.5], [0.125, -0.1875, 1.625]]
W = [[0.5, -0.375, 1.25], [-0.5, 0.75, -1.5]]


@pytest.mark.parametrize("op,view", list(CASES), ids=[f"{o}-{v}" for o, v in CASES])
def test_a_view_made_before_an_in_place_op_on_its_base_takes_the_write_into_its_history(op, view):
    name, _, values, xgrad, wgrad = CASES[(op, view)]
    x = torch.tensor(X, dtype=torch.float64, requires_grad=True)
    w = torch.tensor(W, dtype=torch.float64, requires_grad=True)
    y = x * 1      # noqa: F841 (read by the eval'd op, as ``w``)
    v = eval("y" + view)
    eval("y." + op)
    assert v.grad_fn.name() == name
    np.testing.assert_allclose(v.detach().numpy(), values, rtol=1e-12)
    (v * torch.arange(1, v.numel() + 1, dtype=torch.float64).reshape(v.shape)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xgrad, rtol=1e-12)
    assert (w.grad.tolist() if w.grad is not None else None) == wgrad


def test_the_reproducer_of_the_fuzzer():
    x = torch.tensor([-2.75, 0.75], requires_grad=True)
    y = x * 1
    v = y[0]
    y.mul_(2)
    assert v.grad_fn.name() == "AsStridedBackward0"
    assert v.grad_fn.next_functions[0][0] is y.grad_fn and y.grad_fn.name() == "MulBackward0"
    v.backward()
    assert x.grad.tolist() == [2.0, 0.0]


def test_the_rebuilt_node_keeps_pytorchs_attributes_and_is_built_once():
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    y = x * 1
    v = y[1:]
    y.mul_(2)
    g = v.grad_fn
    assert (g._saved_size, g._saved_stride, g._saved_storage_offset) == ((2,), (1,), 1)
    assert v.grad_fn is g and not v.is_leaf and v.requires_grad


def test_a_view_of_a_view_and_a_write_through_another_view():
    x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    y = x * 1
    u = y[0][1]
    y.mul_(2)
    u.backward()
    assert u.grad_fn.name() == "AsStridedBackward0" and x.grad.tolist() == [[0.0, 2.0], [0.0, 0.0]]

    x = torch.tensor([1., 2., 3.], requires_grad=True)
    y = x * 1
    a, b = y[:2], y[1:]
    b.mul_(10)
    a.sum().backward()
    assert a.grad_fn.next_functions[0][0].name() == "torch::autograd::CopySlices" and x.grad.tolist() == [1.0, 10.0, 0.0]


def test_several_writes_and_a_write_through_the_rebuilt_view():
    x = torch.tensor([1., 2., 3., 4.], requires_grad=True)
    y = x * 1
    a, b = y[::2], y[1:3]
    b.mul_(5)
    y.add_(1)
    (a * torch.tensor([1., 10.])).sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 50.0, 0.0]

    x = torch.tensor([1., 2., 3., 4.], requires_grad=True)
    y = x * 1
    a = y[::2]
    y.mul_(3)
    a.mul_(2)
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 3.0, 6.0, 3.0]


def test_a_view_of_a_transposed_base_is_rebased_and_rebuilt():
    """The base's elements are found by storage position, so a base that is not contiguous works too."""
    x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    y = x.t() * 1
    v = y[0]
    y.mul_(2)
    (v * torch.tensor([1., 10.])).sum().backward()
    assert y.stride() == (1, 2) and x.grad.tolist() == [[2.0, 0.0], [20.0, 0.0]]

    x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    y = x.t() * 1
    y[0].mul_(3)
    (y * torch.tensor([[1., 10.], [100., 1000.]])).sum().backward()
    assert x.grad.tolist() == [[3.0, 100.0], [30.0, 1000.0]]


def test_a_write_through_a_view_of_an_empty_tensor():
    x = torch.zeros(2, 0, requires_grad=True)
    y = x * 1
    y[0].mul_(2)
    y.sum().backward()
    assert y.grad_fn.name() == "torch::autograd::CopySlices" and x.grad.shape == (2, 0)


def test_retain_grad_follows_the_view_to_its_new_node():
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    y = x * 1
    v = y[:2]
    v.retain_grad()
    y.mul_(2)
    (v * torch.tensor([1., 10.])).sum().backward()
    assert v.grad.tolist() == [1.0, 10.0]


def test_a_write_without_grad_or_to_a_leaf_and_a_base_that_starts_to_require_grad():
    x = torch.tensor([1., 2., 3., 4.], requires_grad=True)
    y = x * 1
    v = y[2:]
    with torch.no_grad():
        y.mul_(2)
    assert (v.grad_fn.name(), v.grad_fn.next_functions[0][0].name()) == ("AsStridedBackward0", "MulBackward0")

    x = torch.tensor([1., 2.], requires_grad=True)
    v = x[0]
    with torch.no_grad():
        x.mul_(2)
    assert (v.grad_fn.name(), v.grad_fn.next_functions[0][0].name()) == ("AsStridedBackward0", "torch::autograd::AccumulateGrad")

    y = torch.zeros(2)
    v = y[0]
    w = torch.tensor([1., 2.], requires_grad=True)
    y.add_(w)
    (v * 3).backward()
    assert v.grad_fn.name() == "AsStridedBackward0" and w.grad.tolist() == [3.0, 0.0]


def test_an_input_that_views_the_written_tensor_keeps_its_node_in_that_write():
    """Rule 7: PyTorch takes the write's edges before the write (SliceBackward0 here); the view is
    rebuilt afterwards, so its own gradient goes through the write."""
    x = torch.tensor([1., 2., 3., 4.], requires_grad=True)
    y = x * 1
    v = y[2:]
    y[:2] = v
    assert [n[0].name() for n in y.grad_fn.next_functions] == ["MulBackward0", "SliceBackward0"]
    assert v.grad_fn.name() == "AsStridedBackward0"
    (v * torch.tensor([1., 10.])).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0, 10.0]


def test_double_backward_through_a_rebuilt_view():
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    y = x * 1
    v = y[1:]
    y.mul_(x)
    g, = torch.autograd.grad((v * v).sum(), x, create_graph=True)
    assert g.tolist() == [0.0, 32.0, 108.0]
    g.sum().backward()
    assert x.grad.tolist() == [0.0, 48.0, 108.0]


def test_an_in_place_view_op_on_a_view_keeps_its_own_node():
    x = torch.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    y = x * 1
    v = y[:, :1]
    v.t_()
    assert v.grad_fn.name() == "TBackward1" and v._version == 1


UNBIND = ("Output 0 of Unbind is a view and its base or another view of its base has been modified inplace. This "
          "view is the output of a function that returns multiple views. Such functions do not allow the output "
          "views to be modified inplace. You should replace the inplace operation by an out-of-place one.")
NO_GRAD = ("A view was created in no_grad mode and its base or another view of its base has been modified inplace "
           "with grad mode enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You can "
           "clarify your code by moving both the view and the inplace either both inside the no_grad block (if you "
           "don't want the inplace to be tracked) or both outside (if you want the inplace to be tracked).")


def test_pytorchs_refusals_once_grad_mode_is_on():
    x = torch.tensor([1., 2.], requires_grad=True)
    y = x * 1
    a, _ = y.unbind()
    y.mul_(2)
    with torch.no_grad():                 # without grad mode the view keeps its node
        assert (a * 2).item() == 4.0 and a.grad_fn.name() == "UnbindBackward0"
    with pytest.raises(RuntimeError) as e:
        a * 2
    assert str(e.value) == UNBIND

    x = torch.tensor([1., 2.], requires_grad=True)
    y = x * 1
    with torch.no_grad():
        v = y[0]
    y.mul_(2)
    with torch.no_grad():
        assert (v * 2).item() == 4.0
    with pytest.raises(RuntimeError) as e:
        v * 2
    assert str(e.value) == NO_GRAD


def test_views_without_a_graph_are_left_alone():
    y = torch.tensor([1., 2.])
    v = y[0]
    y.mul_(2)
    assert v.grad_fn is None and v.item() == 2.0
    x = torch.tensor([1., 2.], requires_grad=True)
    y = x * 1
    i = y.view(torch.int64)
    y.mul_(2)
    assert i.grad_fn is None and not i.requires_grad


@pytest.mark.parametrize("write,values", [
    ("zero_()", [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]),
    ("fill_(2.0)", [[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]),
    ("__setitem__(0, 5.0)", [[5.0, 5.0, 5.0], [5.0, 5.0, 5.0]]),
    ("__setitem__((0, 1), 5.0)", [[1.0, 5.0, 1.0], [1.0, 5.0, 1.0]]),
    ("masked_fill_(torch.ones(2, 3).bool(), 1.5)", [[1.5, 1.5, 1.5], [1.5, 1.5, 1.5]]),
])
def test_the_writes_pytorch_allows_into_an_expanded_tensor(write, values):
    """fill_, zero_, masked_fill_ and a setitem may write memory that several elements share (NumPy's read-only
    broadcast array is written through a writable alias); other in-place ops are refused (test_tensor.py)."""
    x = torch.ones(1, 3).expand(2, 3)
    eval("x." + write)
    assert x.tolist() == values and x._version == 1
    y = torch.ones(2, 3)
    v = y.expand_as(y)            # an expand that shares nothing: every in-place op may write it
    v.mul_(3)
    assert y.tolist() == [[3.0] * 3] * 2


def test_the_backward_of_a_write_into_shared_memory_is_refused_as_pytorchs():
    """PyTorch's CopySlices writes the view's gradient back through the view: an error when its elements
    share memory."""
    x = torch.tensor([[0.625, 1.625], [-1.125, -0.75]], dtype=torch.float64, requires_grad=True)
    y = (x * 1)[:1].expand(2, 2)
    y.zero_()
    assert y.tolist() == [[0.0, 0.0], [0.0, 0.0]] and y.grad_fn.name() == "AsStridedBackward0"
    with pytest.raises(RuntimeError) as e:
        y.sum().backward()
    assert str(e.value).startswith("unsupported operation: more than one element of the written-to tensor refers")
