"""Finite-difference checks (float64) of every differentiable op and composite.

Each case builds float64 leaves and checks autograd's gradient against central
differences (tests/checks.py). Elementwise and broadcasting ops draw their
shapes from hypothesis; the rest use fixed small shapes that exercise strides,
repeats and broadcasting. A representative set is checked to second order.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import engine
import engine.nn.functional as F
from tests.checks import f64, gradcheck, gradgradcheck

SETTINGS = settings(max_examples=12, deadline=None, derandomize=True)


def leaf(a, requires_grad=True):
    return engine.tensor(np.asarray(a, dtype=np.float64), dtype=engine.float64, requires_grad=requires_grad)


def away_from(a, points, gap=0.1):
    """Push values at least ``gap`` away from each kink in ``points``."""
    a = np.array(a, dtype=np.float64)
    for p in points:
        near = np.abs(a - p) < gap
        a[near] = p + np.where(a[near] >= p, gap, -gap)
    return a


# ---- elementwise binary ops with hypothesis-drawn broadcasting shapes -----------------------
BIN_SHAPES = mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=1, max_side=3)


def _pair(shapes, seed, positive=(False, False)):
    rng = np.random.default_rng(seed)
    out = []
    for shape, pos in zip(shapes.input_shapes, positive):
        a = rng.standard_normal(shape)
        out.append(leaf(np.abs(a) + 0.5 if pos else a))
    return out


BINARY = {
    "add": (lambda a, b: a + b, (False, False)),
    "add_alpha": (lambda a, b: engine.add(a, b, alpha=2.5), (False, False)),
    "sub": (lambda a, b: a - b, (False, False)),
    "sub_alpha": (lambda a, b: engine.sub(a, b, alpha=-0.5), (False, False)),
    "mul": (lambda a, b: a * b, (False, False)),
    "div": (lambda a, b: a / b, (False, True)),
    "pow_tensor": (lambda a, b: a ** b, (True, False)),
    "maximum": (engine.maximum, (False, False)),
    "minimum": (engine.minimum, (False, False)),
}


@pytest.mark.parametrize("name", sorted(BINARY))
@SETTINGS
@given(shapes=BIN_SHAPES, seed=st.integers(0, 2**16))
def test_binary_broadcasting(name, shapes, seed):
    fn, positive = BINARY[name]
    a, b = _pair(shapes, seed, positive)
    gradcheck(fn, [a, b])


@SETTINGS
@given(shapes=mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3, max_side=3),
       seed=st.integers(0, 2**16))
def test_where_broadcasting(shapes, seed):
    rng = np.random.default_rng(seed)
    cs, xs, ys = shapes.input_shapes
    cond = engine.tensor(rng.random(cs) > 0.5)
    x, y = leaf(rng.standard_normal(xs)), leaf(rng.standard_normal(ys))
    gradcheck(lambda x, y: engine.where(cond, x, y), [x, y])


@pytest.mark.parametrize("which", ["first", "second"])
def test_binary_one_side_requires_grad(which):
    a = f64(3, 4, requires_grad=which == "first")
    b = f64(4, low=0.5, requires_grad=which == "second")
    for fn in (lambda a, b: a * b, lambda a, b: a / b, lambda a, b: a - b, lambda a, b: engine.maximum(a, b)):
        gradcheck(fn, [a, b])


@pytest.mark.parametrize("scalar_first", [False, True])
def test_binary_with_python_scalars(scalar_first):
    x = f64(2, 3, low=0.5)
    fns = [lambda x: 2.0 - x, lambda x: 3.0 / x, lambda x: 2.0 ** x, lambda x: 1.5 * x + 1] if scalar_first \
        else [lambda x: x - 2.0, lambda x: x / 3.0, lambda x: x ** 2.5, lambda x: x * 1.5 + 1]
    for fn in fns:
        gradcheck(fn, [x])


def test_maximum_minimum_ties_split_gradient():
    a = leaf([1.0, 2.0, 3.0])
    b = leaf([1.0, 0.0, 5.0])
    engine.maximum(a, b).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [0.5, 1.0, 0.0])
    np.testing.assert_allclose(b.grad.numpy(), [0.5, 0.0, 1.0])


# ---- elementwise unary ops ----------------------------------------------------------------
UNARY = {
    "neg": (lambda x: -x, None),
    "exp": (engine.exp, None),
    "log": (engine.log, "positive"),
    "sqrt": (engine.sqrt, "positive"),
    "rsqrt": (engine.rsqrt, "positive"),
    "reciprocal": (engine.reciprocal, "positive"),
    "abs": (engine.abs, [0.0]),
    "sin": (engine.sin, None),
    "cos": (engine.cos, None),
    "tanh": (engine.tanh, None),
    "sigmoid": (engine.sigmoid, None),
    "relu": (engine.relu, [0.0]),
    "F.relu": (F.relu, [0.0]),
    "gelu": (F.gelu, None),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), None),
    "erf": (engine.erf, None),
    "clamp": (lambda x: engine.clamp(x, min=-0.5, max=0.7), [-0.5, 0.7]),
    "clamp_min": (lambda x: engine.clamp(x, min=0.2), [0.2]),
    "clamp_max": (lambda x: x.clamp(max=-0.1), [-0.1]),
    "clamp_tensor_bounds": (lambda x: engine.clamp(x, min=leaf([-0.3, 0.0, 0.3], False)), [-0.3, 0.0, 0.3]),
    "pow2": (lambda x: x ** 2, None),
    "pow3": (lambda x: engine.pow(x, 3), None),
    "pow_half": (lambda x: x ** 0.5, "positive"),
    "pow_neg": (lambda x: x ** -1.5, "positive"),
    "pow0": (lambda x: x ** 0, None),
    "square": (engine.square, None),
    "sign_times_x": (lambda x: engine.sign(x) * x, [0.0]),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@settings(max_examples=5, deadline=None, derandomize=True)
@given(shape=st.sampled_from([(), (3,), (2, 3), (2, 1, 3)]), seed=st.integers(0, 2**16))
def test_unary(name, shape, seed):
    fn, domain = UNARY[name]
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if name == "clamp_tensor_bounds":
        a = rng.standard_normal((2, 3))
    if domain == "positive":
        a = np.abs(a) + 0.3
    elif domain:
        a = away_from(a, domain)
    gradcheck(fn, [leaf(a)])


# ---- reductions ---------------------------------------------------------------------------
def distinct(*shape, seed=0):
    """Values with no ties (max/min gradients are unambiguous)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    return leaf((rng.permutation(n) * 0.37 - 1.0).reshape(shape))


