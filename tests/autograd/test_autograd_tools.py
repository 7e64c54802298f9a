"""engine.autograd.gradcheck / gradgradcheck and engine.autograd.functional.

Values are derived by hand (polynomials, tanh, matmul); messages and return structures are
PyTorch 2.13's, recorded from a real PyTorch.
"""
import numpy as np
import pytest

import engine as torch
from engine.autograd import gradcheck, gradgradcheck
from engine.autograd.functional import hessian, hvp, jacobian, jvp, vhp, vjp
from engine.autograd.gradcheck import GradcheckError

F64 = torch.float64


def t(values, requires_grad=False):
    return torch.tensor(values, dtype=F64, requires_grad=requires_grad)


def A():
    return torch.arange(6, dtype=F64).reshape(2, 3) / 10


def B():
    return torch.arange(12, dtype=F64).reshape(3, 4) / 7


class HalfSquare(torch.autograd.Function):
    """x * x with a wrong backward: it returns g * x instead of 2 * g * x."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * x


class WrongWeightGrad(torch.autograd.Function):
    """x @ w whose gradient for w is doubled."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x @ w

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g @ w.t(), x.t() @ g * 2


class FrozenCube(torch.autograd.Function):
    """x ** 3 with a correct first derivative that is not differentiable (it detaches x)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 3 * x.detach() ** 2


class Drifting(torch.autograd.Function):
    """2 x whose backward adds a little more every call (not reentrant)."""
    calls = 0

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        Drifting.calls += 1
        return g * 2 + Drifting.calls * 1e-9


class Float32Grad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return (g * 2).float()


class TwoOutputs(torch.autograd.Function):
    """(2x, 3x), written to cope with a missing (undefined) output gradient."""

    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, g1, g2):
        r = None
        if g1 is not None:
            r = g1 * 2
        if g2 is not None:
            r = g2 * 3 if r is None else r + g2 * 3
        return r


HALF_SQUARE_MSG = (
    "Jacobian mismatch for output 0 with respect to input 0,\n"
    "numerical:tensor([[2.0000, 0.0000, 0.0000],\n"
    "        [0.0000, 4.0000, 0.0000],\n"
    "        [0.0000, 0.0000, 6.0000]], dtype=torch.float64)\n"
    "analytical:tensor([[1., 0., 0.],\n"
    "        [0., 2., 0.],\n"
    "        [0., 0., 3.]], dtype=torch.float64)\n")


# ---- where things live -------------------------------------------------------------------------

def test_reachable_after_import_engine_as_in_pytorch():
    import sys
    assert torch.autograd.gradcheck is gradcheck and callable(torch.autograd.gradcheck)
    assert torch.autograd.gradgradcheck is gradgradcheck
    assert torch.autograd.functional.jacobian is jacobian
    assert sys.modules["engine.autograd.gradcheck"].GradcheckError is GradcheckError
    assert torch.autograd.gradcheck.GradcheckError is GradcheckError
    assert issubclass(GradcheckError, RuntimeError)
    assert set(torch.autograd.functional.__all__) == {"vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"}


# ---- gradcheck: passing ------------------------------------------------------------------------

@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_passes_on_correct_ops(fast_mode):
    x = t([0.5, -1.0, 2.0], requires_grad=True)
    a, b = A().requires_grad_(), B().requires_grad_()
    assert gradcheck(torch.tanh, (x,), fast_mode=fast_mode) is True
    assert gradcheck(lambda v: v ** 3 - 2 * v, x, fast_mode=fast_mode) is True
    assert gradcheck(torch.matmul, (a, b), fast_mode=fast_mode) is True
    # several outputs, an integer output, non-tensor and non-differentiable arguments
    assert gradcheck(lambda v, k, c: (v * k + c, v.argmax(), v.sum()), (x, 2, t([1.0, 1.0, 1.0])),
                     fast_mode=fast_mode) is True
    assert gradcheck(lambda s: s * s, t(1.5, requires_grad=True), fast_mode=fast_mode) is True
    assert gradcheck(TwoOutputs.apply, x, fast_mode=fast_mode) is True


def test_gradcheck_accepts_a_list_and_a_constant_function():
    x = t([0.5, -1.0], requires_grad=True)
    assert gradcheck(torch.sin, [x])
    assert gradcheck(lambda v: torch.ones(2, dtype=F64), x)   # no differentiable output, zero numerical grad
    assert gradcheck(torch.sin, torch.zeros(0, dtype=F64, requires_grad=True))


def test_gradcheck_leaves_the_inputs_alone():
    x = t([0.5, -1.0, 2.0], requires_grad=True)
    w = t([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
    before = (x.detach().numpy().copy(), w.detach().numpy().copy(), x._version, w._version)
    assert gradcheck(lambda a, b: (a @ b).tanh(), (x, w))
    assert gradgradcheck(lambda a, b: (a @ b).tanh(), (x, w))
    np.testing.assert_array_equal(x.detach().numpy(), before[0])
    np.testing.assert_array_equal(w.detach().numpy(), before[1])
    assert (x._version, w._version) == before[2:]
    assert x.grad is None and w.grad is None   # autograd.grad: nothing accumulated


# ---- gradcheck: failing ------------------------------------------------------------------------

def test_gradcheck_reports_a_wrong_backward_in_pytorchs_words():
    x = t([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(GradcheckError) as info:
        gradcheck(HalfSquare.apply, (x,))
    assert str(info.value) == HALF_SQUARE_MSG
    assert gradcheck(HalfSquare.apply, (x,), raise_exception=False) is False


def test_gradcheck_names_the_input_and_lays_out_rows_by_input_element():
    a, b = A().requires_grad_(), B()[:, :2].contiguous().requires_grad_()
    with pytest.raises(GradcheckError) as info:
        gradcheck(WrongWeightGrad.apply, (a, b))
    msg = str(info.value)
    assert msg.startswith("Jacobian mismatch for output 0 with respect to input 1,\nnumerical:tensor(")
    # d(a @ b)[i, j] / d b[k, j] = a[i, k]: row k*2+j of the 6 x 4 matrix holds a[:, k] in columns i*2+j
    numerical = np.zeros((6, 4))
    an = A().numpy()
    for k in range(3):
        for j in range(2):
            for i in range(2):
                numerical[k * 2 + j, i * 2 + j] = an[i, k]
    assert "analytical:" + str(torch.tensor(2 * numerical)) + "\n" in msg
    assert "numerical:" + str(torch.tensor(numerical).to(F64)) in msg


def test_fast_mode_failure_adds_the_slow_mode_jacobians():
    x = t([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(GradcheckError) as info:
        gradcheck(HalfSquare.apply, (x,), fast_mode=True)
    msg = str(info.value)
    head, _, tail = msg.partition("\nThe above quantities")
    lines = head.split("\n")
    assert lines[0] == "Jacobian mismatch for output 0 with respect to input 0,"
    numerical, analytical = float(lines[1][len("numerical:"):]), float(lines[2][len("analytical:"):])
    assert numerical == pytest.approx(2 * analytical, rel=1e-6)   # the backward is off by a factor 2
    assert "Below, we recompute numerical and analytical jacobians in slow mode:" in tail
    assert "The max per-element difference (slow mode) is: 3.0000000008" in tail
    assert "Fast gradcheck failed but element-wise differences are small" not in tail


def test_numerical_gradient_must_vanish_without_differentiable_outputs():
    x = t([0.5, 1.0], requires_grad=True)
    with pytest.raises(GradcheckError, match="^Numerical gradient for function expected to be zero$"):
        gradcheck(lambda v: v.detach() * 2, x)
    assert gradcheck(lambda v: v.detach() * 2, x, raise_exception=False) is False


def test_backward_must_be_reentrant_and_scale_with_grad_output():
    x = t([0.5, 1.0], requires_grad=True)
    with pytest.raises(GradcheckError, match=r"^Backward is not reentrant, i\.e\., running backward with same "
                                             r"input and grad_output multiple times gives different values, "
                                             r"although analytical gradient matches numerical gradient\.The "
                                             r"tolerance for nondeterminism was 0\.0\."):
        gradcheck(Drifting.apply, x)
    with pytest.raises(GradcheckError, match="^backward not multiplied by grad_output$"):
        gradcheck(Drifting.apply, x, nondet_tol=1e-6)


def test_a_gradient_takes_its_inputs_dtype():
    x = t([0.5, 1.0], requires_grad=True)
    Float32Grad.apply(x).sum().backward()
    assert x.grad.dtype == F64            # PyTorch's engine casts a Function's gradient to the input dtype
    assert gradcheck(Float32Grad.apply, x, check_grad_dtypes=True)


def test_outputs_that_change_shape_under_perturbation():
    x = t([0.5, 1.0], requires_grad=True)
    with pytest.raises(AssertionError, match=r"^Expected `func` to return outputs with the same shape when inputs "
                                             r"are perturbed on index \(0,\) by 1e-06, but got: shapes "
                                             r"torch.Size\(\[1\]\) and torch.Size\(\[2\]\)\.$"):
        gradcheck(lambda v: v[v > 0.5], x)


def test_input_checks():
    with pytest.raises(ValueError, match="^gradcheck expects at least one input tensor to require gradient, but "
                                         "none of them have requires_grad=True.$"):
        gradcheck(torch.sin, t([1.0, 2.0]))
    expanded = t([[1.0, 2.0, 3.0]]).expand(2, 3).requires_grad_()
    with pytest.raises(RuntimeError, match="^The 0th input has a dimension with stride 0. gradcheck only supports"):
        gradcheck(torch.sin, expanded)


def test_single_precision_inputs_get_pytorchs_warning():
    x = torch.tensor([0.5, 1.0], requires_grad=True)
    msg = ("Input #0 requires gradient and is not a double precision floating point or complex. This check will "
           "likely fail if all the inputs are not of double precision floating point or complex. ")
    with pytest.warns(UserWarning) as record:
        assert gradcheck(torch.sin, (x,), eps=1e-3, atol=1e-2, rtol=1e-2)
    assert [str(w.message) for w in record] == [msg]


def test_modes_glassgrad_does_not_have_are_refused_clearly():
    x = t([0.5, 1.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="no vmap"):
        gradcheck(torch.sin, x, check_batched_grad=True)
    with pytest.raises(NotImplementedError, match="no forward-mode AD"):
        gradcheck(torch.sin, x, check_forward_ad=True)
    with pytest.raises(NotImplementedError, match="no forward-mode AD"):
        gradgradcheck(torch.sin, x, check_fwd_over_rev=True)
    with pytest.raises(AssertionError, match="^Expected at least one of check_forward_ad or check_backward_ad"):
        gradcheck(torch.sin, x, check_backward_ad=False)


# ---- gradgradcheck -----------------------------------------------------------------------------

@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradgradcheck_passes_on_correct_ops(fast_mode):
    x = t([0.5, -1.0, 2.0], requires_grad=True)
    a, b = A().requires_grad_(), B().requires_grad_()
    assert gradgradcheck(torch.tanh, x, fast_mode=fast_mode)
    assert gradgradcheck(torch.matmul, (a, b), fast_mode=fast_mode)
    assert gradgradcheck(lambda u, v: (u * v, u.exp()), (x, t([1.0, 2.0, 3.0], requires_grad=True)),
                         fast_mode=fast_mode)
    assert gradgradcheck(lambda v: v ** 3, x, t([1.0, 1.0, 1.0]), fast_mode=fast_mode)   # fixed grad_outputs


def test_gradgradcheck_catches_a_backward_that_is_not_differentiable():
    x = t([0.5, -1.0, 2.0], requires_grad=True)
    assert gradcheck(FrozenCube.apply, x)            # the first derivative is right
    with pytest.raises(GradcheckError) as info:
        gradgradcheck(FrozenCube.apply, x, t([1.0, 1.0, 1.0], requires_grad=True))
    # d/dx of 3 x^2 g is 6 x g = diag(3, -6, 12); the detached backward gives none of it
    assert str(info.value) == (
        "Jacobian mismatch for output 0 with respect to input 0,\n"
        "numerical:tensor([[ 3.0000,  0.0000,  0.0000],\n"
        "        [ 0.0000, -6.0000,  0.0000],\n"
        "        [ 0.0000,  0.0000, 12.0000]], dtype=torch.float64)\n"
        "analytical:tensor([[0., 0., 0.],\n"
        "        [0., 0., 0.],\n"
        "        [0., 0., 0.]], dtype=torch.float64)\n")
    assert gradgradcheck(FrozenCube.apply, x, raise_exception=False) is False


# ---- functional: jacobian ----------------------------------------------------------------------

def test_jacobian_of_tanh_is_diagonal():
    xs = [0.5, -1.0, 2.0]
    J = jacobian(torch.tanh, t(xs))
    np.testing.assert_allclose(J.numpy(), np.diag(1 - np.tanh(xs) ** 2), rtol=1e-12)
    assert not J.requires_grad


@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_of_matmul(vectorize):
    a, b = A(), B()
    Ja, Jb = jacobian(torch.matmul, (a, b), vectorize=vectorize)
    assert Ja.shape == (2, 4, 2, 3) and Jb.shape == (2, 4, 3, 4)
    an, bn = a.numpy(), b.numpy()
    # d(ab)[i, j] / d a[k, l] = [i == k] b[l, j];  d(ab)[i, j] / d b[k, l] = a[i, k] [j == l]
    np.testing.assert_allclose(Ja.numpy(), np.einsum("ik,lj->ijkl", np.eye(2), bn), atol=1e-15)
    np.testing.assert_allclose(Jb.numpy(), np.einsum("ik,jl->ijkl", an, np.eye(4)), atol=1e-15)


def test_jacobian_structure_follows_inputs_and_outputs():
    x = t([0.5, -1.0, 2.0])
    one = jacobian(lambda v: v ** 2, (x,))
    assert isinstance(one, tuple) and len(one) == 1 and one[0].shape == (3, 3)
    outs = jacobian(lambda v: (v * 2, v.sum()), x)
    assert isinstance(outs, tuple) and [o.shape for o in outs] == [(3, 3), (3,)]
    nested = jacobian(lambda u, v: (u * v, u.sum()), (x, x))
    assert [[j.shape for j in row] for row in nested] == [[(3, 3), (3, 3)], [(3,), (3,)]]
    np.testing.assert_array_equal(nested[1][1].numpy(), np.zeros(3))   # u.sum() ignores v
    # PyTorch's documented example shapes: exp_reducer(x) = x.exp().sum(dim=1)
    assert jacobian(lambda v: v.exp().sum(dim=1), torch.rand(2, 2)).shape == (2, 2, 2)
    assert [j.shape for j in jacobian(lambda u, v: 3 * u.exp() + v, (torch.rand(2), torch.rand(2)))] == [(2, 2)] * 2


def test_jacobian_with_create_graph_is_differentiable_back_to_the_caller():
    x = t([0.5, -1.0, 2.0], requires_grad=True)
    J = jacobian(lambda v: v ** 3, x, create_graph=True)     # diag(3 x^2)
    assert J.requires_grad
    J.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * np.array([0.5, -1.0, 2.0]))


def test_forward_mode_jacobian_uses_the_double_backward_trick():
    a, b = A(), B()[:, :2].contiguous()
    fwd = jacobian(lambda u, v: (u @ v, v.sin()), (a, b), vectorize=True, strategy="forward-mode")
    rev = jacobian(lambda u, v: (u @ v, v.sin()), (a, b))
    for rf, rr in zip(fwd, rev):
        for f, r in zip(rf, rr):
            assert f.shape == r.shape
            np.testing.assert_allclose(f.numpy(), r.numpy(), atol=1e-14)
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        jacobian(torch.sin, a, strategy="forward-mode")


def test_jacobian_errors():
    x = t([0.5, -1.0])
    with pytest.raises(RuntimeError, match="^Output 0 of the user-provided function is independent of input 1. "
                                           "This is not allowed in strict mode.$"):
        jacobian(lambda u, v: u * 2, (x, x), strict=True)
    with pytest.raises(RuntimeError, match="`strict=True` and `vectorized=True` are not supported together"):
        jacobian(torch.sin, x, strict=True, vectorize=True)
    with pytest.raises(AssertionError, match='^Expected strategy to be either "forward-mode" or "reverse-mode"'):
        jacobian(torch.sin, x, strategy="forward")
    with pytest.raises(TypeError, match="^The inputs given to jacobian must be either a Tensor or a tuple of "
                                        "Tensors but the given inputs has type <class 'list'>.$"):
        jacobian(torch.sin, [x])


# ---- functional: hessian -----------------------------------------------------------------------

def test_hessian_of_polynomials():
    xs = np.array([0.5, -1.0, 2.0])
    H = hessian(lambda v: (v ** 3).sum(), t(xs.tolist()))
    np.testing.assert_allclose(H.numpy(), np.diag(6 * xs))
    # f(a, b) = sum(a^2 b): H_aa = diag(2b), H_ab = diag(2a), H_bb = 0
    a, b = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    (Haa, Hab), (Hba, Hbb) = hessian(lambda u, v: (u * u * v).sum(), (t(a.tolist()), t(b.tolist())))
    np.testing.assert_allclose(Haa.numpy(), np.diag(2 * b))
    np.testing.assert_allclose(Hab.numpy(), np.diag(2 * a))
    np.testing.assert_allclose(Hba.numpy(), np.diag(2 * a))
    np.testing.assert_allclose(Hbb.numpy(), np.zeros((2, 2)))
    assert hessian(lambda v: v.pow(3).sum(), torch.rand(2, 2)).shape == (2, 2, 2, 2)   # PyTorch's doc example
    fwd = hessian(lambda u, v: (u * u * v).sum(), (t(a.tolist()), t(b.tolist())), vectorize=True,
                  outer_jacobian_strategy="forward-mode")
    np.testing.assert_allclose(fwd[0][1].numpy(), np.diag(2 * a))


def test_hessian_errors():
    x = t([0.5, -1.0])
    with pytest.raises(RuntimeError, match="^The Tensor returned by the function given to hessian should contain a "
                                           "single element$"):
        hessian(lambda v: v * 2, x)
    with pytest.raises(RuntimeError, match="^The function given to hessian should return a single Tensor$"):
        hessian(lambda v: (v.sum(), v.sum()), x)
    with pytest.raises(RuntimeError, match="^While computing the hessian, found that the jacobian of the "
                                           "user-provided function with respect to input 0 is independent"):
        hessian(lambda v: v.sum() * 2, x, strict=True)
    np.testing.assert_array_equal(hessian(lambda v: v.sum() * 2, x).numpy(), np.zeros((2, 2)))


# ---- functional: vjp, jvp, hvp, vhp ------------------------------------------------------------

def test_vjp_and_jvp_of_tanh():
    xs = np.array([0.5, -1.0, 2.0])
    v = t([1.0, 2.0, -1.0])
    out, g = vjp(torch.tanh, t(xs.tolist()), v)
    np.testing.assert_allclose(out.numpy(), np.tanh(xs))
    np.testing.assert_allclose(g.numpy(), (1 - np.tanh(xs) ** 2) * np.array([1.0, 2.0, -1.0]))
    out2, jv = jvp(torch.tanh, t(xs.tolist()), v)
    np.testing.assert_allclose(jv.numpy(), g.numpy())       # J is symmetric (diagonal)
    assert not out.requires_grad and not g.requires_grad and not jv.requires_grad


def test_vjp_and_jvp_of_matmul():
    a, b = A(), B()
    out, (va, vb) = vjp(torch.matmul, (a, b), t(np.ones((2, 4)).tolist()))
    np.testing.assert_allclose(va.numpy(), np.ones((2, 4)) @ B().numpy().T)
    np.testing.assert_allclose(vb.numpy(), A().numpy().T @ np.ones((2, 4)))
    da, db = t(np.ones((2, 3)).tolist()), t(np.ones((3, 4)).tolist())
    out, jv = jvp(torch.matmul, (a, b), (da, db))
    np.testing.assert_allclose(jv.numpy(), np.ones((2, 3)) @ B().numpy() + A().numpy() @ np.ones((3, 4)))


def test_vjp_and_jvp_structure_and_scalar_defaults():
    x = t([0.5, -1.0, 2.0])
    out, g = vjp(lambda v: (v ** 2).sum(), x)               # v defaults to 1 for one scalar output
    assert out.shape == () and float(out) == 5.25
    np.testing.assert_allclose(g.numpy(), [1.0, -2.0, 4.0])
    out, (g1, g2) = vjp(lambda u, v: u.sum(), (x, x))       # an unused input gets zeros
    np.testing.assert_array_equal(g2.numpy(), np.zeros(3))
    out, jv = jvp(lambda s: s * 3, t(2.0))
    assert float(jv) == 3.0 and jv.shape == ()
    outs, jvs = jvp(lambda u: (u * 2, u.exp()), x, t([1.0, 1.0, 1.0]))
    assert isinstance(outs, tuple) and isinstance(jvs, tuple)
    np.testing.assert_allclose(jvs[1].numpy(), np.exp([0.5, -1.0, 2.0]))
    # PyTorch's documented example shapes
    out, g = vjp(lambda v: v.exp().sum(dim=1), torch.rand(4, 4), torch.ones(4))
    assert out.shape == (4,) and g.shape == (4, 4)
    out, jv = jvp(lambda v: v.exp().sum(dim=1), torch.rand(4, 4), torch.ones(4, 4))
    assert out.shape == (4,) and jv.shape == (4,)


def test_create_graph_keeps_results_differentiable():
    x = t([0.5, -1.0, 2.0], requires_grad=True)
    out, g = vjp(lambda v: v ** 3, x, t([1.0, 1.0, 1.0]), create_graph=True)   # g = 3 x^2
    assert out.requires_grad and g.requires_grad
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, -6.0, 12.0])
    x.grad = None
    out, jv = jvp(lambda v: v ** 3, x, t([1.0, 1.0, 1.0]), create_graph=True)
    jv.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, -6.0, 12.0])


def test_hvp_and_vhp_of_a_cubic():
    xs = np.array([0.5, -1.0, 2.0])
    v = t([1.0, 2.0, 3.0])
    out, hv = hvp(lambda u: (u ** 3).sum(), t(xs.tolist()), v)     # H = diag(6 x)
    assert float(out) == pytest.approx((xs ** 3).sum())
    np.testing.assert_allclose(hv.numpy(), 6 * xs * np.array([1.0, 2.0, 3.0]))
    out, vh = vhp(lambda u: (u ** 3).sum(), t(xs.tolist()), v)
    np.testing.assert_allclose(vh.numpy(), hv.numpy())
    # two inputs, f(a, b) = sum(a^2 b): H v for v = (va, vb) is (2b va + 2a vb, 2a va)
    a, b = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    va, vb = np.array([1.0, -1.0]), np.array([0.5, 2.0])
    _, (ha, hb) = hvp(lambda u, w: (u * u * w).sum(), (t(a.tolist()), t(b.tolist())), (t(va.tolist()), t(vb.tolist())))
    np.testing.assert_allclose(ha.numpy(), 2 * b * va + 2 * a * vb)
    np.testing.assert_allclose(hb.numpy(), 2 * a * va)
    _, h = hvp(lambda u: u.pow(3).sum(), torch.rand(2, 2), torch.ones(2, 2))   # PyTorch's doc example
    assert h.shape == (2, 2)


def test_vjp_jvp_hvp_errors():
    x = t([0.5, -1.0, 2.0])
    with pytest.raises(RuntimeError, match="^The vector v can only be None if the user-provided function returns a "
                                           "single Tensor with a single element.$"):
        vjp(lambda v: v * 2, x)
    with pytest.raises(RuntimeError, match=r"^v has invalid size: should be torch.Size\(\[3\]\) but got "
                                           r"torch.Size\(\[2\]\).$"):
        vjp(lambda v: v * 2, x, t([1.0, 1.0]))
    with pytest.raises(RuntimeError, match=r"^Entry 1 in v has invalid size"):
        vjp(lambda u, w: (u, w * 2), (x, x), (t([1.0, 1.0, 1.0]), t([1.0])))
    with pytest.raises(RuntimeError, match="^v is a tuple of invalid length: should be 2 but got 1.$"):
        jvp(lambda u, w: u * 2, (x, x), t([1.0, 1.0, 1.0]))
    with pytest.raises(RuntimeError, match="^The output of the user-provided function is independent of input 1."):
        vjp(lambda u, w: u.sum(), (x, x), strict=True)
    with pytest.raises(RuntimeError, match="^Output 0 of the user-provided function does not require gradients."):
        vjp(lambda u: torch.ones(2, dtype=F64), x, t([1.0, 1.0]), strict=True)
    with pytest.raises(TypeError, match="but the value at index 1 has type <class 'int'>.$"):
        vjp(lambda u: u, (x, 3))
    with pytest.raises(RuntimeError, match="^The Tensor returned by the function given to hvp should contain a "
                                           "single element$"):
        hvp(lambda u: u * 2, x, t([1.0, 1.0, 1.0]))
    with pytest.raises(RuntimeError, match="^The function given to vhp should return a single Tensor$"):
        vhp(lambda u: (u, u), x, t([1.0, 1.0, 1.0]))


def test_functional_works_under_no_grad():
    x = t([0.5, -1.0, 2.0])
    with torch.no_grad():
        J = jacobian(torch.tanh, x)
        _, g = vjp(torch.tanh, x, t([1.0, 1.0, 1.0]))
    np.testing.assert_allclose(np.diag(J.numpy()), g.numpy())
