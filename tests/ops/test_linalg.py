"""engine.linalg: values against NumPy, gradients against finite differences (float64, well-conditioned
inputs), node names and saved tensors as PyTorch's, PyTorch's errors, batches, array_api_strict."""
from __future__ import annotations

import math

import numpy as np
import pytest

import engine
from engine import linalg as L

from tests.checks import BACKENDS, assert_matches, f64, gradcheck, gradgradcheck, on_backend

D = engine.float64


def well(n=3, batch=(), seed=0):
    """A well-conditioned float64 matrix (identity plus a small random part)."""
    rng = np.random.default_rng(seed)
    a = np.eye(n) * 2.0 + 0.3 * rng.standard_normal(batch + (n, n))
    return engine.tensor(a, dtype=D, requires_grad=True)


def spd(n=3, batch=(), seed=0):
    rng = np.random.default_rng(seed)
    b = rng.standard_normal(batch + (n, n))
    return engine.tensor(b @ np.swapaxes(b, -1, -2) + n * np.eye(n), dtype=D, requires_grad=True)


def sym(a):
    """Symmetrize before eigh/cholesky, so finite differences move both triangles together."""
    return (a + a.mT) * 0.5


# ---- values and gradients ---------------------------------------------------------------------------
@pytest.mark.parametrize("ord", [2, 1, 3, 0.5, math.inf, -math.inf, -1.5])
def test_vector_norm(ord):
    x = f64(3, 4, seed=1)
    want = np.linalg.norm(x.detach().numpy().ravel(), ord)
    np.testing.assert_allclose(L.vector_norm(x, ord).item(), want, rtol=1e-12)
    gradcheck(lambda t: L.vector_norm(t, ord, dim=1), [x])
    gradcheck(lambda t: L.vector_norm(t, ord, dim=(0, 1), keepdim=True), [x])


def test_vector_norm_zero_order_counts_and_has_no_gradient():
    """As PyTorch 2.13: the 0-norm's backward gives no gradient, so the input's .grad stays None
    (tools/fuzz found the engine writing zeros)."""
    x = engine.tensor([[0.0, 2.0, -1.0], [0.0, 0.0, 3.0]], dtype=D, requires_grad=True)
    assert L.vector_norm(x, 0, dim=1).tolist() == [2.0, 1.0]
    L.vector_norm(x, 0).backward()
    assert x.grad is None
    r = engine.norm(x, 0)
    assert r.grad_fn.name() == "LinalgVectorNormBackward0"
    (r + x.sum()).backward()            # another path still reaches x
    assert x.grad.tolist() == [[1.0] * 3] * 2


def test_norm_double_backward_is_self_times_the_masked_quotient():
    """PyTorch's 2-norm formula ``self * (grad / norm).masked_fill_(norm == 0, 0)``: a create_graph backward
    shows MulBackward0 (tools/fuzz found WhereBackward0); values recorded from PyTorch 2.13."""
    x = engine.tensor([0.125, 1.375, 0.25, 0.875], dtype=D, requires_grad=True)
    (g,) = engine.autograd.grad(x.norm() * 1.5, x, create_graph=True)
    assert g.grad_fn.name() == "MulBackward0"
    g.backward(engine.arange(1, 5, dtype=D) / 4)
    np.testing.assert_allclose(g.tolist(), [0.11338934190276817, 1.2472827609304498, 0.22677868380553634,
                                            0.7937253933193773], rtol=1e-14)
    np.testing.assert_allclose(x.grad.tolist(), [0.1529136267945902, -0.3589582595093348, 0.5326059373947167,
                                                 0.39005933614552235], rtol=1e-13)
    z = engine.zeros(2, dtype=D, requires_grad=True)
    z.norm().backward()
    assert z.grad.tolist() == [0.0, 0.0]