REDUCTIONS = {
    "sum_all": lambda x: x.sum(),
    "sum_dim": lambda x: x.sum(1),
    "sum_dim_neg_keepdim": lambda x: x.sum(-1, keepdim=True),
    "sum_dims": lambda x: engine.sum(x, (0, 2)),
    "mean_all": lambda x: x.mean(),
    "mean_dim": lambda x: x.mean(dim=0),
    "mean_dims_keepdim": lambda x: x.mean((1, 2), keepdim=True),
    "var_all": lambda x: x.var(),
    "var_dim": lambda x: x.var(1),
    "var_dim_biased_keepdim": lambda x: x.var(2, unbiased=False, keepdim=True),
    "var_correction0": lambda x: engine.var(x, (0, 1), correction=0),
    "std_all": lambda x: x.std(),
    "std_dim": lambda x: engine.std(x, dim=-1),
    "max_all": lambda x: x.max(),
    "min_all": lambda x: engine.min(x),
    "max_dim": lambda x: x.max(dim=1).values,
    "max_dim_keepdim": lambda x: engine.max(x, 2, keepdim=True)[0],
    "min_dim": lambda x: x.min(dim=0).values,
    "min_dim_neg_keepdim": lambda x: x.min(-1, keepdim=True).values,
    "amax": lambda x: engine.amax(x, 1),
    "amin_keepdim": lambda x: x.amin((0, 2), keepdim=True),
    "logsumexp": lambda x: engine.logsumexp(x, 1),
    "logsumexp_keepdim": lambda x: x.logsumexp(-1, keepdim=True),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions(name):
    gradcheck(REDUCTIONS[name], [distinct(2, 3, 4)])


def test_max_all_ties_share_gradient_evenly():
    x = leaf([1.0, 3.0, 3.0, 0.0])
    x.max().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.5, 0.5, 0.0])


def test_max_dim_returns_int64_indices():
    x = distinct(3, 4)
    v, i = x.max(1)
    assert i.dtype is engine.int64 and not i.requires_grad
    np.testing.assert_array_equal(i.numpy(), np.argmax(x.detach().numpy(), 1))


# ---- shape and view ops -------------------------------------------------------------------
SHAPE_OPS = {
    "reshape": lambda x: x.reshape(4, 6),
    "reshape_infer": lambda x: engine.reshape(x, (-1, 3)),
    "reshape_noncontig": lambda x: x.transpose(0, 2).reshape(-1),
    "view": lambda x: x.view(6, 4),
    "flatten": lambda x: x.flatten(1),
    "transpose": lambda x: x.transpose(0, 2),
    "transpose_neg": lambda x: engine.transpose(x, -1, -2),
    "permute": lambda x: x.permute(2, 0, 1),
    "T": lambda x: x.T,
    "mT": lambda x: x.mT,
    "t": lambda x: x[0].t(),
    "squeeze_dim": lambda x: x[:, :1].squeeze(1),
    "squeeze_all": lambda x: x[:1, :, :1].squeeze(),
    "unsqueeze": lambda x: x.unsqueeze(1),
    "unsqueeze_neg": lambda x: x.unsqueeze(-1),
    "expand": lambda x: x[:, :1].expand(2, 3, 4) * 1.0,
    "expand_new_dims": lambda x: x[0, 0].expand(3, 2, 4),
    "expand_minus_one": lambda x: x[:, :, :1].expand(-1, -1, 5),
    "slice_basic": lambda x: x[1:, ::2],
    "slice_int": lambda x: x[1, 2],
    "slice_negative": lambda x: x[-1, :, -2:],
    "slice_ellipsis_none": lambda x: x[..., None, 1:3],
    "slice_step": lambda x: x[:, ::2, 1::2],
    "index_repeated": lambda x: x[engine.tensor([0, 1, 1, 0, 1])],
    "index_list": lambda x: x[:, [2, 2, 0]],
    "index_two_arrays": lambda x: x[engine.tensor([0, 1, 1]), engine.tensor([2, 2, 0])],
    "index_2d_index": lambda x: x[1][engine.tensor([[0, 2], [2, 2]])],
    "index_bool_mask": lambda x: x[x.detach() > 0],
    "index_bool_rows": lambda x: x[engine.tensor([True, False])],
    "narrow": lambda x: x.narrow(2, 1, 2),
    "split": lambda x: engine.split(x, 2, dim=2),
    "split_sizes": lambda x: x.split([1, 2], dim=1),
    "chunk": lambda x: x.chunk(3, 1),
    "unbind": lambda x: x.unbind(0),
    "index_select": lambda x: x.index_select(2, engine.tensor([3, 0, 3])),
    "flip": lambda x: x.flip(1),
    "masked_fill": lambda x: x.masked_fill(x.detach() > 0.5, 0.0),
    "clone": lambda x: x.clone(),
    "contiguous": lambda x: x.transpose(0, 1).contiguous(),
}


@pytest.mark.parametrize("name", sorted(SHAPE_OPS))
def test_shape_and_index_ops(name):
    gradcheck(SHAPE_OPS[name], [distinct(2, 3, 4)])


def test_index_repeated_indices_accumulate():
    x = leaf(np.arange(3.0))
    x[engine.tensor([2, 0, 2, 2])].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 0.0, 3.0])


def _setitem(x, key, value):
    y = x * 1.0
    y[key] = value
    return y


SETITEM = {
    "tensor_row": lambda x, v: _setitem(x, 0, v),
    "slice_broadcast": lambda x, v: _setitem(x, (slice(None), slice(1, 3)), v[:2]),
    "scalar": lambda x, v: _setitem(x, (1, slice(None)), 2.5) * v,
    "index_tensor": lambda x, v: _setitem(x, engine.tensor([2, 0]), v),
    "bool_mask": lambda x, v: _setitem(x, x.detach() > 0, 0.0) + v,
}


