"""PyTorch's behaviour at the edges the fuzzer and the gallery found: node names, a Python number's
saved form, a custom Function's edges, storage addresses, autograd.grad through a checkpoint,
contiguity of size-1 dims, log_softmax's float32 backward bits, and DOT quoting.

Values are literals recorded from PyTorch 2.13 (the snippet beside each) or the fixture
``tests/fixtures/fidelity_followups_reference.json`` (recorded by
``tests/fixtures/make_fidelity_followups_reference.py``).
"""
from __future__ import annotations

import json
import os
from types import SimpleNamespace

import numpy as np
import pytest

import engine as torch
from engine.autograd.graph import saved_tensors_hooks
from engine.backend.device import _numpy
from engine.core.fns import array_fns
from engine.ops.nn.activation import _log_softmax_bwd
from engine.utils.checkpoint import checkpoint

F = torch.nn.functional
with open(os.path.join(os.path.dirname(__file__), "..", "fixtures", "fidelity_followups_reference.json")) as _f:
    REF = json.load(_f)


def _bits(t) -> list:
    return t.detach().numpy().view(np.uint32).ravel().tolist()


# ---- 1. AccumulateGrad's name ------------------------------------------------------------------
def test_accumulate_grad_has_pytorchs_name_and_traces_keep_the_short_one():
    """PyTorch: ``acc.name()`` 'torch::autograd::AccumulateGrad', ``type(acc).__name__`` and its repr
    'AccumulateGrad'; an op node's name() is its class name ('MulBackward0')."""
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    with torch.record() as tr:
        y = x * 2
    acc = y.grad_fn.next_functions[0][0]
    assert acc.name() == "torch::autograd::AccumulateGrad" and type(acc).__name__ == "AccumulateGrad"
    assert repr(acc).startswith("<AccumulateGrad object at ") and y.grad_fn.name() == "MulBackward0"
    op = next(e for e in tr.events if e["kind"] == "op")
    leaf = next(e for e in tr.events if e["kind"] == "leaf")
    assert op["node"]["next"][0][2] == "AccumulateGrad" and leaf["name"] == "AccumulateGrad"


# ---- 2. a Python number operand -----------------------------------------------------------------
# recorded: with saved_tensors_hooks(pack, unpack): y = f(x) for x = torch.randn(3, requires_grad=True);
# then getattr(y.grad_fn, "_saved_other") etc.
NUMBER_CASES = {
    "x * 0.5": (lambda x: x * 0.5, "MulBackward0", "other", "float64", 0.5, []),
    "0.5 * x": (lambda x: 0.5 * x, "MulBackward0", "other", "float64", 0.5, []),
    "x / 0.5": (lambda x: x / 0.5, "DivBackward0", "other", "float64", 0.5, []),
    "x * 2": (lambda x: x * 2, "MulBackward0", "other", "int64", 2, []),
    "x / 2": (lambda x: x / 2, "DivBackward0", "other", "int64", 2, []),
    "x * True": (lambda x: x * True, "MulBackward0", "other", "bool", True, []),
    "x.div(0.5, rounding_mode='floor')": (lambda x: x.div(0.5, rounding_mode="floor"), "DivBackward2", "other",
                                          "float64", 0.5, []),
    "0.5 / x": (lambda x: 0.5 / x, "MulBackward0", "other", "float64", 0.5, [((3,), 12)]),
    "x + 0.5": (lambda x: x + 0.5, "AddBackward0", "alpha", None, 1, []),
    "x - 0.5": (lambda x: x - 0.5, "SubBackward0", "alpha", None, 1, []),
    "x ** 0.5": (lambda x: x ** 0.5, "PowBackward0", "exponent", None, 0.5, [((3,), 12)]),
    "0.5 ** x": (lambda x: 0.5 ** x, "PowBackward2", "self", None, 0.5, [((3,), 12), ((3,), 12)]),
}


@pytest.mark.parametrize("case", sorted(NUMBER_CASES))
def test_a_python_number_is_saved_as_pytorch_saves_it(case):
    """PyTorch: a number where the op takes a Tensor (mul, div) is a 0-d wrapped number (float64,
    int64 or bool) that no pack hook sees; a Scalar argument (pow's exponent, add's alpha) is the
    number itself."""
    fn, node, attr, dtype, value, packs = NUMBER_CASES[case]
    x = torch.tensor([0.25, 1.5, 2.0], requires_grad=True)
    packed = []

    def pack(t):
        packed.append((tuple(t.shape), t.numel() * t.element_size()))
        return t

    with saved_tensors_hooks(pack, lambda t: t):
        y = fn(x)
    assert y.grad_fn.name() == node and packed == packs
    saved = getattr(y.grad_fn, "_saved_" + attr)
    if dtype is None:
        assert type(saved) is type(value) and saved == value
    else:
        assert isinstance(saved, torch.Tensor) and saved.shape == () and saved.dtype.name == dtype
        assert saved.item() == value and not saved.requires_grad
    if node in ("MulBackward0", "DivBackward0") and not packs:   # the number counts no saved bytes
        assert y.grad_fn.saved_tensors_info == []


