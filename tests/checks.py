"""Helpers for the engine tests: finite-difference gradient checks.

``gradcheck(fn, inputs)`` compares the gradient autograd computes with central
differences; ``gradgradcheck(fn, inputs)`` does the same for the gradient of the
gradient (built with ``create_graph=True``). Inputs are float64 tensors; the ones
with ``requires_grad`` are checked.
"""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import engine
from engine import autograd

EPS = 1e-6
ATOL = 1e-5
RTOL = 1e-5


def _outputs(out):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in outs if isinstance(o, engine.Tensor) and o.dtype.is_floating_point]


def _projections(outs, seed):
    """Fixed random cotangents, one per output (so every output element matters)."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(tuple(o.shape)) for o in outs]


def _scalar(fn, args, vs):
    """sum_k <fn(args)_k, v_k> as a Python float."""
    outs = _outputs(fn(*args))
    return float(sum(np.sum(o.numpy(force=True).astype(np.float64) * v) for o, v in zip(outs, vs)))


def numerical_grads(fn, inputs, vs, eps=EPS):
    grads = []
    for k, x in enumerate(inputs):
        if not (isinstance(x, engine.Tensor) and x.requires_grad):
            grads.append(None)
            continue
        base = x.detach().cpu().numpy().copy()
        g = np.zeros_like(base)
        flat = g.reshape(-1)
        for i in range(base.size):
            vals = []
            for step in (eps, -eps):
                pert = base.copy().reshape(-1)
                pert[i] += step
                args = list(inputs)
                args[k] = engine.tensor(pert.reshape(base.shape), dtype=x.dtype, requires_grad=True)
                vals.append(_scalar(fn, args, vs))
            flat[i] = (vals[0] - vals[1]) / (2 * eps)
        grads.append(g)
    return grads


def analytical_grads(fn, inputs, vs):
    pairs = [(o, v) for o, v in zip(_outputs(fn(*inputs)), vs) if o.requires_grad]  # constants add 0
    diff = [x for x in inputs if isinstance(x, engine.Tensor) and x.requires_grad]
    got = autograd.grad([o for o, _ in pairs], diff, [engine.tensor(v, dtype=o.dtype) for o, v in pairs],
                        allow_unused=True)
    it = iter(got)
    res = []
    for x in inputs:
        if isinstance(x, engine.Tensor) and x.requires_grad:
            g = next(it)
            res.append(np.zeros(tuple(x.shape)) if g is None else g.numpy(force=True))
        else:
            res.append(None)
    return res


def gradcheck(fn, inputs, eps=EPS, atol=ATOL, rtol=RTOL, seed=0):
    """Assert autograd's gradients of ``fn`` at ``inputs`` match central differences."""
    inputs = list(inputs)
    for x in inputs:
        if isinstance(x, engine.Tensor) and x.requires_grad:
            assert x.dtype is engine.float64, "gradcheck needs float64 inputs"
    outs = _outputs(fn(*inputs))
    assert outs, "fn returned no floating point output"
    vs = _projections(outs, seed)
    ana = analytical_grads(fn, inputs, vs)
    num = numerical_grads(fn, inputs, vs, eps)
    for k, (a, n) in enumerate(zip(ana, num)):
        if n is None:
            continue
        assert a.shape == n.shape, f"input {k}: gradient shape {a.shape} != {n.shape}"
        np.testing.assert_allclose(a, n, atol=atol, rtol=rtol, err_msg=f"gradient of input {k}")
    return True


def gradgradcheck(fn, inputs, eps=EPS, atol=ATOL, rtol=RTOL, seed=0):
    """Assert second derivatives (through ``create_graph=True``) match finite differences."""
    inputs = list(inputs)
    outs = _outputs(fn(*inputs))
    vs = _projections(outs, seed)
    diff_pos = [i for i, x in enumerate(inputs) if isinstance(x, engine.Tensor) and x.requires_grad]

    def first_grads(*args):
        outs = _outputs(fn(*args))
        diff = [args[i] for i in diff_pos]
        gs = autograd.grad(outs, diff, [engine.tensor(v, dtype=o.dtype) for o, v in zip(outs, vs)],
                           create_graph=True, allow_unused=True, materialize_grads=True)
        return tuple(gs)

    assert any(g.requires_grad for g in first_grads(*inputs)), "create_graph=True gave gradients without a graph"
    return gradcheck(first_grads, inputs, eps, atol, rtol, seed=seed + 1)