@pytest.mark.parametrize("name", sorted(SETITEM))
def test_setitem(name):
    gradcheck(SETITEM[name], [distinct(3, 4), f64(4)])


def test_cat_stack():
    a, b, c = f64(2, 3), f64(2, 1), f64(2, 3, seed=5)
    gradcheck(lambda a, b: engine.cat([a, b], dim=1), [a, b])
    gradcheck(lambda a, c: engine.cat([a, c, a]), [a, c])
    gradcheck(lambda a, c: engine.stack([a, c], dim=1), [a, c])
    gradcheck(lambda a, c: engine.stack([a, c, a], dim=-1), [a, c])


def test_cat_with_one_input_not_requiring_grad():
    a, b = f64(2, 3), f64(4, 3, requires_grad=False)
    gradcheck(lambda a, b: engine.cat([b, a, b]), [a, b])


# ---- linear algebra -----------------------------------------------------------------------
MATMUL = {
    "dot": ((4,), (4,)),
    "mv": ((3, 4), (4,)),
    "mm": ((3, 4), (4, 2)),
    "vec_mat": ((4,), (4, 2)),
    "vec_batched": ((4,), (2, 4, 3)),
    "batched_vec": ((2, 3, 4), (4,)),
    "bmm": ((2, 3, 4), (2, 4, 2)),
    "batched_broadcast": ((2, 1, 3, 4), (3, 4, 2)),
    "batched_2d": ((2, 3, 4), (4, 2)),
    "2d_batched": ((3, 4), (2, 4, 2)),
}


@pytest.mark.parametrize("name", sorted(MATMUL))
@pytest.mark.parametrize("needs", [(True, True), (True, False), (False, True)])
def test_matmul(name, needs):
    sa, sb = MATMUL[name]
    a, b = f64(*sa, seed=1, requires_grad=needs[0]), f64(*sb, seed=2, requires_grad=needs[1])
    gradcheck(lambda a, b: a @ b, [a, b])


def test_named_linear_algebra_functions():
    gradcheck(engine.dot, [f64(3), f64(3, seed=4)])
    gradcheck(engine.mm, [f64(2, 3), f64(3, 4)])
    gradcheck(engine.mv, [f64(2, 3), f64(3)])
    gradcheck(engine.bmm, [f64(2, 2, 3), f64(2, 3, 1)])
    gradcheck(engine.outer, [f64(2), f64(3)])
    gradcheck(engine.addmm, [f64(4), f64(3, 2), f64(2, 4)])
    gradcheck(engine.addmm, [f64(3, 4), f64(3, 2), f64(2, 4)])
    gradcheck(lambda c, a, b: engine.addmm(c, a, b, beta=0.5, alpha=2.0), [f64(1, 4), f64(3, 2), f64(2, 4)])


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 4), (4,)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear(shape, bias):
    x, w = f64(*shape, seed=1), f64(5, 4, seed=2)
    args = [x, w] + ([f64(5, seed=3)] if bias else [])
    gradcheck(F.linear, args)


# ---- neural-network functions -------------------------------------------------------------
def test_softmax_family():
    x = f64(2, 3, 4)
    for d in (0, 1, -1):
        gradcheck(lambda x: F.softmax(x, dim=d), [x])
        gradcheck(lambda x: F.log_softmax(x, dim=d), [x])
    gradcheck(lambda x: x.softmax(-1), [x])
    gradcheck(lambda x: engine.softmax(x, 1), [x])


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("normalized", [(4,), (3, 4)])
def test_layer_norm(affine, normalized):
    x = f64(2, 3, 4)
    if affine:
        w, b = f64(*normalized, seed=3), f64(*normalized, seed=4)
        gradcheck(lambda x, w, b: F.layer_norm(x, normalized, w, b), [x, w, b])
    else:
        gradcheck(lambda x: F.layer_norm(x, normalized, eps=1e-3), [x])


def test_dropout_fixed_seed():
    x = f64(4, 5)

    def fn(x):
        engine.manual_seed(7)
        return F.dropout(x, p=0.4, training=True)

    gradcheck(fn, [x])
    kept = fn(x).detach().numpy() != 0
    assert 0 < kept.sum() < kept.size
    gradcheck(lambda x: F.dropout(x, 0.4, training=False), [x])


def test_embedding_repeated_indices():
    w = f64(5, 3)
    idx = engine.tensor([[0, 2, 2], [4, 2, 0]])
    gradcheck(lambda w: F.embedding(idx, w), [w])
    F.embedding(idx, w).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy()[:, 0], [2.0, 0.0, 3.0, 0.0, 1.0])
    w.grad = None
    F.embedding(idx, w, padding_idx=2).sum().backward()  # the padding row gets no gradient
    np.testing.assert_array_equal(w.grad.numpy()[:, 1], [2.0, 0.0, 0.0, 0.0, 1.0])


@pytest.mark.parametrize("stride,padding,dilation", [(1, 0, 1), (2, 1, 1), (1, 2, 2), ((2, 1), (0, 1), (1, 2))])
def test_conv2d(stride, padding, dilation):
    x, w, b = f64(2, 2, 5, 6, seed=1), f64(3, 2, 3, 2, seed=2), f64(3, seed=3)
    gradcheck(lambda x, w, b: F.conv2d(x, w, b, stride=stride, padding=padding, dilation=dilation), [x, w, b])


def test_conv2d_without_bias_same_padding():
    x, w = f64(1, 2, 4, 4, seed=1), f64(2, 2, 3, 3, seed=2)
    gradcheck(lambda x, w: F.conv2d(x, w, padding="same"), [x, w])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_and_cross_entropy(reduction):
    x = f64(4, 5)
    t = engine.tensor([0, 3, 3, 4])
    gradcheck(lambda x: F.nll_loss(F.log_softmax(x, 1), t, reduction=reduction), [x])
    gradcheck(lambda x: F.cross_entropy(x, t, reduction=reduction), [x])
    t_ign = engine.tensor([0, -100, 3, 1])
    gradcheck(lambda x: F.cross_entropy(x, t_ign, reduction=reduction), [x])
    gradcheck(lambda x: F.cross_entropy(x, engine.tensor([0, 2, 2, 1]), ignore_index=2, reduction=reduction), [x])


