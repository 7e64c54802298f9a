"""Complex tensors: gradients against finite differences (real and imaginary parts perturbed apart),
view semantics of view_as_real / view_as_complex / .real / .imag, the conj bit, saved tensors and
their bytes, and the bytes a recorded trace shows."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import engine as torch

RNG = np.random.default_rng(7)
C3 = RNG.normal(size=(3,)) + 1j * RNG.normal(size=(3,))
C34 = RNG.normal(size=(3, 4)) + 1j * RNG.normal(size=(3, 4))
C42 = RNG.normal(size=(4, 2)) + 1j * RNG.normal(size=(4, 2))
R3 = RNG.uniform(0.5, 2.0, size=(3,))
W = RNG.normal(size=(64, 2))     # weights of the real loss read off a complex output


def _loss(out):
    """A real scalar from any output: a weighted sum of its real (and imaginary) parts."""
    flat = out.reshape(-1)
    if out.dtype.is_complex:
        parts = torch.view_as_real(flat)
        return (parts * torch.tensor(W[:flat.shape[0]], dtype=parts.dtype)).sum()
    return (flat * torch.tensor(W[:flat.shape[0], 0], dtype=flat.dtype)).sum()


def _numeric_grad(fn, arrays, k, eps=1e-6):
    """dL/d(re) + i dL/d(im) of input k by central differences (a real input: dL/dx)."""
    base = arrays[k]
    grad = np.zeros(base.shape, dtype=base.dtype)
    steps = (1.0, 1j) if np.iscomplexobj(base) else (1.0,)
    for idx in np.ndindex(base.shape):
        for step in steps:
            vals = []
            for sign in (1.0, -1.0):
                moved = [a.copy() for a in arrays]
                moved[k][idx] = moved[k][idx] + sign * eps * step
                vals.append(_loss(fn(*[torch.tensor(a) for a in moved])).item())
            grad[idx] += (vals[0] - vals[1]) / (2 * eps) * (1.0 if step == 1.0 else 1j)
    return grad


CASES = {
    "mul": (lambda a, b: a * b, [C3, C3[::-1].copy()]),
    "div": (lambda a, b: a / b, [C3, C3[::-1].copy()]),
    "add_sub": (lambda a, b: (a + b) - 2 * b, [C3, C3[::-1].copy()]),
    "broadcast_mul": (lambda a, b: a.reshape(3, 1) * b.reshape(1, 3), [C3, C3[::-1].copy()]),
    "matmul": (lambda a, b: a @ b, [C34, C42]),
    "sum_dim_mean": (lambda a: a.sum(0) + a.mean(1).sum(), [C34]),
    "exp": (lambda a: a.exp(), [C3]),
    "log_sqrt": (lambda a: a.log() + a.sqrt(), [C3]),
    "sin_cos_tanh_sigmoid": (lambda a: a.sin() * a.cos() + a.tanh() - a.sigmoid(), [C3]),
    "reciprocal_pow": (lambda a: a.reciprocal() + a ** 3, [C3]),
    "abs": (lambda a: a.abs(), [C3]),
    "sgn": (lambda a: a.sgn(), [C3]),
    "pow_complex": (lambda a, b: a ** b + a ** 0.5 + 2 ** a + a ** 2, [C3, C3[::-1] * 0.5]),
    "angle": (lambda a: a.angle(), [C3]),
    "real_imag": (lambda a: a.real * 2 - a.imag * a.real, [C3]),
    "prod_cumsum_cat": (lambda a: a.prod() + a.prod(0) * 2 + torch.cat([a.cumsum(0), a[1:]]) * torch.stack([a, a]).sum(0)[0], [C3]),
    "mH": (lambda a: a.mH @ a, [C34]),
    "conj": (lambda a, b: a.conj() * b, [C3, C3[::-1].copy()]),
    "polar": (lambda r, t: torch.polar(r, t), [R3, C3.real.copy()]),
    "complex": (lambda r, i: torch.complex(r, i) * torch.complex(i, r), [R3, C3.imag.copy()]),
    "real_times_complex": (lambda r, c: r * c + c * 1j, [R3, C3]),
    "view_as_complex_real": (lambda x: torch.view_as_real(torch.view_as_complex(x) ** 2), [C42.real.copy()]),
    "flatten_reshape_view": (lambda a: a.reshape(4, 3).flatten().view(2, 6) * a.reshape(2, 6), [C34]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_match_finite_differences(name):
    fn, arrays = CASES[name]
    leaves = [torch.tensor(a, requires_grad=True) for a in arrays]
    _loss(fn(*leaves)).backward()
    for k, leaf in enumerate(leaves):
        assert leaf.grad.dtype is leaf.dtype
        np.testing.assert_allclose(leaf.grad.numpy(), _numeric_grad(fn, arrays, k), rtol=1e-6, atol=1e-6)


def test_second_order_gradient_of_a_complex_product():
    """create_graph=True runs the conjugating formulas on tensors (NOTE [ Complex gradients ] 2)."""
    def inner(z):
        return (z * z * torch.tensor(C3[::-1].copy())).abs().sum()

    def gnorm(a):
        z = torch.tensor(a, requires_grad=True)
        (g,) = torch.autograd.grad(inner(z), z, create_graph=True)
        return g

    z = torch.tensor(C3, requires_grad=True)
    (g,) = torch.autograd.grad(inner(z), z, create_graph=True)
    _loss(g).backward()
    eps, want = 1e-6, np.zeros(3, dtype=complex)
    for i in range(3):
        for step in (1.0, 1j):
            hi, lo = C3.copy(), C3.copy()
            hi[i] += eps * step
            lo[i] -= eps * step
            d = (_loss(gnorm(hi)).item() - _loss(gnorm(lo)).item()) / (2 * eps)
            want[i] += d * (1.0 if step == 1.0 else 1j)
    np.testing.assert_allclose(z.grad.numpy(), want, rtol=1e-5, atol=1e-5)


# ---- views --------------------------------------------------------------------------------------------
def test_writing_through_view_as_real_changes_the_complex_tensor():
    z = torch.tensor([1 + 2j, 3 - 4j])
    r = torch.view_as_real(z)
    assert r.shape == (2, 2) and r.dtype is torch.float32
    r[1, 1] = 7.0
    r[0] *= 2
    assert z.tolist() == [2 + 4j, 3 + 7j]
    assert r._base is z and r.data_ptr() == z.data_ptr() and r.stride() == (2, 1)
    assert r._version == z._version == 3      # r[0] *= 2 is an in-place mul and a setitem, as in PyTorch


def test_view_as_complex_shares_storage_both_ways():
    x = torch.arange(8.0).reshape(2, 2, 2)
    z = torch.view_as_complex(x)
    assert z.shape == (2, 2) and z.dtype is torch.complex64 and z.data_ptr() == x.data_ptr()
    z[0, 1] = 10 - 1j
    assert x[0, 1].tolist() == [10.0, -1.0]
    x[1, 0, 1] = 5.0
    assert z[1, 0].item() == 4 + 5j
    # strided inputs PyTorch accepts: every other row, a column window of even stride
    assert torch.view_as_complex(torch.arange(8.0).reshape(4, 2)[::2]).tolist() == [0 + 1j, 4 + 5j]
    assert torch.view_as_complex(torch.arange(8.0).reshape(2, 4)[:, 2:]).tolist() == [2 + 3j, 6 + 7j]


def test_real_and_imag_are_writable_views():
    z = torch.tensor([1 + 2j, 3 - 4j])
    z.real[0] = 9.0
    z.imag.mul_(-1)
    assert z.tolist() == [9 - 2j, 3 + 4j]
    assert z.real.data_ptr() == z.data_ptr()
    assert z.imag.stride() == (2,)


def test_conj_bit_and_resolve_conj():
    z = torch.tensor([1 + 2j, 3 - 4j])
    c = z.conj()
    assert c.is_conj() and not z.is_conj()
    assert c.tolist() == [1 - 2j, 3 + 4j]
    r = c.resolve_conj()
    assert not r.is_conj() and r.tolist() == c.tolist() and r.data_ptr() != c.data_ptr()
    assert z.resolve_conj() is z
    assert c.imag.tolist() == [-2.0, 4.0]        # .real/.imag of a conj tensor read the conjugate
    f = torch.ones(2)
    assert f.conj() is f and not f.conj().is_conj() and f.real is f
    assert torch.conj_physical(z).grad_fn is None and not torch.conj_physical(z).is_conj()


def test_promotion_and_type_as():
    f32, f64 = torch.ones(2), torch.ones(2, dtype=torch.float64)
    c64 = torch.tensor([1j, 2])
    assert (f32 * c64).dtype is torch.complex64
    assert (f64 * 1j).dtype is torch.complex128
    assert (f64 * c64).dtype is torch.complex128
    assert (c64 + 1).dtype is torch.complex64
    assert torch.tensor([1 + 2j], dtype=torch.complex128).dtype is torch.complex128
    assert torch.tensor(np.array([1j], dtype=np.complex128)).dtype is torch.complex128
    assert torch.zeros(2, dtype=torch.complex64).tolist() == [0j, 0j]
    assert torch.complex(f64, f64).dtype is torch.complex128
    with pytest.warns(UserWarning, match="^Casting complex values to real discards the imaginary part$"):
        back = c64.type_as(f64)
    assert back.dtype is torch.float64 and back.tolist() == [0.0, 2.0]
    assert c64.is_complex() and torch.is_complex(c64) and not f32.is_complex()
    assert c64.abs().dtype is torch.float32 and c64.angle().dtype is torch.float32


# ---- saved tensors and bytes ------------------------------------------------------------------------------
def test_saved_tensors_are_what_pytorch_saves():
    z = torch.tensor(C3.astype(np.complex64), requires_grad=True)
    w = torch.tensor(C3[::-1].astype(np.complex64), requires_grad=True)
    m = z * w
    assert m.grad_fn._saved_self is z and m.grad_fn._saved_other is w
    p = torch.polar(torch.ones(3, requires_grad=True), torch.zeros(3))
    assert p.grad_fn._saved_result.dtype is torch.complex64
    assert z.angle().grad_fn._saved_self is z and z.abs().grad_fn._saved_self is z
    re, im = torch.ones(3, requires_grad=True), torch.zeros(3)
    node = torch.complex(re, im).grad_fn
    assert node._saved_real is re and node._saved_imag is None        # as PyTorch: only the part that needs a grad
    assert torch.conj(z).grad_fn.name() == "ConjBackward0" and not hasattr(torch.view_as_real(z).grad_fn, "_saved_self")
    e = z.exp()
    assert e.grad_fn._saved_result.data_ptr() == e.data_ptr()


def _activation_bytes():
    gc.collect()
    return torch.memory.memory_stats().get("allocated_bytes.activation.current", 0)


def test_complex64_is_eight_bytes_an_element_and_views_cost_nothing():
    base = torch.memory.memory_allocated()
    z = torch.zeros(5, dtype=torch.complex64)
    assert torch.memory.memory_allocated() - base == 40 and z.element_size() == 8 and z.nbytes == 40
    r = torch.view_as_real(z)
    assert torch.memory.memory_allocated() - base == 40 and r.element_size() == 4
    d = torch.zeros(5, dtype=torch.complex128)
    assert torch.memory.memory_allocated() - base == 120 and d.element_size() == 16
    del z, r, d


def test_activation_bytes_of_the_rotary_product():
    act = _activation_bytes()
    x = torch.randn(2, 4, 8, requires_grad=True) * 1.0          # an op output: 256 bytes
    xc = torch.view_as_complex(x.reshape(2, 4, 4, 2))           # a view: no bytes of its own
    f = torch.polar(torch.ones(4, 4), torch.randn(4, 4))        # 16 complex64 numbers: 128 bytes
    assert _activation_bytes() - act == 0
    out = xc * f                     # only xc needs a gradient: mul keeps f (grad * f.conj())
    assert _activation_bytes() - act == 128
    f.requires_grad_()
    out2 = xc * f                    # f needs one too: mul keeps xc, whose bytes are x's
    assert _activation_bytes() - act == 128 + 256
    del out, out2
    assert _activation_bytes() - act == 0


def test_a_recorded_trace_shows_complex_bytes_and_shared_storages():
    with torch.trace.record() as tr:
        x = torch.randn(3, 4, 2, requires_grad=True)
        z = torch.view_as_complex(x)
        y = z * torch.tensor([1 + 1j, 2j, 3, 4 - 1j])
        (torch.view_as_real(y) ** 2).sum().backward()
    ops = {e["op"]: e for e in tr.events if e["kind"] == "op"}
    vc = ops["view_as_complex"]
    assert vc["output"]["dtype"] == "complex64" and vc["output"]["bytes"] == 96
    assert vc["output"]["storage"] == vc["inputs"][0]["storage"]
    assert ops["mul"]["inputs"][1]["bytes"] == 32 and ops["mul"]["output"]["bytes"] == 96
    vr = ops["view_as_real"]
    assert vr["output"]["storage"] == ops["mul"]["output"]["storage"] == vr["inputs"][0]["storage"]
    allocs = [e for e in tr.events if e["kind"] == "alloc" and e["phase"] == "forward"]
    # x (96), the complex constant (32), the product (96), the square (96), the sum (4), the seed (4)
    assert [e["bytes"] for e in allocs] == [96, 32, 96, 96, 4, 4]
    grads = [e for e in tr.events if e["kind"] == "alloc" and e["category"] == "gradient"]
    assert [e["bytes"] for e in grads] == [96]


def exercise_complex_ops():
    """One call of each complex row, for tests/ops/test_ops_grad.py's check that every row runs."""
    z = torch.tensor(C3, requires_grad=True)
    r = torch.tensor(R3, requires_grad=True)
    torch.view_as_complex(torch.view_as_real(z * 1.0))
    torch.complex(r, r)
    torch.polar(r, r)
    z.conj()
    z.angle()
    (g,) = torch.autograd.grad(z.abs().sum(), z, create_graph=True)     # sgn of a complex tensor
    return g