# ---- 3. a custom Function's edges ---------------------------------------------------------------
class _Affine(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, k, b):
        return a * k + b

    @staticmethod
    def backward(ctx, g):
        return g * 3, None, g


class _NumberGrad(_Affine):
    @staticmethod
    def backward(ctx, g):
        return g, 1.0, g


class _TooFew(_Affine):
    @staticmethod
    def backward(ctx, g):
        return g, None


def test_a_custom_functions_edges_are_one_per_tensor_argument():
    """PyTorch: ``_Affine.apply(x, 3, b).grad_fn.next_functions`` has two entries (x's and b's
    AccumulateGrad; ``(None, 0)`` for a tensor that needs no grad); the number gets none."""
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    o = _Affine.apply(x, 3, b)
    nexts = o.grad_fn.next_functions
    assert len(nexts) == 2 and [type(n).__name__ for n, _ in nexts] == ["AccumulateGrad", "AccumulateGrad"]
    assert nexts[0][0].variable is x and nexts[1][0].variable is b
    o.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0] and b.grad.tolist() == [1.0, 1.0]
    assert _Affine.apply(x, 3, torch.tensor([1.0, 1.0])).grad_fn.next_functions[1] == (None, 0)
    assert len(_Affine.apply(x, 3, torch.tensor([1.0, 1.0])).grad_fn.next_functions) == 2


def test_a_custom_functions_gradient_checks_are_pytorchs():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^function _NumberGradBackward returned a gradient different than None "
                                           r"at position 2, but the corresponding forward input was not a Variable$"):
        _NumberGrad.apply(x, 3, b).sum().backward()
    with pytest.raises(RuntimeError, match=r"^function _TooFewBackward returned an incorrect number of gradients "
                                           r"\(expected 3, got 2\)$"):
        _TooFew.apply(x, 3, b).sum().backward()


# ---- 4. storage addresses -----------------------------------------------------------------------
def test_data_ptr_of_a_tensor_its_storage_and_its_views_agree():
    """PyTorch: a tensor's data_ptr() is its untyped_storage()'s (and storage()'s) plus offset *
    itemsize; views share the storage's address; a tensor with no elements reads 0."""
    x = torch.arange(12.0).reshape(3, 4)
    v = x[1:, 2:]
    st = x.untyped_storage()
    assert st.data_ptr() == x.data_ptr() == x.storage().data_ptr() != 0
    assert v.untyped_storage().data_ptr() == st.data_ptr() and v.storage().data_ptr() == st.data_ptr()
    assert v.data_ptr() - x.data_ptr() == v.storage_offset() * v.element_size() == 24
    assert x.t().data_ptr() == x.data_ptr() and x.clone().data_ptr() != x.data_ptr()
    assert torch.zeros(0).data_ptr() == torch.zeros(0).untyped_storage().data_ptr() == 0
    assert torch.zeros(2, 3)[:, 1:1].data_ptr() == 0