def test_cross_entropy_nchw():
    x = f64(2, 3, 2, 2)
    t = engine.tensor([[[0, 2], [1, 1]], [[2, 2], [0, 1]]])
    gradcheck(lambda x: F.cross_entropy(x, t), [x])
    gradcheck(lambda x: F.cross_entropy(x, t, reduction="sum"), [x])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss(reduction):
    gradcheck(lambda a, b: F.mse_loss(a, b, reduction=reduction), [f64(3, 4), f64(3, 4, seed=9)])


def test_scaled_dot_product_attention_composite():
    q, k, v = f64(2, 3, 4, seed=1), f64(2, 5, 4, seed=2), f64(2, 5, 4, seed=3)
    gradcheck(F.scaled_dot_product_attention, [q, k, v])
    q2 = f64(2, 3, 4, seed=4)
    gradcheck(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), [q2, f64(2, 3, 4, seed=5), f64(2, 3, 4, seed=6)])


def test_to_dtype_gradient_flows_back_in_input_dtype():
    x = f64(3)
    y = x.float() * 2
    assert y.dtype is engine.float32 and y.grad_fn.name() == "MulBackward0"
    assert y.grad_fn.next_functions[0][0].name() == "ToCopyBackward0"
    y.sum().backward()
    assert x.grad.dtype is engine.float64
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])


# ---- second order -------------------------------------------------------------------------
GRADGRAD = {
    "exp": (engine.exp, [f64(2, 3)]),
    "sin": (engine.sin, [f64(2, 3)]),
    "cos": (engine.cos, [f64(2, 3)]),
    "tanh": (engine.tanh, [f64(2, 3)]),
    "sigmoid": (engine.sigmoid, [f64(2, 3)]),
    "log": (engine.log, [f64(2, 3, low=0.5)]),
    "sqrt": (engine.sqrt, [f64(2, 3, low=0.5)]),
    "mul": (lambda a, b: a * b, [f64(2, 3), f64(3, seed=3)]),
    "div": (lambda a, b: a / b, [f64(2, 3), f64(3, low=0.5, seed=3)]),
    "pow_scalar": (lambda a: a ** 3, [f64(2, 3)]),
    "pow_tensor": (lambda a, b: a ** b, [f64(2, 3, low=0.5), f64(2, 3, seed=4)]),
    "matmul": (lambda a, b: a @ b, [f64(2, 3), f64(3, 2, seed=4)]),
    "bmm_broadcast": (lambda a, b: a @ b, [f64(2, 2, 3), f64(3, 2, seed=4)]),
    "softmax": (lambda x: F.softmax(x, -1), [f64(2, 4)]),
    "log_softmax": (lambda x: F.log_softmax(x, 1), [f64(2, 4)]),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (4,), w, b), [f64(2, 4), f64(4, seed=2), f64(4, seed=3)]),
    "gelu": (F.gelu, [f64(2, 3)]),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), [f64(2, 3)]),
    "mse_loss": (F.mse_loss, [f64(2, 3), f64(2, 3, seed=5)]),
    "cross_entropy": (lambda x: F.cross_entropy(x, engine.tensor([1, 0, 3])), [f64(3, 4)]),
    "indexing": (lambda x: (x[engine.tensor([0, 2, 2])] ** 2)[:, 1:], [f64(3, 3)]),
    "var": (lambda x: x.var(1), [f64(2, 4)]),
    "sum_mean": (lambda x: (x.sum(0) * x.mean(1, keepdim=True)), [f64(2, 3)]),
    "linear": (F.linear, [f64(2, 3), f64(4, 3, seed=2), f64(4, seed=3)]),
    "conv2d": (lambda x, w: F.conv2d(x, w, padding=1) ** 2, [f64(1, 1, 3, 3), f64(2, 1, 2, 2, seed=2)]),
    "embedding_sq": (lambda w: F.embedding(engine.tensor([1, 1, 0]), w) ** 2, [f64(3, 2)]),
}


@pytest.mark.parametrize("name", sorted(GRADGRAD))
def test_gradgrad(name):
    fn, inputs = GRADGRAD[name]
    gradgradcheck(fn, inputs)