def test_vector_norm_inf_shares_gradient_among_ties_and_zero_norm_gives_zero():
    x = engine.tensor([3.0, -3.0, 1.0], dtype=D, requires_grad=True)
    L.vector_norm(x, math.inf).backward()
    assert x.grad.tolist() == [0.5, -0.5, 0.0]
    z = engine.zeros(3, dtype=D, requires_grad=True)
    L.vector_norm(z, 3).backward()
    assert z.grad.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("ord", ["fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf])
def test_matrix_norm(ord):
    a = f64(2, 3, 4, seed=2)
    want = np.linalg.norm(a.detach().numpy(), ord, axis=(-2, -1))
    np.testing.assert_allclose(L.matrix_norm(a, ord).detach().numpy(), want, rtol=1e-12)
    gradcheck(lambda t: L.matrix_norm(t, ord), [a])
    kept = L.matrix_norm(a, ord, dim=(0, 2), keepdim=True)
    assert tuple(kept.shape) == (1, 3, 1)
    np.testing.assert_allclose(kept.detach().numpy().ravel(),
                               np.linalg.norm(np.moveaxis(a.detach().numpy(), 1, 0), ord, axis=(-2, -1)))


def test_norm_picks_vector_or_matrix_as_pytorch():
    a = f64(3, 4, seed=3)
    h = a.detach().numpy()
    np.testing.assert_allclose(L.norm(a).item(), np.linalg.norm(h.ravel()))
    np.testing.assert_allclose(L.norm(a, 1).item(), np.linalg.norm(h, 1))          # 2-D with ord: matrix
    np.testing.assert_allclose(L.norm(a[0], 1).item(), np.abs(h[0]).sum())          # 1-D: vector
    np.testing.assert_allclose(L.norm(a, 3, dim=1).detach().numpy(), np.linalg.norm(h, 3, axis=1))
    np.testing.assert_allclose(L.norm(a, "nuc", dim=(1, 0)).item(), np.linalg.norm(h.T, "nuc"))


def test_torch_norm_and_tensor_norm_take_any_p():
    a = f64(3, 4, seed=4)
    h = a.detach().numpy()
    np.testing.assert_allclose(engine.norm(a, 1).item(), np.abs(h).sum())
    np.testing.assert_allclose(a.norm(math.inf).item(), np.abs(h).max())
    np.testing.assert_allclose(engine.norm(a, 3, dim=1).detach().numpy(), np.linalg.norm(h, 3, axis=1))
    np.testing.assert_allclose(engine.norm(a, "nuc").item(), np.linalg.norm(h, "nuc"))
    assert engine.norm(a, 1).grad_fn.name() == "LinalgVectorNormBackward0"
    assert engine.norm(a, "nuc").grad_fn.name() == "SumBackward1"
    assert a.norm().grad_fn.name() == "LinalgVectorNormBackward0"


def test_inv_det_slogdet():
    a = well(3, seed=5)
    h = a.detach().numpy()
    np.testing.assert_allclose(L.inv(a).detach().numpy(), np.linalg.inv(h), rtol=1e-12)
    np.testing.assert_allclose(L.det(a).item(), np.linalg.det(h), rtol=1e-12)
    sign, logabs = L.slogdet(a)
    assert (sign.item(), logabs.item()) == pytest.approx(tuple(np.linalg.slogdet(h)))
    gradcheck(L.inv, [a])
    gradcheck(L.det, [a])
    gradcheck(lambda t: L.slogdet(t).logabsdet, [a])
    gradcheck(engine.logdet, [spd(3, seed=5)])


def test_inv_det_second_derivatives():
    a = well(3, seed=6)
    gradgradcheck(L.inv, [a])
    gradgradcheck(L.det, [a])


def test_solve_matrix_vector_batch_and_right():
    a = well(3, batch=(2,), seed=7)
    b = f64(2, 3, 2, seed=8)
    v = f64(2, 3, seed=9)
    ha, hb, hv = (t.detach().numpy() for t in (a, b, v))
    np.testing.assert_allclose(L.solve(a, b).detach().numpy(), np.linalg.solve(ha, hb), rtol=1e-12)
    np.testing.assert_allclose(L.solve(a, v).detach().numpy(), np.linalg.solve(ha, hv[..., None])[..., 0],
                               rtol=1e-12)
    xr = L.solve(a, b.mT, left=False)
    np.testing.assert_allclose((xr @ a).detach().numpy(), np.swapaxes(hb, -1, -2), atol=1e-12)
    gradcheck(L.solve, [a, b])
    gradcheck(L.solve, [a, v])
    gradcheck(lambda x, y: L.solve(x, y, left=False), [a, f64(2, 2, 3, seed=10)])
    gradcheck(L.solve, [a[0].detach().requires_grad_(), b])       # A broadcast over B's batch
    gradgradcheck(L.solve, [well(2, seed=11), f64(2, 2, seed=12)])


def test_cholesky_and_eigh():
    s = spd(3, batch=(2,), seed=13)
    h = s.detach().numpy()
    np.testing.assert_allclose(L.cholesky(s).detach().numpy(), np.linalg.cholesky(h), rtol=1e-12)
    np.testing.assert_allclose(L.cholesky(s, upper=True).detach().numpy(),
                               np.swapaxes(np.linalg.cholesky(h), -1, -2), rtol=1e-12)
    w, v = L.eigh(s)
    hw, hv = np.linalg.eigh(h)
    np.testing.assert_allclose(w.detach().numpy(), hw, rtol=1e-12)
    np.testing.assert_allclose(np.abs(v.detach().numpy()), np.abs(hv), rtol=1e-10)
    np.testing.assert_allclose(L.eigvalsh(s, UPLO="U").detach().numpy(), hw, rtol=1e-12)
    gradcheck(lambda t: L.cholesky(sym(t)), [s])
    gradcheck(lambda t: L.cholesky(sym(t), upper=True), [s])
    gradcheck(lambda t: L.eigvalsh(sym(t)), [s])
    # eigenvectors carry a sign: check a sign-free function of them
    gradcheck(lambda t: (L.eigh(sym(t)).eigenvectors ** 2) * L.eigh(sym(t)).eigenvalues.unsqueeze(-2), [s])


def test_qr_svd_pinv():
    a = f64(4, 3, seed=14)
    h = a.detach().numpy()
    q, r = L.qr(a)
    np.testing.assert_allclose((q @ r).detach().numpy(), h, atol=1e-12)
    gradcheck(lambda t: L.qr(t), [a])
    u, sv, vh = L.svd(a, full_matrices=False)
    np.testing.assert_allclose(sv.detach().numpy(), np.linalg.svd(h, compute_uv=False), rtol=1e-12)
    np.testing.assert_allclose((u * sv.unsqueeze(-2) @ vh).detach().numpy(), h, atol=1e-12)
    gradcheck(L.svdvals, [a])
    gradcheck(L.svdvals, [f64(3, 5, seed=15)])
    # U and Vh carry signs: U diag(S) and the projector U U^T are sign-free
    gradcheck(lambda t: L.svd(t, full_matrices=False).U * L.svd(t, full_matrices=False).S.unsqueeze(-2), [a])
    gradcheck(lambda t: (lambda s: s.Vh.mT @ s.Vh)(L.svd(t, full_matrices=False)), [f64(3, 5, seed=16)])
    gradcheck(lambda t: (lambda s: s.U @ s.Vh)(L.svd(t)), [well(3, seed=17)])    # full_matrices, square
    np.testing.assert_allclose(L.pinv(a).detach().numpy(), np.linalg.pinv(h), rtol=1e-10)
    gradcheck(L.pinv, [a])
    gradcheck(L.pinv, [f64(3, 5, seed=18)])


def test_cross_matrix_rank_lstsq():
    a, b = f64(4, 3, seed=19), f64(3, seed=20)
    np.testing.assert_allclose(L.cross(a, b).detach().numpy(), np.cross(a.detach().numpy(), b.detach().numpy()))
    gradcheck(L.cross, [a, b])
    gradcheck(lambda x, y: L.cross(x, y, dim=0), [f64(3, 2, seed=21), f64(3, 2, seed=22)])
    sing = engine.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    assert L.matrix_rank(sing).item() == 2 and L.matrix_rank(sing).dtype is engine.int64
    assert L.matrix_rank(engine.eye(3, dtype=D), atol=1.5).item() == 0
    A, B = f64(5, 3, seed=23), f64(5, 2, seed=24)
    res = L.lstsq(A, B)
    want = np.linalg.lstsq(A.detach().numpy(), B.detach().numpy(), rcond=None)[0]
    np.testing.assert_allclose(res.solution.detach().numpy(), want, rtol=1e-10)
    assert res.rank.item() == 3 and tuple(res.residuals.shape) == (0,)
    gradcheck(lambda x, y: L.lstsq(x, y).solution, [A, B])
    gradcheck(lambda x, y: L.lstsq(x, y).solution, [f64(2, 4, 3, seed=38), f64(2, 4, seed=39)])   # batched vectors
    node = L.lstsq(A, B).solution.grad_fn
    assert node.name() == "LinalgLstsqBackward0" and node._saved_self is A and node._saved_b is B
    assert L.lstsq(A, B.detach()).solution.grad_fn._saved_b._storage is B._storage
    assert L.lstsq(A.detach(), B).solution.grad_fn._saved_b is None        # B's gradient needs only A


def test_factorization_second_derivatives():
    gradgradcheck(lambda t: L.cholesky(sym(t)), [spd(3, seed=31)])
    gradgradcheck(lambda t: L.eigvalsh(sym(t)), [spd(3, seed=32)])
    gradgradcheck(L.svdvals, [f64(3, 2, seed=33)])
    gradgradcheck(lambda t: L.qr(t).R, [f64(3, 2, seed=34)])
    gradgradcheck(lambda t: L.vector_norm(t, 3), [f64(2, 3, seed=35)])
    gradgradcheck(L.pinv, [f64(2, 3, seed=36)])


def test_compile_runs_linalg_eagerly_and_checkpoint_recomputes_it():
    import warnings
    from engine.utils.checkpoint import checkpoint
    s = spd(3, seed=37)

    def f(t):
        return L.eigh(t).eigenvalues.sum() + L.det(t)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = engine.compile(f)(s)
    assert out.item() == pytest.approx(f(s).item())
    assert any("graph break" in str(w.message) and "linalg_eigh" in str(w.message) for w in caught)
    g = lambda t: L.svdvals(t).sum() * L.slogdet(t).logabsdet    # noqa: E731
    (want,) = engine.autograd.grad(g(s), [s])
    (got,) = engine.autograd.grad(checkpoint(g, s, use_reentrant=False), [s])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


def test_torch_and_tensor_spellings():
    a = well(3, seed=40)
    h = a.detach().numpy()
    assert engine.det(a).item() == pytest.approx(np.linalg.det(h)) and a.det().item() == pytest.approx(np.linalg.det(h))
    np.testing.assert_allclose(engine.inverse(a).detach().numpy(), np.linalg.inv(h), rtol=1e-12)
    np.testing.assert_allclose(a.inverse().detach().numpy(), np.linalg.inv(h), rtol=1e-12)
    assert a.slogdet().logabsdet.item() == pytest.approx(np.linalg.slogdet(h)[1])
    np.testing.assert_allclose(a.pinverse().detach().numpy(), np.linalg.pinv(h), rtol=1e-10)
    assert engine.logdet(a).item() == pytest.approx(math.log(np.linalg.det(h)))
    neg = engine.tensor([[0.0, 1.0], [1.0, 0.0]], dtype=D)          # det -1: log is nan, as PyTorch
    assert math.isnan(engine.logdet(neg).item())
    gradcheck(engine.logdet, [a])


def _walk(node, depth=0):
    if node is None or depth > 6:
        return ""
    kids = ",".join(_walk(n, depth + 1) for n, _ in node.next_functions if n is not None)
    return f"{node.name().rpartition('::')[2]}({kids})"


def test_matrix_power_multi_dot_vecdot_as_pytorch_composes_them():
    a = well(3, seed=41)
    h = a.detach().numpy()
    for n in (0, 1, 2, 3, 4, 5, -2):
        np.testing.assert_allclose(L.matrix_power(a, n).detach().numpy(), np.linalg.matrix_power(h, n), rtol=1e-10)
    gradcheck(lambda t: L.matrix_power(t, 5), [a])
    gradcheck(lambda t: L.matrix_power(t, -2), [a])
    # node trees recorded from PyTorch 2.13
    assert _walk(L.matrix_power(a, 0).grad_fn) == "CopyBackwards(CloneBackward0(AccumulateGrad()))"
    assert _walk(L.matrix_power(a, 5).grad_fn) == (
        "MmBackward0(AccumulateGrad(),MmBackward0(MmBackward0(AccumulateGrad(),AccumulateGrad()),"
        "MmBackward0(AccumulateGrad(),AccumulateGrad())))")
    b, c, v = f64(3, 4, seed=42), f64(4, 2, seed=43), f64(3, seed=44)
    np.testing.assert_allclose(L.multi_dot([a, b, c]).detach().numpy(),
                               h @ b.detach().numpy() @ c.detach().numpy(), rtol=1e-12)
    assert _walk(L.multi_dot([a, b, c]).grad_fn) == ("ViewBackward0(MmBackward0(AccumulateGrad(),MmBackward0("
                                                     "AccumulateGrad(),AccumulateGrad())))")
    assert _walk(L.multi_dot([v, a, b]).grad_fn) == ("ViewBackward0(MmBackward0(MmBackward0(UnsqueezeBackward0("
                                                     "AccumulateGrad()),AccumulateGrad()),AccumulateGrad()))")
    d = f64(2, 5, seed=45)
    four = L.multi_dot([a, b, c, d])
    np.testing.assert_allclose(four.detach().numpy(), h @ b.detach().numpy() @ c.detach().numpy() @ d.detach().numpy(),
                               rtol=1e-12)
    gradcheck(lambda *ts: L.multi_dot(list(ts)), [v, a, b, c])
    assert tuple(L.multi_dot([v, a, b, c, f64(2, seed=46)]).shape) == ()
    assert _walk(L.vecdot(a, a).grad_fn) == "SumBackward1(MulBackward0(AccumulateGrad(),AccumulateGrad()))"
    np.testing.assert_allclose(L.vecdot(a, b[:, :3].mT, dim=0).detach().numpy(),
                               (h * b.detach().numpy()[:, :3].T).sum(0))
    assert L.diagonal(a).tolist() == np.diagonal(h).tolist()
    with pytest.raises(RuntimeError, match=r"^multi_dot\(\): tensors 0 and 1 with shapes \[3, 3\] and \[4, 2\] "
                                           r"cannot be multiplied$"):
        L.multi_dot([a, c])
    with pytest.raises(RuntimeError, match=r"^multi_dot\(\): tensor 1 must be 2D but got 3D$"):
        L.multi_dot([a, f64(2, 2, 2), a])


# ---- graph facts -------------------------------------------------------------------------------------
def test_node_names_and_saved_tensors_are_pytorchs():
    a = well(3, seed=25)
    inv = L.inv(a)
    assert inv.grad_fn.name() == "LinalgInvExBackward0"
    assert inv.grad_fn._saved_inverse._storage is inv._storage        # the output, kept without a cycle
    d = L.det(a)
    assert d.grad_fn.name() == "LinalgDetBackward0" and d.grad_fn._saved_A is a
    sign, logabs = L.slogdet(a)
    assert sign.grad_fn is logabs.grad_fn and (sign._output_nr, logabs._output_nr) == (0, 1)
    assert logabs.grad_fn.name() == "LinalgSlogdetBackward0"
    w, v = L.eigh(spd(3))
    assert w.grad_fn is v.grad_fn and w.grad_fn.name() == "LinalgEighBackward0"
    node = v.grad_fn
    assert node._saved_eigenvalues._storage is w._storage and node._saved_eigenvectors._storage is v._storage
    u, s, vh = L.svd(a)
    assert s.grad_fn.name() == "LinalgSvdBackward0" and u.grad_fn is vh.grad_fn is s.grad_fn
    assert L.svdvals(a).grad_fn.name() == "LinalgSvdBackward0"
    assert L.qr(a).R.grad_fn.name() == "LinalgQrBackward0"
    assert L.cholesky(spd(3)).grad_fn.name() == "LinalgCholeskyExBackward0"
    assert L.solve(a, a).grad_fn.name() == "LinalgSolveExBackward0"
    assert L.pinv(a).grad_fn.name() == "LinalgPinvBackward0"
    assert L.cross(a, a).grad_fn.name() == "LinalgCrossBackward0"
    assert L.vector_norm(a, 1).grad_fn._saved_ord == 1.0
    assert L.matrix_norm(a, 1).grad_fn.name() == "AmaxBackward0"
    assert L.matrix_norm(a, -2).grad_fn.name() == "AminBackward0"


def test_one_output_gradient_reaches_the_shared_node():
    a = well(3, seed=26)
    w, v = L.eigh(sym(a))
    w.sum().backward()          # only the eigenvalues get a gradient: d sum(eig) / dA = I
    np.testing.assert_allclose(a.grad.numpy(), np.eye(3), atol=1e-12)
    del v


def test_saved_outputs_free_with_the_graph():
    base = engine.memory.memory_allocated()
    a = well(4, seed=27)
    after_leaf = engine.memory.memory_allocated()
    u, s, vh = L.svd(a)
    del u, s, vh
    assert engine.memory.memory_allocated() == after_leaf >= base


def test_several_outputs_record_one_op_event():
    a = spd(3)
    with engine.record() as tr:
        w, v = L.eigh(a)
    ops = [e for e in tr.events if e["kind"] == "op"]
    assert [e["op"] for e in ops] == ["linalg_eigh"]
    node = ops[0]["node"]
    assert node["name"] == "LinalgEighBackward0"
    assert [(x["name"], x["is_output"]) for x in node["saved"]] == [("eigenvalues", True), ("eigenvectors", True)]


def test_no_grad_gives_plain_outputs():
    with engine.no_grad():
        w, v = L.eigh(spd(3))
    assert w.grad_fn is None and v.grad_fn is None and not v.requires_grad


# ---- errors in PyTorch's words -----------------------------------------------------------------------
SING = [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]


@pytest.mark.parametrize("code, exc, message", [
    ("L.inv(engine.eye(3, dtype=engine.int64))", RuntimeError,
     "linalg.inv: Expected a floating point or complex tensor as input. Got Long"),
    ("L.inv(engine.randn(3, 4))", RuntimeError,
     "linalg.inv: A must be batches of square matrices, but they are 3 by 4 matrices"),
    ("L.inv(engine.randn(3))", RuntimeError, "linalg.inv: The input tensor A must have at least 2 dimensions."),
    ("L.inv(engine.tensor(SING))", L.LinAlgError,
     "linalg.inv: The diagonal element 3 is zero, the inversion could not be completed because the input matrix "
     "is singular."),
    ("L.inv(engine.zeros(3, 3))", L.LinAlgError,
     "linalg.inv: The diagonal element 1 is zero, the inversion could not be completed because the input matrix "
     "is singular."),
    ("L.inv(engine.stack([engine.eye(3), engine.tensor(SING)]))", L.LinAlgError,
     "linalg.inv: (Batch element 1): The diagonal element 3 is zero, the inversion could not be completed because "
     "the input matrix is singular."),
    ("L.solve(engine.tensor(SING), engine.randn(3))", L.LinAlgError,
     "torch.linalg.solve: The solver failed because the input matrix is singular."),
    ("L.solve(engine.eye(3), engine.randn(4, 2))", RuntimeError,
     "linalg.solve: Incompatible shapes of A and B for the equation AX = B (3x3 and 4x2)"),
    ("L.cholesky(engine.tensor([[1.0, 2.0], [2.0, 1.0]]))", L.LinAlgError,
     "linalg.cholesky: The factorization could not be completed because the input is not positive-definite (the "
     "leading minor of order 2 is not positive-definite)."),
    ("L.cholesky(engine.stack([engine.eye(2), engine.tensor([[1.0, 2.0], [2.0, 1.0]])]))", L.LinAlgError,
     "linalg.cholesky: (Batch element 1): The factorization could not be completed because the input is not "
     "positive-definite (the leading minor of order 2 is not positive-definite)."),
    ("L.qr(engine.randn(3, 3), mode='x')", RuntimeError,
     "qr received unrecognized mode 'x' but expected one of 'reduced' (default), 'r', or 'complete'"),
    ("L.eigh(engine.eye(3), UPLO='X')", RuntimeError, "Expected UPLO argument to be 'L' or 'U', but got X"),
    ("L.eigh(engine.randn(3, 4))", RuntimeError,
     "linalg.eigh: A must be batches of square matrices, but they are 3 by 4 matrices"),
    ("L.svdvals(engine.eye(3, dtype=engine.int64))", RuntimeError,
     "linalg.svd: Expected a floating point or complex tensor as input. Got Long"),
    ("L.pinv(engine.randn(3))", RuntimeError,
     "linalg.pinv(Float{[3]}): expected a tensor with 2 or more dimensions of float, double, cfloat or cdouble "
     "types"),
    ("L.matrix_rank(engine.eye(3, dtype=engine.int64))", RuntimeError,
     "This function doesn't handle types other than float and double"),
    ("L.cross(engine.randn(4), engine.randn(4))", RuntimeError,
     "linalg.cross: inputs dimension -1 must have length 3. Got 4 and 4"),
    ("L.vector_norm(engine.tensor([1, 2, 3]))", RuntimeError,
     "linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long"),
    ("L.vector_norm(engine.randn(3), 'fro')", TypeError,
     "linalg_vector_norm(): argument 'ord' (position 2) must be Number, not str"),
    ("L.vector_norm(engine.zeros(0), -1)", RuntimeError,
     "linalg.vector_norm cannot compute the -1 norm on an empty tensor because the operation does not have an "
     "identity"),
    ("L.matrix_norm(engine.randn(3))", RuntimeError,
     "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."),
    ("L.matrix_norm(engine.randn(3, 3), 3)", RuntimeError, "linalg.matrix_norm: Order 3 not supported."),
    ("L.norm(engine.randn(2, 3, 3), 2)", RuntimeError,
     "linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got 3D."),
    ("L.norm(engine.randn(2, 3, 3), dim=(0, 1, 2))", RuntimeError,
     "linalg.norm: If dim is specified, it must be of length 1 or 2. Got [0, 1, 2]"),
    ("engine.norm(engine.randn(3, 3), 'abc')", RuntimeError, "linalg.matrix_norm: Order abc not supported."),
])
def test_errors(code, exc, message):
    with pytest.raises(exc) as info:
        eval(code, {"engine": engine, "L": L, "SING": SING})
    assert str(info.value) == message
    assert isinstance(info.value, RuntimeError) or exc is TypeError


def test_linalg_error_is_a_runtime_error_and_linalg_is_reachable_from_engine():
    import subprocess
    import sys
    assert issubclass(L.LinAlgError, RuntimeError)
    out = subprocess.run([sys.executable, "-c", "import engine; print(engine.linalg.det(engine.eye(2)).item())"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1.0"


def test_inv_ex_and_cholesky_ex_report_info():
    a = well(3, seed=47)
    inverse, info = L.inv_ex(a)
    assert info.item() == 0 and info.dtype is engine.int64 and inverse.grad_fn.name() == "LinalgInvExBackward0"
    batch = engine.stack([engine.eye(3, dtype=D), engine.tensor(SING, dtype=D)])
    inverse, info = L.inv_ex(batch)
    assert info.tolist() == [0, 3]
    assert inverse[0].tolist() == np.eye(3).tolist() and bool(inverse[1].isnan().all())
    with pytest.raises(L.LinAlgError, match=r"^linalg.inv: \(Batch element 1\): The diagonal element 3 is zero"):
        L.inv_ex(batch, check_errors=True)
    low, info = L.cholesky_ex(engine.stack([spd(2).detach(), engine.tensor([[1.0, 2.0], [2.0, 1.0]], dtype=D)]))
    assert info.tolist() == [0, 2] and bool(low[1].isnan().all())
    np.testing.assert_allclose(low[0].numpy(), np.linalg.cholesky(spd(2).detach().numpy()))
    assert L.cholesky_ex(spd(3)).L.grad_fn.name() == "LinalgCholeskyExBackward0"


def test_qr_mode_r_has_no_gradient_through_q():
    a = f64(4, 3, seed=28)
    q, r = L.qr(a, mode="r")
    assert tuple(q.shape) == (0,)
    with pytest.raises(RuntimeError, match="depends on Q, which is not computed when mode='r'"):
        r.sum().backward()


# ---- array_api_strict ----------------------------------------------------------------------------------
def _strict_run(fn, make):
    x = make()
    out = fn(x)
    out.backward(engine.ones_like(out))
    return out, x.grad


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", ["inv", "det", "solve", "cholesky", "svdvals", "eigvalsh", "pinv", "qr_r",
                                  "vector_norm3", "slogdet"])
def test_other_backends_match_numpy(name, backend):
    fns = {"inv": L.inv, "det": L.det, "solve": lambda t: L.solve(t, t[0]),
           "cholesky": lambda t: L.cholesky(t @ t.mT), "svdvals": L.svdvals,
           "eigvalsh": lambda t: L.eigvalsh(sym(t)), "pinv": L.pinv, "qr_r": lambda t: L.qr(t).R,
           "vector_norm3": lambda t: L.vector_norm(t, 3, dim=0), "slogdet": lambda t: L.slogdet(t).logabsdet}
    ref_out, ref_grad = _strict_run(fns[name], lambda: well(3, seed=29))
    with on_backend(backend):
        out, grad = _strict_run(fns[name], lambda: well(3, seed=29))
    assert_matches(backend, [out, grad], [ref_out, ref_grad], rtol=1e-10)


def exercise_linalg_ops():
    """One differentiable call of each linalg row (tests/ops/test_ops_grad.py checks that every table op
    is exercised)."""
    a, s = well(3, seed=30), spd(3, seed=30)
    for out in (L.vector_norm(a, 3), L.inv(a), L.det(a), L.slogdet(a).logabsdet, L.solve(a, a[0]),
                L.cholesky(s), L.qr(a).R, L.svdvals(a), L.eigvalsh(s), L.pinv(a), L.cross(a, a * 2),
                L.lstsq(a, a[:, :1]).solution):
        out.sum().backward()
