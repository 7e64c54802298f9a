"""The torch.* reductions and elementwise functions where PyTorch refuses a dtype, an empty dim or an
argument, and their values at the edges (correction >= N, negative integer powers, empty dims), each
recorded from PyTorch 2.13: the same exception type and message, the same values, dtypes and shapes."""
from __future__ import annotations

import math

import pytest

import engine as torch

F = torch.nn.functional
inf, nan = math.inf, math.nan

ERRORS = [
    ('torch.std(torch.tensor([1, 2, 3]))', RuntimeError, 'std and var only support floating point and complex dtypes'),
    ('torch.var(torch.tensor([1, 2, 3]), 0)', RuntimeError, 'std and var only support floating point and complex dtypes'),
    ('torch.var_mean(torch.tensor([1, 2]))', RuntimeError, 'var_mean only support floating point and complex dtypes'),
    ('torch.std_mean(torch.tensor([True, False]))', RuntimeError,
     'std_mean only support floating point and complex dtypes'),
    ('torch.norm(torch.tensor([1, 2, 3]))', RuntimeError,
     'linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long'),
    ('torch.norm(torch.tensor([True]), dim=0)', RuntimeError,
     'linalg.vector_norm: Expected a floating point or complex tensor as input. Got Bool'),
    ('torch.softmax(torch.tensor([1, 2]), 0)', NotImplementedError,
     '"softmax_lastdim_kernel_impl" not implemented for \'Long\''),
    ('F.log_softmax(torch.tensor([[1], [2]]), 0)', NotImplementedError,
     '"log_softmax_kernel_impl" not implemented for \'Long\''),
    ('F.gelu(torch.tensor([1, 2]))', NotImplementedError, '"GeluKernelImpl" not implemented for \'Long\''),
    ('torch.argmax(torch.tensor([True, False]))', RuntimeError, 'argmax(): does not support bool input'),
    ('torch.argmin(torch.tensor([True, False]), 0)', RuntimeError, 'argmin(): does not support bool input'),
    ('torch.median(torch.tensor([True]))', NotImplementedError, '"median_cpu" not implemented for \'Bool\''),
    ('torch.median(torch.tensor([True]), 0)', NotImplementedError, '"median_out" not implemented for \'Bool\''),
    ('torch.nanmedian(torch.tensor([True]), 0)', NotImplementedError, '"median_out" not implemented for \'Bool\''),
    ('torch.kthvalue(torch.tensor([True]), 1)', NotImplementedError, '"kthvalue_cpu" not implemented for \'Bool\''),
    ('torch.topk(torch.tensor([True, False]), 1)', RuntimeError, 'topk does not support bool dtypes on CPU'),
    ('torch.tensor([1, 2]).frac_()', NotImplementedError, '"frac_cpu" not implemented for \'Long\''),
    ('torch.tensor([True]) ** torch.tensor([False])', NotImplementedError, '"pow" not implemented for \'Bool\''),
    ('torch.hypot(torch.tensor([3]), torch.tensor([4]))', NotImplementedError, '"hypot_cpu" not implemented for \'Long\''),
    ('torch.logaddexp(torch.tensor([True]), torch.tensor([False]))', NotImplementedError,
     '"logaddexp_cpu" not implemented for \'Bool\''),
    ('torch.argmax(torch.zeros(0), 0)', IndexError, 'argmax(): Expected reduction dim 0 to have non-zero size.'),
    ('torch.argmax(torch.zeros(0))', IndexError,
     'argmax(): Expected reduction dim to be specified for input.numel() == 0.'),
    ('torch.max(torch.zeros(2, 0), 1)', IndexError, 'max(): Expected reduction dim 1 to have non-zero size.'),
    ('torch.zeros(0, 2).min(0)', IndexError, 'min(): Expected reduction dim 0 to have non-zero size.'),
    ('torch.amax(torch.zeros(2, 0), -1)', IndexError, 'amax(): Expected reduction dim -1 to have non-zero size.'),
    ('torch.amin(torch.zeros(0))', RuntimeError, ("amin(): Expected reduction dim to be specified for "
                                                   "input.numel() == 0. Specify the reduction dim with the 'dim' argument.")),
    ('torch.aminmax(torch.zeros(0, 2), dim=0)', IndexError, 'aminmax: Expected reduction dim 0 to have non-zero size.'),
    ('torch.kthvalue(torch.zeros(2, 0), 1, 1)', IndexError, 'kthvalue(): Expected reduction dim 1 to have non-zero size.'),
    ('torch.zeros(2, 0).argmin(-1)', IndexError, 'argmin(): Expected reduction dim 1 to have non-zero size.'),
    ('torch.count_nonzero(torch.ones(2), 0, keepdim=True)', TypeError, ('count_nonzero() received an invalid '
     'combination of arguments - got (Tensor, int, keepdim=bool), but expected one of:')),
    ('torch.ones(2).aminmax(0)', TypeError, 'aminmax() takes 0 positional arguments but 1 was given'),
    ('torch.tensor([[-1, 1, 0]]).logcumsumexp(-3)', IndexError,
     'Dimension out of range (expected to be in range of [-2, 1], but got -3)'),
    ('torch.maximum(torch.tensor([1.0]), 2)', TypeError, "maximum(): argument 'other' (position 2) must be Tensor, not int"),
    ('torch.minimum(2, torch.tensor([1.0]))', TypeError, "minimum(): argument 'input' (position 1) must be Tensor, not int"),
    ("torch.div(torch.tensor([True]), torch.tensor(False), rounding_mode='floor')", NotImplementedError,
     '"div_floor_cpu" not implemented for \'Bool\''),
    ("torch.div(torch.tensor([True]), torch.tensor(True), rounding_mode='trunc')", NotImplementedError,
     '"div_trunc_cpu" not implemented for \'Bool\''),
    ('torch.tensor([-1, 0, 1, -2]) ** torch.tensor([-1, 0])', RuntimeError,
     'The size of tensor a (4) must match the size of tensor b (2) at non-singleton dimension 0'),
    ('torch.bitwise_and(torch.ones(4), torch.ones(2))', RuntimeError,
     'The size of tensor a (4) must match the size of tensor b (2) at non-singleton dimension 0'),
    ('torch.copysign(2.0, torch.ones(2))', TypeError,
     'copysign() received an invalid combination of arguments - got (float, Tensor), but expected one of:'),
]