def test_gradcheck_catches_a_wrong_formula():
    """The checker itself must fail on a wrong gradient (guards against a vacuous helper)."""
    class Wrong(engine.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x  # should be 2 * g * x

    with pytest.raises(AssertionError):
        gradcheck(Wrong.apply, [f64(3)])


# ---- in-place helpers and the remaining table entries -------------------------------------
def test_copy_fill_zero_gradients():
    def copy_into(x, src):
        y = x * 1.0
        y[1:].copy_(src)            # gradient flows to src, not to the overwritten part of x
        return y

    gradcheck(copy_into, [f64(3, 2), f64(2, 2, seed=4)])
    gradcheck(lambda x: (x * 1.0).fill_(2.0) * x, [f64(3)])
    gradcheck(lambda x: (x * 1.0)[0].zero_() + x[1], [f64(2, 3)])


def test_native_dropout_op():
    """The fused dropout (CUDA's form) is backend-neutral; check its formula on the CPU."""
    from engine.core.dispatch import apply
    from engine.core.table import OPS
    mask = engine.tensor([[True, False, True], [False, True, True]])
    x = f64(2, 3)
    out = apply(OPS["native_dropout"], [x, mask], {"p": 0.25})
    assert out.grad_fn.name() == "NativeDropoutBackward0"
    assert out.grad_fn._saved_mask.dtype is engine.bool and out.grad_fn.next_functions[0][0].name() == "torch::autograd::AccumulateGrad"
    assert len(out.grad_fn.next_functions) == 1        # the mask argument gets no edge
    gradcheck(lambda x: apply(OPS["native_dropout"], [x, mask], {"p": 0.25}), [x])


def test_setitem_and_copy_second_order():
    gradgradcheck(lambda x, v: _setitem(x, engine.tensor([0, 2]), v) ** 2, [f64(3, 2), f64(2, seed=3)])
    gradgradcheck(lambda x: _setitem(x, (slice(None), 1), 0.0) * x, [f64(2, 3)])


def test_every_table_op_is_exercised():
    """Run one call per case above under a recorder: every differentiable op of the table must show up,
    forward or inside a create_graph backward."""
    from engine.core.table import OPS
    with engine.record() as tr:
        for fn, positive in BINARY.values():
            a, b = leaf(np.full((2, 3), 1.5)), leaf(np.full((3,), 0.7))
            fn(a, b).sum().backward()
        for name, (fn, _) in UNARY.items():
            fn(leaf(np.full((2, 3), 0.6) if name != "clamp_tensor_bounds" else np.full((2, 3), 0.6)))
        for fn in list(REDUCTIONS.values()) + list(SHAPE_OPS.values()):
            fn(distinct(2, 3, 4))
        for fn in SETITEM.values():
            fn(distinct(3, 4), f64(4))
        test_cat_stack()
        test_named_linear_algebra_functions()
        test_softmax_family()
        test_layer_norm(True, (4,))
        test_dropout_fixed_seed()
        test_embedding_repeated_indices()
        test_conv2d(1, 0, 1)
        test_nll_and_cross_entropy("mean")
        test_mse_loss("mean")
        test_copy_fill_zero_gradients()
        test_native_dropout_op()
        test_to_dtype_gradient_flows_back_in_input_dtype()
        for name in ("conv2d", "indexing", "embedding_sq"):
            test_gradgrad(name)
        test_setitem_and_copy_second_order()
        engine.where(engine.tensor([True, False]), leaf([1.0, 2.0]), leaf([3.0, 4.0]))
        test_binary_cross_entropy_with_logits("mean")
        for name in EXTRA:
            EXTRA[name][0](distinct(*EXTRA[name][1]))
        from tests.ops.test_op_rows import exercise_new_ops
        exercise_new_ops()   # prod, einsum, binary cross-entropy, weighted losses
        from tests.nn.test_nn_layers import exercise_layer_ops
        exercise_layer_ops()   # batch norm, pooling, activations, losses
        engine.unique(leaf([2.0, 1.0, 2.0]))   # Unique2Backward0: a node whose backward refuses, as PyTorch's
        from tests.nn.test_upsample import exercise_upsample_ops
        exercise_upsample_ops()
        from tests.ops.test_nll_kdim import exercise_nll_kdim_ops
        exercise_nll_kdim_ops()
        from tests.functions.test_tensor_api import exercise_rounding_ops
        exercise_rounding_ops()
        from tests.ops.test_linalg import exercise_linalg_ops
        exercise_linalg_ops()
        from tests.nn.test_losses import exercise_loss_ops
        exercise_loss_ops()
        from tests.nn.test_layers import exercise_cnn_layer_ops
        exercise_cnn_layer_ops()
        from tests.nn.test_activations import exercise_activation_ops
        exercise_activation_ops()   # threshold, celu, hardsigmoid, glu, prelu, rrelu, clamp_min ...
        from tests.ops.test_math_ops import exercise_math_ops
        exercise_math_ops()   # asin ... atan2, cumprod, median, diagonal, cross, baddbmm, cdist ...
        from tests.functions.test_index_functions import exercise_index_ops
        exercise_index_ops()   # scatter_add, scatter_reduce, index_add/fill/copy, erfinv, sgn
        from tests.nn.test_packed_sequence import exercise_packed_ops
        exercise_packed_ops()   # pack_padded_sequence
        from tests.ops.test_special import exercise_special_ops
        exercise_special_ops()   # lgamma, digamma, polygamma, mvlgamma
        from tests.functions.test_statistics import exercise_stats_ops
        exercise_stats_ops()   # cummax, cummin, vdot, renorm, poisson, histogram
        from tests.ops.test_elementwise import exercise_elementwise_ops
        exercise_elementwise_ops()   # tan, fmax, copysign, logaddexp2, ldexp, rsub, eq_ ...
        from tests.nn.test_pooling import exercise_pool_more_ops
        exercise_pool_more_ops()   # max_unpool2d/3d, adaptive_max_pool3d, adaptive_avg_pool3d
        from tests.nn.test_embedding_bag import exercise_embedding_bag_ops
        exercise_embedding_bag_ops()
        from tests.nn.test_grid_sample import exercise_sampling_ops
        exercise_sampling_ops()   # grid_sampler_2d, affine_grid_generator, pdist
        from tests.nn.test_ctc import exercise_ctc_ops
        exercise_ctc_ops()
        from tests.nn.test_parametrize import exercise_weight_norm_ops
        exercise_weight_norm_ops()   # weight_norm_interface
        from tests.ops.test_shape import exercise_shape_ops
        exercise_shape_ops()   # unfold, take, index_put, put, masked_scatter, *_scatter, block_diag ...
        from tests.nn.test_module_graphs_teaching import exercise_module_graph_ops
        exercise_module_graph_ops()   # fused attention, the fused LSTM layer, unsafe_split
        from tests.ops.test_backward_rows import exercise_backward_rows
        exercise_backward_rows()   # tanh_backward ... mse_loss_backward, einsum of an empty operand
        from tests.functions.test_complex import exercise_complex_ops
        exercise_complex_ops()   # view_as_real/complex, complex, polar, conj, angle and sgn of complex numbers
    seen = {e["op"] for e in tr.of_kind("op")}
    table = {n for n, o in OPS.items() if o.differentiable}
    assert table - seen == set()


# ---- conventions at kinks, ties and singular points (values from PyTorch 2.13) -------------
D = engine.float64
CONVENTIONS = {
    "relu_at_0": (engine.relu, [0.0, -1.0, 2.0], [0.0, 0.0, 1.0]),
    "abs_at_0": (engine.abs, [0.0, -1.0, 2.0], [0.0, -1.0, 1.0]),
    "clamp_at_bounds": (lambda x: x.clamp(0.0, 1.0), [0.0, 1.0, 0.5, 2.0], [1.0, 1.0, 1.0, 0.0]),
    "clamp_min_at_bound": (lambda x: x.clamp(min=0.0), [0.0, -1.0], [1.0, 0.0]),
    "max_ties_even": (lambda x: x.max(), [1.0, 3.0, 3.0], [0.0, 0.5, 0.5]),
    "min_ties_even": (lambda x: x.min(), [1.0, 1.0, 3.0], [0.5, 0.5, 0.0]),
    "max_dim_ties_to_index": (lambda x: x.reshape(1, 3).max(1).values, [3.0, 1.0, 3.0], [1.0, 0.0, 0.0]),
    "amax_ties_even": (lambda x: engine.amax(x.reshape(1, 3), 1), [3.0, 1.0, 3.0], [0.5, 0.0, 0.5]),
    "amin_ties_even": (lambda x: x.reshape(3, 1).amin(0), [1.0, 1.0, 2.0], [0.5, 0.5, 0.0]),
    "maximum_ties_half": (lambda x: engine.maximum(x, engine.tensor([1.0, 0.0, 5.0], dtype=D)), [1.0, 2.0, 3.0],
                          [0.5, 1.0, 0.0]),
    "sqrt_at_0": (engine.sqrt, [0.0, 4.0], [np.inf, 0.25]),
    "pow2_at_0": (lambda x: x ** 2, [0.0, 3.0], [0.0, 6.0]),
    "pow0": (lambda x: x ** 0, [0.0, 3.0], [0.0, 0.0]),
    "pow_half_at_0": (lambda x: x ** 0.5, [0.0, 4.0], [np.inf, 0.25]),
    "pow_tensor_base_0": (lambda x: engine.pow(x, engine.tensor([2.0, 0.5], dtype=D)), [0.0, 4.0], [0.0, 0.25]),
    "pow_tensor_exponent_base_0": (lambda x: engine.pow(engine.tensor([0.0, 2.0], dtype=D), x), [2.0, 3.0],
                                   [0.0, 5.545177]),
    "scalar_base_0": (lambda x: 0.0 ** x, [1.0, 3.0], [0.0, 0.0]),
    "log_at_0": (engine.log, [0.0, 1.0], [np.inf, 1.0]),
    "sign": (lambda x: engine.sign(x) * x, [0.0, -2.0], [0.0, -1.0]),
    "var_of_one_value": (lambda x: x.var(), [1.0], [np.nan]),
    "std_of_constant": (lambda x: x.std(), [2.0, 2.0], [0.0, 0.0]),
    "std_dim_of_constant_rows": (lambda x: x.reshape(2, 2).std(1), [2.0, 2.0, 1.0, 3.0], [0.0, 0.0, -0.707107, 0.707107]),
    "where_masks_nan_branch_value_not_grad": (lambda x: engine.where(x > 0, x.sqrt(), engine.zeros_like(x)),
                                              [-1.0, 4.0], [np.nan, 0.25]),
    "softmax_minus_inf": (lambda x: F.softmax(x, 0), [float("-inf"), 1.0, 2.0], [0.0, 0.0, 0.0]),
    "log_softmax_large": (lambda x: F.log_softmax(x, 0), [1000.0, 0.0], [-1.0, 1.0]),
    "logsumexp_large": (lambda x: engine.logsumexp(x, 0), [1000.0, 1000.0], [0.5, 0.5]),
    "gelu": (F.gelu, [0.0, -3.0, 3.0], [0.5, -0.011946, 1.011946]),
    "reciprocal_at_0": (lambda x: 1.0 / x, [0.0, 2.0], [-np.inf, -0.25]),
    "cross_entropy_all_ignored": (lambda x: F.cross_entropy(x.reshape(1, 2), engine.tensor([-100])), [1.0, 2.0],
                                  [0.0, 0.0]),
    "tanh_saturated": (engine.tanh, [30.0, -30.0], [0.0, 0.0]),
    "sigmoid_saturated": (engine.sigmoid, [-800.0, 800.0], [0.0, 0.0]),
    "layer_norm_constant_row": (lambda x: F.layer_norm(x.reshape(1, 3), (3,)), [1.0, 1.0, 1.0], [0.0, 0.0, 0.0]),
    "index_negative_repeated": (lambda x: x[engine.tensor([-1, -1])], [1.0, 2.0, 3.0], [0.0, 0.0, 2.0]),
    "cat_with_empty": (lambda x: engine.cat([x, x[:0]]), [1.0, 2.0], [1.0, 1.0]),
}


@pytest.mark.parametrize("name", sorted(CONVENTIONS))
def test_gradient_conventions_match_pytorch(name):
    fn, values, expected = CONVENTIONS[name]
    x = engine.tensor(values, dtype=D, requires_grad=True)
    with np.errstate(all="ignore"):
        fn(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [engine.float32, engine.float64])
def test_relu_backward_passes_gradient_bits_and_zeroes_the_rest(dtype):
    # threshold_backward: where(result > 0, grad, 0): NaN/inf/-0.0 pass where kept; +0.0 elsewhere
    x = engine.tensor([1.0, 2.0, 3.0, 4.0, -1.0, -2.0, -3.0, 0.0, 5.0], dtype=dtype, requires_grad=True)
    g = [np.nan, np.inf, -0.0, -2.5, np.inf, np.nan, -1.0, -np.inf, 7.0]
    (gx,) = engine.autograd.grad(F.relu(x), x, engine.tensor(g, dtype=dtype))
    want = np.array([np.nan, np.inf, -0.0, -2.5, 0.0, 0.0, 0.0, 0.0, 7.0], dtype=gx.numpy().dtype)
    assert gx.dtype is dtype
    assert np.array_equal(gx.numpy().view(np.uint8), want.view(np.uint8))   # bit for bit, sign of zero too


def test_amax_std_nodes_as_pytorch():
    x = distinct(2, 3)
    assert engine.amax(x, 1).grad_fn.name() == "AmaxBackward0" and x.std().grad_fn.name() == "StdBackward0"
    assert sorted(k for k, _ in x.std(1).grad_fn.saved_tensors_info) == ["result", "self"]
    gradcheck(lambda x: engine.amin(x, (0, 1)), [x])
    gradcheck(lambda x: x.amax(), [x])


# ---- forward values against independent NumPy references ----------------------------------
def _np_conv2d(x, w, b, stride, padding, dilation):
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.zeros((n, c, h + 2 * ph, wd + 2 * pw))
    xp[:, :, ph:ph + h, pw:pw + wd] = x
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, o, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, :, i * sh:i * sh + dh * (kh - 1) + 1:dh, j * sw:j * sw + dw * (kw - 1) + 1:dw]
            out[:, :, i, j] = np.einsum("nckl,ockl->no", patch, w)
    return out + (0 if b is None else b.reshape(1, -1, 1, 1))