def test_exercise_complex_ops_reaches_every_complex_row():
    with torch.trace.record() as tr:
        g = exercise_complex_ops()
    assert g.grad_fn is not None
    seen = {e["op"] for e in tr.events if e["kind"] == "op"}
    assert {"view_as_real", "view_as_complex", "complex", "polar", "conj", "angle_complex", "sgn_complex"} <= seen


@pytest.mark.parametrize("expr, row", [("z.exp2()", "exp2"), ("torch.vdot(z, z)", "vdot"), ("z.log10()", "log10")])
def test_rows_without_a_complex_kernel_refuse_complex_inputs(expr, row):
    """NOTE [ Complex gradients ] 4: PyTorch's error type and wording, naming the row (no NumPy error)."""
    scope = {"torch": torch, "z": torch.tensor([1 + 2j, 3 - 1j])}
    with pytest.raises(NotImplementedError, match=f"^\"{row}\" not implemented for 'ComplexFloat'$"):
        eval(expr, scope)


def test_pow_with_complex_operands_matches_numpy():
    a = np.array([1 + 2j, -4j, -3 + 0.5j])
    z = torch.tensor(a, dtype=torch.complex128)
    np.testing.assert_allclose((z ** 0.5).numpy(), a ** 0.5, rtol=1e-12)
    np.testing.assert_allclose((2 ** z).numpy(), 2 ** a, rtol=1e-12)
    np.testing.assert_allclose((z ** z).numpy(), a ** a, rtol=1e-12)
    np.testing.assert_allclose((torch.tensor([2.0, 3.0, 4.0], dtype=torch.float64) ** z).numpy(),
                               np.array([2.0, 3.0, 4.0]) ** a, rtol=1e-12)