def f64(*shape, low=None, seed=None, requires_grad=True):
    """A float64 leaf with values from a fixed generator (optionally bounded below)."""
    rng = np.random.default_rng(seed if seed is not None else sum(shape) * 7 + len(shape))
    a = rng.standard_normal(shape)
    if low is not None:
        a = np.abs(a) + low
    return engine.tensor(a, dtype=engine.float64, requires_grad=requires_grad)


# ---- other backends: the same cases off NumPy ---------------------------------------------
NO_GPU = "no CUDA GPU visible to CuPy"

#: ``array_api_strict`` stands in for a non-NumPy namespace on the CPU; ``cuda`` runs on CuPy.
BACKENDS = ["array_api_strict",
            pytest.param("cuda", marks=pytest.mark.skipif(not engine.cuda.is_available(), reason=NO_GPU))]

#: How close each backend must come to NumPy: strict runs NumPy's own kernels, the GPU its own
#: (other summation orders and libm).
TOLERANCE = {"array_api_strict": dict(rtol=1e-12, atol=1e-12), "cuda": dict(rtol=1e-9, atol=1e-11)}


def tolerance(name, dtype="float64"):
    """``TOLERANCE[name]``, widened to a few float32 ulp for float32 results on the GPU."""
    if name == "cuda" and str(dtype).endswith("float32"):
        return dict(rtol=1e-6, atol=1e-7)
    return TOLERANCE[name]


@contextlib.contextmanager
def on_backend(name):
    """CPU tensors on ``array_api_strict``, or factories making CUDA tensors, inside the block."""
    if name == "cuda":
        old = engine.get_default_device()
        engine.set_default_device("cuda")
        try:
            yield
        finally:
            engine.set_default_device(old)
    else:
        from engine.backend.device import cpu_namespace
        with cpu_namespace(pytest.importorskip("array_api_strict")):
            yield


@pytest.fixture(params=["numpy", *BACKENDS])
def each_backend(request):
    """The test runs on NumPy, then again inside ``on_backend`` for each other backend."""
    if request.param == "numpy":
        yield "numpy"
        return
    with on_backend(request.param):
        yield request.param


def assert_ran_on(name, *tensors):
    """Each tensor (None allowed) lives on ``name``'s arrays: the work really ran there."""
    for t in tensors:
        if t is None:
            continue
        if name == "cuda":
            assert t.is_cuda and type(t._data).__module__.startswith("cupy"), type(t._data)
        else:
            assert type(t._data).__module__.startswith("array_api_strict"), type(t._data)


def host(t):
    """A tensor's values as a NumPy array, from any device (None stays None)."""
    return None if t is None else np.asarray(t.detach().cpu().numpy())


def assert_matches(name, got, ref, **tol):
    """Tensors from backend ``name`` equal the NumPy run's (lists may hold None in the same places)."""
    got = list(got) if isinstance(got, (list, tuple)) else [got]
    ref = list(ref) if isinstance(ref, (list, tuple)) else [ref]
    assert len(got) == len(ref)
    for k, (g, r) in enumerate(zip(got, ref)):
        assert (g is None) == (r is None), f"item {k}"
        if g is not None:
            assert_ran_on(name, g)
            assert g.dtype is r.dtype and tuple(g.shape) == tuple(r.shape), f"item {k}"
            np.testing.assert_allclose(host(g), host(r), err_msg=f"item {k}", **{**tolerance(name, r.dtype), **tol})


def matches_numpy(name, run, **tol):
    """``run()`` on NumPy, then inside ``on_backend(name)``: the tensors it returns (a tensor, or a
    list or tuple with None allowed) must agree (:func:`assert_matches`)."""
    ref = run()
    with on_backend(name):
        got = run()
    assert_matches(name, got, ref, **tol)


@pytest.fixture
def recorded():
    """``with recorded() as trace`` inside a test; same as engine.record()."""
    return engine.record