VALUES = [
    ('torch.std(torch.tensor([-2.75, 0.75]), correction=2)', inf, 'float32', []),
    ('torch.var(torch.tensor([[1.0, 2.0], [4.0, 4.0]]), 1, correction=2)', [inf, nan], 'float32', [2]),
    ('torch.var_mean(torch.tensor([-2.75, 0.75]), correction=3)[0]', inf, 'float32', []),
    ('torch.pow(2, torch.tensor([-1, 0, 3]))', [0, 1, 8], 'int64', [3]),
    ('torch.pow(torch.tensor([2, -1, 1, 0, -1]), torch.tensor([-1, -1, -2, -3, -2]))', [0, -1, 1, 0, 1], 'int64', [5]),
    ('torch.hypot(torch.tensor([3, 4]), torch.tensor([4.0, 3.0]))', [5.0, 5.0], 'float32', [2]),
    ('torch.logaddexp(torch.tensor([True, False]), torch.tensor([0.5, 0.5]))', [1.4740769863128662, 0.9740769863128662],
     'float32', [2]),
    ('torch.erfinv(torch.tensor(0.25, dtype=torch.float64))', 0.2253120550121781, 'float64', []),
    ('torch.logsumexp(torch.zeros(2, 0), 1)', [-inf, -inf], 'float32', [2]),
    ('torch.softmax(torch.zeros(2, 0), 1)', [[], []], 'float32', [2, 0]),
    ('torch.amax(torch.zeros(0, 3), 1)', [], 'float32', [0]),
    ('torch.aminmax(torch.zeros(2, 0), dim=0)[0]', [], 'float32', [0]),
    ('torch.zeros(0, 2).min(1)[0]', [], 'float32', [0]),
    ('True % torch.tensor([2, 3])', [1, 1], 'int64', [2]),
    ('torch.sign(torch.tensor([True, False]))', [True, False], 'bool', [2]),
    ('True % torch.tensor([2.0, 3.0])', [1.0, 1.0], 'float32', [2]),
    ('torch.softmax(torch.zeros(0, dtype=torch.int32), 0)', [], 'int32', [0]),
    ('F.log_softmax(torch.zeros(0, 2, dtype=torch.long), 0)', [], 'int64', [0, 2]),
    ('F.softmin(torch.zeros(0, dtype=torch.long), 0)', [], 'int64', [0]),
    ('torch.mode(torch.tensor([1.0]), -1)[1]', 0, 'int64', []),
    ("torch.div(torch.tensor([1, -1, -3], dtype=torch.int32), 3, rounding_mode='floor')", [0, -1, -1], 'int32', [3]),
    ("torch.div(torch.tensor([1, -1, -3], dtype=torch.int32), 2, rounding_mode='trunc')", [0, 0, -1], 'int32', [3]),
]


@pytest.mark.parametrize("code, exc, message", ERRORS)
def test_pytorchs_refusals_in_its_words(code, exc, message):
    with pytest.raises(exc) as e:
        eval(code)
    assert str(e.value).splitlines()[0] == message


def _same(a, b):
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return (math.isnan(a) and math.isnan(b)) if isinstance(a, float) and math.isnan(a) else a == pytest.approx(b)