# ---- 5. autograd.grad through a non-reentrant checkpoint ---------------------------------------
def test_grad_through_a_checkpoint_stops_at_a_non_leaf_input():
    """PyTorch: autograd.grad(loss, [h, w]) with ``h = x0 * 2`` the checkpoint's input gives the
    fixture's gradients and never runs h's MulBackward0 (its post-hook is not called)."""
    ref = REF["checkpoint"]
    w = torch.tensor([[0.5, -1.25], [0.75, 2.0]], dtype=torch.float64, requires_grad=True)
    x0 = torch.tensor([[0.3, -0.7], [1.1, 0.2]], dtype=torch.float64, requires_grad=True)

    def f(h):
        return torch.tanh(h @ w).sin()

    h = x0 * 2.0
    ran = []
    h.grad_fn.register_hook(lambda gi, go: ran.append("ran"))
    y = checkpoint(f, h, use_reentrant=False)
    gh, gw = torch.autograd.grad((y * y).sum(), [h, w])
    assert bool(ran) is ref["input_node_ran"] is False and x0.grad is None
    np.testing.assert_allclose(gh.numpy(), ref["grad_h"], rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(gw.numpy(), ref["grad_w"], rtol=1e-13, atol=1e-15)
    # and against central differences of the plain function
    base = h.detach().numpy()
    eps = 1e-6
    for i in np.ndindex(base.shape):
        up, down = base.copy(), base.copy()
        up[i] += eps
        down[i] -= eps
        loss = lambda a: float((f(torch.tensor(a)) ** 2).sum())
        assert abs((loss(up) - loss(down)) / (2 * eps) - float(gh[i])) < 1e-8


# ---- 6. contiguity of size-1 dims and empty tensors ---------------------------------------------
def test_is_contiguous_skips_size_one_dims_and_calls_empty_tensors_contiguous():
    """PyTorch's compute_contiguous: walk the dims from the last, skip size-1 dims; numel 0 is contiguous."""
    got = {
        "t of (3,1)": torch.ones(3, 1).t(), "transpose(0,1) of (3,1,2)": torch.ones(3, 1, 2).transpose(0, 1),
        "unsqueeze(1) of t of (2,3)": torch.ones(2, 3).t().unsqueeze(1), "expand (3,1)->(3,4)": torch.ones(3, 1).expand(3, 4),
        "zeros(0,3)": torch.zeros(0, 3), "zeros(0,3).t()": torch.zeros(0, 3).t(), "t of (2,3)": torch.ones(2, 3).t(),
        "column of (4,3)": torch.ones(4, 3)[:, 1:2], "first column of (1,3)": torch.ones(1, 3)[:, :1],
    }
    want = {"t of (3,1)": True, "transpose(0,1) of (3,1,2)": True, "unsqueeze(1) of t of (2,3)": False,
            "expand (3,1)->(3,4)": False, "zeros(0,3)": True, "zeros(0,3).t()": True, "t of (2,3)": False,
            "column of (4,3)": False, "first column of (1,3)": True}
    assert {k: t.is_contiguous() for k, t in got.items()} == want


def test_permute_without_dims_is_pytorchs_type_error():
    """PyTorch: ``x.permute()`` and ``torch.permute(x)`` raise TypeError (its argument parser), even for a
    0-d ``x``; ``x.permute(())`` of a 2-d ``x`` is the RuntimeError about the number of dims."""
    for call in (lambda: torch.ones(2, 3).permute(), lambda: torch.permute(torch.ones(2, 3)),
                 lambda: torch.ones(()).permute()):
        with pytest.raises(TypeError, match=r'^permute\(\) missing 1 required positional arguments: "dims"$'):
            call()
    with pytest.raises(RuntimeError, match=r"input.dim\(\) = 2 is not equal to len\(dims\) = 0"):
        torch.ones(2, 3).permute(())


# ---- 7. log_softmax / cross_entropy float32 backward bits --------------------------------------
def test_cross_entropy_of_bfloat16_logits_has_pytorchs_gradient_bits():
    """examples/programs/mixed_precision.py's case: bf16 logits [0.7265625, 0.734375], target 0, mean
    over 64 rows, cast to float32 first."""
    x = torch.tensor([[0.7265625, 0.734375]], dtype=torch.bfloat16).repeat(64, 1).float().requires_grad_()
    F.cross_entropy(x, torch.zeros(64, dtype=torch.long)).backward()
    assert _bits(x.grad) == REF["mixed_precision_grad_bits"]
    assert _bits(F.cross_entropy(x, torch.zeros(64, dtype=torch.long))) == REF["mixed_precision_loss_bits"]


@pytest.mark.parametrize("k", range(len(REF["nll_loss"])))
def test_nll_loss_sums_in_pytorchs_order(k):
    """The loss and, with class weights, ``total_weight`` (so the gradient ``-w / total_weight``) are
    PyTorch's bits: its cascaded sums, with ignored targets too (NOTE [ nll_loss's cascaded sum ])."""
    c = REF["nll_loss"][k]

    def f32(b, shape):
        return torch.tensor(np.array(b, dtype=np.uint32).view(np.float32).reshape(shape))

    x = f32(c["x"], c["shape"]).requires_grad_()
    w = f32(c["weight"], c["shape"][1:]) if c["weight"] is not None else None
    loss = F.nll_loss(x, torch.tensor(c["target"]), weight=w, ignore_index=c["ignore_index"], reduction=c["reduction"])
    loss.backward()
    assert _bits(loss) == c["loss"] and _bits(x.grad) == c["grad"]


@pytest.mark.parametrize("k", range(len(REF["log_softmax_backward"])))
def test_log_softmax_backward_is_pytorchs_kernel_bit_for_bit(k):
    """PyTorch's ``_log_softmax_backward_data`` on its own log_softmax output and a cross_entropy-like
    gradient, along the last dim and along another."""
    c = REF["log_softmax_backward"][k]

    def arr(key):
        return np.array(c[key], dtype=np.uint32).view(np.float32).reshape(c["shape"])

    got, = _log_softmax_bwd(array_fns(_numpy()), arr("grad"), SimpleNamespace(result=arr("output"), dim=c["dim"]))
    assert got.dtype == np.float32 and got.view(np.uint32).ravel().tolist() == c["grad_input"]


# ---- 8. one DOT quoting rule --------------------------------------------------------------------
def test_both_pictures_quote_dot_text_with_one_function():
    from viz import dot_text, graph_dot, quick_layout
    assert graph_dot._q is quick_layout._q is dot_text.quote
    assert dot_text.quote('a "b"\\c\nd') == '"a \\"b\\"\\\\c\\nd"'
