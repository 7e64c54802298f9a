"""NOTE [ erf ]: Cody's erf against math.erf, on NumPy and on array_api_strict."""
from __future__ import annotations

import math

import array_api_compat.numpy as anp
import array_api_strict as xs
import numpy as np
import pytest

from engine.backend.gaps import erf

EDGES = [0.0, -0.0, 0.46875, -0.46875, np.nextafter(0.46875, 1), 4.0, -4.0, np.nextafter(4.0, 5), 1e-300, -1e-300,
         26.5, 30.0, -40.0, np.inf, -np.inf, np.nan]


def _grid():
    return np.concatenate([np.linspace(-9.0, 9.0, 200_001), np.array(EDGES)])


def _reference(x):
    return np.array([math.erf(v) for v in x.tolist()])


@pytest.mark.parametrize("backend", ["numpy", "array_api_strict"])
def test_float64_within_four_ulp_of_math_erf_with_signs_nan_and_infinities(backend):
    x = _grid()
    got = erf(anp, x) if backend == "numpy" else np.asarray(erf(xs, xs.asarray(x)))
    want = _reference(x)
    assert got.dtype == np.float64
    assert np.array_equal(np.isnan(got), np.isnan(want))
    fin = ~np.isnan(want)
    assert np.all(np.abs(got[fin] - want[fin]) <= 4 * np.spacing(np.abs(want[fin])) + 1e-300)
    assert np.array_equal(np.signbit(got[fin]), np.signbit(want[fin]))     # erf(-0.0) is -0.0


@pytest.mark.parametrize("backend", ["numpy", "array_api_strict"])
def test_float32_equals_correctly_rounded_erf(backend):
    x = (np.random.default_rng(0).standard_normal(50_000) * 3).astype(np.float32)
    got = erf(anp, x) if backend == "numpy" else np.asarray(erf(xs, xs.asarray(x)))
    assert got.dtype == np.float32
    assert np.array_equal(got, _reference(x.astype(np.float64)).astype(np.float32))


def test_zero_dim_input_stays_an_array_of_its_dtype():
    out = erf(anp, np.array(0.5, dtype=np.float32))
    assert isinstance(out, np.ndarray) and out.shape == () and out.dtype == np.float32
    assert float(out) == np.float32(math.erf(0.5))