def _np_log_softmax(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def _v(t):
    return t.detach().numpy()


def test_forward_values_match_numpy_references():
    import math
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 3, 5, 6))
    w = rng.standard_normal((4, 3, 3, 2))
    b = rng.standard_normal(4)
    for stride, padding, dilation in (((1, 1), (0, 0), (1, 1)), ((2, 1), (1, 2), (1, 2)), ((1, 2), (2, 0), (2, 1))):
        got = F.conv2d(leaf(x, False), leaf(w, False), leaf(b, False), stride, padding, dilation)
        np.testing.assert_allclose(_v(got), _np_conv2d(x, w, b, stride, padding, dilation), rtol=1e-12, atol=1e-12)

    z = rng.standard_normal((4, 5))
    t = np.array([1, 0, 4, 2])
    np.testing.assert_allclose(_v(F.softmax(leaf(z), 1)), np.exp(_np_log_softmax(z, 1)), rtol=1e-12)
    np.testing.assert_allclose(_v(F.log_softmax(leaf(z), 0)), _np_log_softmax(z, 0), rtol=1e-12)
    ce = -_np_log_softmax(z, 1)[np.arange(4), t]
    np.testing.assert_allclose(_v(F.cross_entropy(leaf(z), engine.tensor(t))), ce.mean(), rtol=1e-12)
    np.testing.assert_allclose(_v(F.cross_entropy(leaf(z), engine.tensor(t), reduction="none")), ce, rtol=1e-12)
    t_ign = engine.tensor([1, -100, 4, -100])
    np.testing.assert_allclose(_v(F.cross_entropy(leaf(z), t_ign)), (ce[0] + ce[2]) / 2, rtol=1e-12)
    np.testing.assert_allclose(_v(F.cross_entropy(leaf(z), t_ign, reduction="sum")), ce[0] + ce[2], rtol=1e-12)

    ln_w, ln_b = rng.standard_normal(5), rng.standard_normal(5)
    mu, var = z.mean(1, keepdims=True), z.var(1, keepdims=True)
    np.testing.assert_allclose(_v(F.layer_norm(leaf(z), (5,), leaf(ln_w), leaf(ln_b), eps=1e-5)),
                               (z - mu) / np.sqrt(var + 1e-5) * ln_w + ln_b, rtol=1e-10)
    erf = np.vectorize(math.erf)
    np.testing.assert_allclose(_v(F.gelu(leaf(z))), 0.5 * z * (1 + erf(z / math.sqrt(2))), rtol=1e-12)
    np.testing.assert_allclose(_v(F.gelu(leaf(z), approximate="tanh")),
                               0.5 * z * (1 + np.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z ** 3))), rtol=1e-12)
    np.testing.assert_allclose(_v(engine.logsumexp(leaf(z), 1)), np.log(np.exp(z).sum(1)), rtol=1e-12)
    np.testing.assert_allclose(_v(leaf(z).var(0)), z.var(0, ddof=1), rtol=1e-12)
    np.testing.assert_allclose(_v(leaf(z).std(1, unbiased=False)), z.std(1), rtol=1e-12)
    np.testing.assert_allclose(_v(F.mse_loss(leaf(z), leaf(z[::-1]))), ((z - z[::-1]) ** 2).mean(), rtol=1e-12)
    lw, lb = rng.standard_normal((3, 5)), rng.standard_normal(3)
    np.testing.assert_allclose(_v(F.linear(leaf(z), leaf(lw), leaf(lb))), z @ lw.T + lb, rtol=1e-12)
    a3, b3 = rng.standard_normal((2, 1, 3, 4)), rng.standard_normal((5, 4, 2))
    np.testing.assert_allclose(_v(leaf(a3) @ leaf(b3)), np.matmul(a3, b3), rtol=1e-12)
    emb = rng.standard_normal((6, 3))
    idx = np.array([[5, 0], [0, 2]])
    np.testing.assert_allclose(_v(F.embedding(engine.tensor(idx), leaf(emb))), emb[idx], rtol=0)
    np.testing.assert_array_equal(_v(leaf(z)[leaf(z).detach() > 0]), z[z > 0])
    np.testing.assert_array_equal(_v(leaf(z)[engine.tensor([3, 3, 0]), 1:4:2]), z[[3, 3, 0], 1:4:2])
    q, k, v = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4)), rng.standard_normal((2, 5, 4))
    s = q @ k.transpose(0, 2, 1) / 2.0
    att = np.exp(_np_log_softmax(s, -1)) @ v
    np.testing.assert_allclose(_v(F.scaled_dot_product_attention(leaf(q), leaf(k), leaf(v))), att, rtol=1e-12)