@pytest.mark.parametrize("code, value, dtype, shape", VALUES)
def test_values_at_the_edges_are_pytorchs(code, value, dtype, shape):
    with pytest.warns(UserWarning) if "correction" in code else _nothing():
        out = eval(code)
    assert list(out.shape) == shape and out.dtype.name == dtype
    assert _same(value, out.tolist())


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_atan2_has_a_zero_gradient_at_the_origin():
    """Recorded from PyTorch 2.13: (0, 0) gives 0 and -0, not 0/0 (found by tools/fuzz)."""
    a = torch.tensor([0.0, 1.0, 0.0], requires_grad=True)
    b = torch.tensor([0.0, 0.0, 2.0], requires_grad=True)
    torch.atan2(a, b).sum().backward()
    assert a.grad.tolist() == [0.0, 0.0, 0.5] and b.grad.tolist() == [-0.0, -1.0, -0.0]


def test_diff_of_order_zero_is_a_copy():
    """As PyTorch: a new tensor through copy_ (CopyBackwards), prepend and append left unread."""
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.diff(x * 1, 0, prepend=torch.tensor([0.0]))
    assert y.grad_fn.name() == "torch::autograd::CopyBackwards" and y.tolist() == [1.0, 2.0]
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_median_of_an_empty_tensor_is_nan_with_an_empty_gradient():
    """PyTorch 2.13: tensor(nan, grad_fn=<MedianBackward0>), and x.grad is an empty tensor."""
    import warnings
    for name, node in (("median", "MedianBackward0"), ("nanmedian", "NanmedianBackward0")):
        x = torch.zeros(1, 0, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = getattr(x, name)()
            r.backward()
        assert r.isnan().item() and r.grad_fn.name() == node and tuple(x.grad.shape) == (1, 0)


def test_layer_norm_over_an_empty_shape_has_an_empty_gradient():
    x = torch.zeros(2, 0, requires_grad=True)
    torch.nn.functional.layer_norm(x, [0]).sum().backward()
    assert tuple(x.grad.shape) == (2, 0)


def test_a_p_norm_of_a_0d_tensor_along_dim_0():
    """PyTorch 2.13: tensor(0.75) and a gradient of -1 for x = -0.75, p = 3."""
    x = torch.tensor(-0.75, dtype=torch.float64, requires_grad=True)
    r = x.norm(dim=0, p=3)
    r.backward()
    assert abs(r.item() - 0.75) < 1e-12 and abs(x.grad.item() + 1.0) < 1e-12


def test_var_and_std_gradients_with_no_degrees_of_freedom_left_are_pytorchs():
    """PyTorch 2.13 (recorded): with correction >= n the gradient is NaN where x equals the mean and
    inf elsewhere for var; NaN for std; var_mean adds the mean's part."""
    import math
    import warnings
    expect = {("var", 1, 2): [math.nan], ("var", 2, 2): [math.inf, math.inf], ("var", 2, 3): [math.inf, math.inf],
              ("std", 2, 2): [math.nan, math.nan], ("var", 2, 1): [-1.0, 1.0]}
    for (f, n, corr), want in expect.items():
        x = torch.arange(1.0, n + 1, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            getattr(torch, f)(x, correction=corr).backward()
        got = x.grad.tolist()
        assert all((math.isnan(a) and math.isnan(b)) or a == b for a, b in zip(got, want)), (f, n, corr, got)
    x = torch.arange(1.0, 3.0, requires_grad=True)
    v, m = torch.var_mean(x, correction=1)
    (v + m).backward()
    assert x.grad.tolist() == [-0.5, 1.5]


def test_a_matmul_with_one_inner_element_keeps_the_sign_of_zero():
    """PyTorch 2.13 (recorded): 0 * -0.375 is -0.0 in x @ W with K = 1, so sqrt's gradient there is
    -inf and x.grad reads [inf, nan, nan]."""
    x = torch.tensor([[0.0], [1.5], [0.75]], requires_grad=True)
    w = torch.tensor([[0.25, 0.5, -0.375]], requires_grad=True)
    h = x @ w
    assert math.copysign(1.0, h[0, 2].item()) == -1.0
    (h.sqrt().sum() + x.mean()).backward()
    g = x.grad.flatten().tolist()
    assert g[0] == math.inf and math.isnan(g[1]) and math.isnan(g[2])


def test_var_along_a_dim_with_no_degrees_of_freedom_keeps_the_dim_formula():
    """PyTorch 2.13 (recorded): along a dim the formula stays 2 (x - mean) / (n - correction), inf at
    n == correction and negative past it; only the all-dims reduction gives NaN/inf."""
    t = torch.tensor([[1.0, 2.0]], dtype=torch.float64, requires_grad=True)
    t.var(dim=-1, correction=3).sum().backward()
    assert t.grad.tolist() == [[1.0, -1.0]]
    t = torch.tensor([[1.0, 2.0]], dtype=torch.float64, requires_grad=True)
    t.var(dim=-1, correction=2).sum().backward()
    assert t.grad.tolist() == [[-math.inf, math.inf]]