def test_dropout_mask_statistics_and_scaling():
    engine.manual_seed(0)
    x = engine.ones(200, 100, requires_grad=True)
    y = F.dropout(x, p=0.3)
    np.testing.assert_allclose(np.unique(_v(y)), [0.0, 1 / 0.7], rtol=1e-6)   # dropped, or scaled by 1/(1-p)
    kept = float((_v(y) != 0).mean())
    assert abs(kept - 0.7) < 0.02                    # 20,000 draws: 4.5 standard deviations of slack
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), _v(y))   # gradient is the same scaled mask
    assert F.dropout(x, p=0.0) is x and F.dropout(x, 0.5, training=False) is x
    assert float(F.dropout(x, p=1.0).abs().sum()) == 0.0


def test_inplace_through_views_gradcheck():
    def setitem_on_views(x, v):
        a = x * 1.0
        a[0][1] = 5.0                    # setitem on a view of a
        a[1][engine.tensor([0, 2])] = v  # advanced-index setitem on a view
        a.T[2].mul_(v[0])                # in-place on a strided view
        return a * x

    def chained_views(x):
        a = x * 1.0
        a.view(9)[::2].add_(1.0)         # a view of a view
        a[1:].exp_()                     # an op that saves its (pre-write) input
        return a.sin()

    gradcheck(setitem_on_views, [f64(3, 3), f64(2, seed=3)])
    gradcheck(chained_views, [f64(3, 3)])
    gradgradcheck(chained_views, [f64(3, 3)])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy_with_logits(reduction):
    x, t = f64(3, 4), engine.tensor(np.random.default_rng(2).random((3, 4)), dtype=D, requires_grad=True)
    gradcheck(lambda x, t: F.binary_cross_entropy_with_logits(x, t, reduction=reduction), [x, t])
    z = np.array([-30.0, 0.0, 30.0])
    out = F.binary_cross_entropy_with_logits(engine.tensor(z, dtype=D), engine.tensor([0.0, 1.0, 1.0], dtype=D),
                                             reduction="none")
    np.testing.assert_allclose(out.numpy(), [np.log1p(np.exp(-30.0)), np.log(2.0), np.log1p(np.exp(-30.0))],
                               rtol=1e-12)


# ---- cumsum, norm, tril/triu, gather, repeat, sort/topk, log1p/expm1 -----------------------
EXTRA = {
    "log1p": (lambda x: (x.abs() + 0.1).log1p(), (2, 3)),
    "expm1": (lambda x: x.expm1(), (2, 3)),
    "cumsum": (lambda x: x.cumsum(1), (2, 3, 2)),
    "cumsum_neg": (lambda x: engine.cumsum(x, -1) * x, (3, 4)),
    "norm": (lambda x: x.norm(), (3, 4)),
    "norm_dim": (lambda x: engine.norm(x, dim=1, keepdim=True), (3, 4)),
    "norm_dims": (lambda x: x.norm(dim=(0, 2)), (2, 3, 2)),
    "tril": (lambda x: x.tril(), (3, 4)),
    "triu_batched": (lambda x: engine.triu(x, 1), (2, 3, 3)),
    "tril_neg": (lambda x: x.tril(-1), (4, 3)),
    "gather": (lambda x: x.gather(1, engine.tensor([[0, 0, 3], [2, 1, 1], [3, 3, 3]])), (3, 4)),
    "gather_dim0_smaller": (lambda x: engine.gather(x, 0, engine.tensor([[2, 0], [2, 2]])), (3, 4)),
    "repeat": (lambda x: x.repeat(2, 1, 3), (2, 3)),
    "repeat_same_rank": (lambda x: x.repeat(1, 2), (2, 3)),
    "sort": (lambda x: x.sort(1).values, (3, 4)),
    "sort_desc_dim0": (lambda x: engine.sort(x, 0, descending=True)[0], (3, 4)),
    "topk": (lambda x: x.topk(2).values, (3, 4)),
    "topk_smallest": (lambda x: x.topk(2, dim=0, largest=False)[0], (3, 4)),
    "masked_select": (lambda x: x.masked_select(engine.tensor([True, False, True, True])), (3, 4)),
    "clamp_min_max": (lambda x: x.clamp_min(-0.4).clamp_max(0.5), (3, 4)),
}


@pytest.mark.parametrize("name", sorted(EXTRA))
def test_more_functions(name):
    fn, shape = EXTRA[name]
    x = distinct(*shape)
    if name == "clamp_min_max":
        x = leaf(away_from(x.detach().numpy(), [-0.4, 0.5]))
    gradcheck(fn, [x])


@pytest.mark.parametrize("name", ["cumsum", "norm_dim", "gather", "tril", "repeat", "sort"])
def test_more_functions_second_order(name):
    fn, shape = EXTRA[name]
    gradgradcheck(lambda x: fn(x) ** 2, [distinct(*shape)])


def test_more_functions_values():
    x = engine.tensor([[3.0, 1.0, 2.0], [0.0, -1.0, 5.0]])
    assert x.cumsum(1).tolist() == [[3.0, 4.0, 6.0], [0.0, -1.0, 4.0]]
    assert engine.tensor([True, True, False]).cumsum(0).tolist() == [1, 2, 2]
    assert x.sort(1).values.tolist() == [[1.0, 2.0, 3.0], [-1.0, 0.0, 5.0]] and x.sort(1).indices.dtype is engine.int64
    assert x.argsort(1, descending=True).tolist() == [[0, 2, 1], [2, 0, 1]]
    assert x.topk(1).values.tolist() == [[3.0], [5.0]] and x.topk(1).indices.tolist() == [[0], [2]]
    assert x.tril().tolist() == [[3.0, 0.0, 0.0], [0.0, -1.0, 0.0]] and x.triu(1).tolist() == [[0.0, 1.0, 2.0], [0.0, 0.0, 5.0]]
    assert x.repeat(1, 2).shape == (2, 6) and engine.tensor([1, 2]).repeat(2).tolist() == [1, 2, 1, 2]
    assert x.gather(1, engine.tensor([[2], [0]])).tolist() == [[2.0], [0.0]]
    assert abs(engine.tensor([3.0, 4.0]).norm().item() - 5.0) < 1e-6
    assert engine.isclose(engine.tensor([1.0, float("nan")]), engine.tensor([1.0 + 1e-9, float("nan")]),
                          equal_nan=True).tolist() == [True, True]
    assert x.norm(p=1).item() == 12.0    # any p goes through engine.linalg (tests/ops/test_linalg.py)
    with pytest.raises(RuntimeError, match="index 5 is out of bounds for dimension 1 with size 3"):
        x.gather(1, engine.tensor([[5], [0]]))
    with pytest.raises(RuntimeError, match="Number of dimensions of repeat dims"):
        x.repeat(2)
    z = engine.zeros(3, requires_grad=True)
    z.norm().backward()
    assert z.grad.tolist() == [0.0, 0.0, 0.0]          # as PyTorch: no 0/0 at the origin


def test_remainder_fmod_and_floor_division():
    x = engine.tensor([5, -3])
    assert (x % 2).tolist() == [1, 1] and (7 % x).tolist() == [2, -2] and (2 // x).tolist() == [0, -1]
    assert x.fmod(2).tolist() == [1, -1] and (x % 2).dtype is engine.int64
    y = engine.tensor([5.5, -3.5])
    assert (y % -2).tolist() == [-0.5, -1.5] and engine.fmod(y, -2).tolist() == [1.5, -1.5]
    a = leaf(away_from([2.3, -1.7, 4.2], [0.0, 2.0, 4.0]))
    b = leaf([1.5, 0.8, -1.3])
    gradcheck(engine.remainder, [a, b])
    gradcheck(engine.fmod, [a, b])
