"""More of torch.*'s math (engine/functions/, rows in engine/ops/elementwise/, reduce/, shape/ and blas.py).

Each case in CASES runs the same code in glassgrad and in a real PyTorch 2.13: values, dtype,
grad_fn name and the gradient of ``sum(out * w)`` (w fixed) are compared with what PyTorch
printed (tests/fixtures/math_ops_expected.json, made by running this file with PyTorch:
``/work/torchref/bin/python tests/ops/test_math_ops.py``). Every differentiable case is also
checked against finite differences in float64, some second derivatives too, and a few run on
array_api_strict.
"""
from __future__ import annotations

import json
import math
import os
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED_PATH = os.path.join(HERE, "..", "fixtures", "math_ops_expected.json")

X = [[0.3, -0.7, 0.1], [0.9, -0.2, 0.55]]             # in (-1, 1)
Y = [[1.2, -0.4, 2.5], [-1.5, 0.8, 0.35]]
Z = [[0.6, 1.3, -0.9], [0.25, -1.1, 2.0]]
POS = [[0.5, 1.7, 2.3], [3.1, 0.2, 1.05]]
P01 = [[0.2, 0.45, 0.9], [0.05, 0.6, 0.75]]          # in (0, 1)
BIG = [[1.5, 2.2, 3.0], [1.1, 4.5, 1.9]]              # > 1
V = [0.5, -1.2, 2.0, 0.7]
M34 = [[0.5, -1.0, 2.0, 0.25], [1.5, 0.75, -0.5, 1.0], [-2.0, 0.3, 1.2, -0.6]]
S33 = [[1.0, 2.0, -0.5], [0.3, -1.5, 0.8], [2.2, 0.1, 0.9]]
M34B = [[1.1, 0.4, -0.3, 2.0], [-0.6, 0.9, 1.4, 0.2], [0.7, -1.3, 0.05, 0.8]]
ZEROS = [[1.5, 0.0, 2.0, -1.0], [0.0, 3.0, 0.0, 0.5], [2.0, -1.0, 0.5, 0.0]]   # zeros for cumprod
TIES = [[3.0, 1.0, 1.0, 3.0, 2.0], [2.0, 2.0, 5.0, 5.0, 0.0]]
NANS = [[1.0, float("nan"), 3.0, 0.5], [2.0, 4.0, float("nan"), float("nan")]]

# name: ({input: values | ("const", values) | ("long", values)}, code); float inputs are float64 leaves
CASES = {
    # elementwise unary
    "asin": ({"x": X}, "torch.asin(x)"), "arcsin": ({"x": X}, "torch.arcsin(x)"),
    "acos": ({"x": X}, "x.acos()"), "atan": ({"x": Y}, "torch.arctan(x)"),
    "sinh": ({"x": Y}, "torch.sinh(x)"), "cosh": ({"x": Y}, "x.cosh()"),
    "asinh": ({"x": Y}, "torch.asinh(x)"), "acosh": ({"x": BIG}, "torch.arccosh(x)"),
    "atanh": ({"x": X}, "x.arctanh()"), "log2": ({"x": POS}, "torch.log2(x)"),
    "log10": ({"x": POS}, "x.log10()"), "sinc": ({"x": [[0.0, 0.5, -1.3], [2.0, 1e-3, -0.25]]}, "torch.sinc(x)"),
    "trunc": ({"x": [[1.5, -1.5, 0.2], [-2.7, 3.0, 0.0]]}, "torch.trunc(x) + x"),
    "fix": ({"x": Y}, "torch.fix(x) * 2 + x"), "frac": ({"x": [[1.5, -1.25, 0.2], [-2.7, 3.5, 0.0]]}, "torch.frac(x)"),
    "deg2rad": ({"x": Y}, "torch.deg2rad(x)"), "rad2deg": ({"x": Y}, "x.rad2deg()"),
    "logit": ({"x": P01}, "torch.logit(x)"), "logit_eps": ({"x": P01}, "torch.logit(x, eps=0.07)"),
    "logit_outside": ({"x": [[-0.5, 0.5, 1.5]]}, "torch.logit(x)"),
    "nan_to_num": ({"x": Y}, "torch.nan_to_num(x / torch.tensor([[0.0, 1.0, 0.0], [0.0, 2.0, 1.0]], "
                             "dtype=torch.float64), nan=0.5, posinf=7.0)"),
    "nan_to_num_default": ({"x": ("const", [float("nan"), float("inf"), -float("inf"), 1.0])}, "torch.nan_to_num(x)"),
    "log2_long": ({"i": ("long", [1, 2, 8])}, "torch.log2(i)"),
    "asin_long": ({"i": ("long", [0, 1])}, "torch.asin(i)"),
    "trunc_long": ({"i": ("long", [3, -4])}, "torch.trunc(i)"),
    # elementwise binary
    "atan2": ({"x": Y, "y": Z}, "torch.atan2(x, y)"),
    "arctan2_bcast": ({"x": Y, "y": [0.5, -1.0, 2.0]}, "x.arctan2(y)"),
    "atan2_long": ({"i": ("long", [1, -2]), "j": ("long", [3, 0])}, "torch.atan2(i, j)"),
    "hypot": ({"x": Y, "y": Z}, "torch.hypot(x, y)"),
    "logaddexp_mild": ({"x": Y, "y": Z}, "torch.logaddexp(x, y)"),
    "sinc_away": ({"x": Y}, "x.sinc()"),
    "logaddexp": ({"x": Y, "y": [[800.0, -3.0, 2.5], [-1.0, -900.0, 0.0]]}, "torch.logaddexp(x, y)"),
    "xlogy": ({"x": [[0.0, 1.5, -2.0], [3.0, 0.0, 1.0]], "y": POS}, "torch.xlogy(x, y)"),
    "xlogy_zero_nan": ({"x": ("const", [0.0, 0.0, 1.0]), "y": ("const", [float("nan"), 0.0, 0.0])},
                       "torch.xlogy(x, y)"),
    "xlogy_number_other": ({"x": Y}, "torch.xlogy(x, 3.0)"),
    "xlogy_number_self": ({"y": POS}, "torch.xlogy(2.0, y)"),
    "floor_divide": ({"x": Y}, "torch.floor_divide(x, 0.5)"),
    "floor_divide_long": ({"i": ("long", [7, -7, 5]), "j": ("long", [2, 2, -3])}, "torch.floor_divide(i, j)"),
    "heaviside": ({"x": ("const", [-1.0, 0.0, 2.0, 0.0]), "v": ("const", [0.5, 0.25, 0.5, 3.0])},
                  "torch.heaviside(x, v)"),
    "lerp_scalar": ({"x": Y, "y": Z}, "torch.lerp(x, y, 0.3)"),
    "lerp_scalar_hi": ({"x": Y, "y": Z}, "x.lerp(y, 0.8)"),
    "lerp_tensor": ({"x": Y, "y": Z, "w": P01}, "torch.lerp(x, y, w)"),
    "addcmul": ({"x": Y, "a": Z, "b": X}, "torch.addcmul(x, a, b, value=0.5)"),
    "addcdiv": ({"x": Y, "a": Z, "b": POS}, "torch.addcdiv(x, a, b, value=2)"),
    "addcmul_bcast": ({"x": [1.0, 2.0, 3.0], "a": Z, "b": [[2.0], [0.5]]}, "x.addcmul(a, b)"),
    # scans and reductions
    "cumprod": ({"x": M34}, "torch.cumprod(x, 1)"),
    "cumprod_zeros": ({"x": ZEROS}, "torch.cumprod(x, 1)"),
    "cumprod_zeros_dim0": ({"x": ZEROS}, "x.cumprod(0)"),
    "cumprod_long": ({"i": ("long", [[1, 2, 3], [4, 5, 6]])}, "torch.cumprod(i, 1)"),
    "logcumsumexp": ({"x": M34}, "torch.logcumsumexp(x, 1)"),
    "logcumsumexp_dim0_big": ({"x": [[500.0, 1.0], [499.0, -1.0], [-2.0, 3.0]]}, "x.logcumsumexp(0)"),
    "nansum": ({"x": NANS}, "torch.nansum(x)"), "nansum_dim": ({"x": NANS}, "torch.nansum(x, 1, keepdim=True)"),
    "nansum_long": ({"i": ("long", [[1, 2], [3, 4]])}, "torch.nansum(i)"),
    "nanmean": ({"x": NANS}, "torch.nanmean(x)"), "nanmean_dim": ({"x": NANS}, "x.nanmean(1)"),
    "median": ({"x": M34}, "torch.median(x)"), "median_ties": ({"x": TIES}, "x.median()"),
    "median_dim": ({"x": TIES}, "torch.median(x, 1)"), "median_dim_keepdim": ({"x": M34}, "x.median(0, True)"),
    "median_nan": ({"x": NANS}, "torch.median(x, 1)"), "median_all_nan": ({"x": NANS}, "torch.median(x)"),
    "nanmedian": ({"x": NANS}, "torch.nanmedian(x)"), "nanmedian_dim": ({"x": NANS}, "x.nanmedian(1)"),
    "median_long": ({"i": ("long", [[4, 1, 3], [2, 2, 9]])}, "torch.median(i, 1)"),
    "kthvalue": ({"x": TIES}, "torch.kthvalue(x, 2, 1)"), "kthvalue_dim0": ({"x": M34}, "x.kthvalue(3, 0, True)"),
    "mode": ({"x": TIES}, "torch.mode(x, 1)"), "mode_long": ({"i": ("long", [[3, 1, 1, 3, 2], [2, 2, 5, 5, 0]])},
                                                             "torch.mode(i)"),
    "aminmax": ({"x": M34}, "torch.aminmax(x)"), "aminmax_dim": ({"x": TIES}, "x.aminmax(dim=1, keepdim=True)"),
    "count_nonzero": ({"x": ZEROS}, "torch.count_nonzero(x)"),
    "count_nonzero_dim": ({"x": ZEROS}, "x.count_nonzero(1)"),
    "diff": ({"x": M34}, "torch.diff(x)"), "diff_n2_dim0": ({"x": M34}, "torch.diff(x, n=2, dim=0)"),
    "diff_prepend_append": ({"x": V, "p": [1.0, 2.0], "q": [0.5]}, "torch.diff(x, prepend=p, append=q)"),
    # shapes and diagonals
    "diag_1d": ({"x": V}, "torch.diag(x)"), "diag_1d_offset": ({"x": V}, "torch.diag(x, -2)"),
    "diag_2d": ({"x": M34}, "torch.diag(x)"), "diag_2d_offset": ({"x": M34}, "x.diag(1)"),
    "diagonal": ({"x": M34}, "torch.diagonal(x)"), "diagonal_offset": ({"x": M34}, "x.diagonal(-1)"),
    "diagonal_3d": ({"x": [M34, M34B]}, "torch.diagonal(x, 1, -1, 0)"),
    "trace": ({"x": S33}, "torch.trace(x)"), "trace_rect": ({"x": M34}, "x.trace()"),
    "trace_long": ({"i": ("long", [[1, 2], [3, 4]])}, "torch.trace(i)"),
    "kron": ({"x": [[1.0, 2.0], [3.0, -1.0]], "y": M34}, "torch.kron(x, y)"),
    "kron_1d_2d": ({"x": [1.0, -2.0, 0.5], "y": [[1.0, 2.0], [0.5, 3.0]]}, "x.kron(y)"),
    "cross": ({"x": S33, "y": [[0.5, 1.0, -2.0], [1.5, -0.5, 0.25], [0.0, 2.0, 1.0]]}, "torch.cross(x, y, dim=1)"),
    "cross_bcast_dim0": ({"x": S33, "y": [[0.5], [1.0], [-2.0]]}, "torch.cross(x, y, dim=0)"),
    "rot90": ({"x": M34}, "torch.rot90(x)"), "rot90_k2": ({"x": M34}, "x.rot90(2)"),
    "rot90_k3_dims": ({"x": [M34, M34]}, "torch.rot90(x, -1, (2, 0))"), "rot90_k0": ({"x": M34}, "x.rot90(0)"),
    "repeat_interleave": ({"x": M34}, "torch.repeat_interleave(x, 2, dim=1)"),
    "repeat_interleave_flat": ({"x": S33}, "x.repeat_interleave(2)"),
    "repeat_interleave_tensor": ({"x": M34}, "torch.repeat_interleave(x, torch.tensor([1, 0, 2]), dim=0)"),
    "repeat_interleave_counts": ({"i": ("long", [2, 0, 1])}, "torch.repeat_interleave(i)"),
    "tile": ({"x": M34}, "torch.tile(x, (2,))"), "tile_more": ({"x": V}, "x.tile((2, 1, 2))"),
    "meshgrid_ij": ({"x": V, "y": [1.0, 2.0, 3.0]}, "torch.meshgrid(x, y, indexing='ij')"),
    "meshgrid_xy": ({"x": V, "y": [1.0, 2.0, 3.0]}, "torch.meshgrid(x, y, indexing='xy')"),
    "tensor_split": ({"x": M34}, "torch.tensor_split(x, 3, dim=1)"),
    "tensor_split_idx": ({"x": S33}, "x.tensor_split([1, 5])"),
    "argwhere": ({"x": ZEROS}, "torch.argwhere(x)"),
    "isin": ({"i": ("long", [[1, 2], [3, 4]]), "j": ("long", [2, 3, 7])}, "torch.isin(i, j)"),
    "isin_invert": ({"i": ("long", [[1, 2], [3, 4]])}, "torch.isin(i, 2, invert=True)"),
    "bucketize": ({"x": ("const", [0.5, 1.0, 2.5, 3.0, 9.0]), "b": ("const", [1.0, 2.0, 3.0])},
                  "torch.bucketize(x, b)"),
    "bucketize_right": ({"x": ("const", [0.5, 1.0, 2.5, 3.0, 9.0]), "b": ("const", [1.0, 2.0, 3.0])},
                        "torch.bucketize(x, b, right=True)"),
    "searchsorted": ({"s": ("const", [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]), "v": ("const", [[3.0, 6.0], [1.0, 4.0]])},
                     "torch.searchsorted(s, v)"),
    "searchsorted_side": ({"s": ("const", [1.0, 3.0, 3.0, 5.0]), "v": ("const", [3.0, 0.0, 6.0])},
                          "torch.searchsorted(s, v, side='right')"),
    "bincount": ({"i": ("long", [0, 1, 1, 3, 1])}, "torch.bincount(i, minlength=6)"),
    "bincount_weights": ({"i": ("long", [0, 1, 1, 3]), "w": ("const", [0.5, 1.0, 1.5, 2.0])},
                         "i.bincount(w)"),
    "histc": ({"x": ("const", [0.1, 0.5, 0.9, 2.0, 1.0, -1.0])}, "torch.histc(x, bins=4, min=0, max=2)"),
    "histc_range": ({"x": ("const", [0.1, 0.5, 0.9, 2.0, 1.0, -1.0])}, "x.histc(3)"),
    # products
    "tensordot": ({"x": [M34, M34B], "y": [[1.0, 0.5], [-1.0, 2.0], [0.3, 0.2], [1.5, -0.5]]},
                  "torch.tensordot(x, y, dims=1)"),
    "tensordot_lists": ({"x": [M34, M34], "y": [[1.0, -0.5, 0.25], [2.0, 0.5, -1.0]]},
                        "torch.tensordot(x, y, dims=([0, 1], [0, 1]))"),
    "baddbmm": ({"c": [[1.0, 2.0]], "a": [M34, M34], "b": [[[1.0, 0.5]] * 4, [[0.2, -1.0]] * 4]},
                "torch.baddbmm(c, a, b, beta=0.5, alpha=2)"),
    "baddbmm_beta0": ({"c": ("const", [[float("nan"), 2.0]]), "a": [M34, M34], "b": [[[1.0, 0.5]] * 4] * 2},
                      "torch.baddbmm(c, a, b, beta=0)"),
    "addbmm": ({"c": [[1.0, 2.0]] * 3, "a": [M34, M34], "b": [[[1.0, 0.5]] * 4, [[0.2, -1.0]] * 4]},
               "torch.addbmm(c, a, b, alpha=0.5)"),
    "addmv": ({"c": [1.0, -1.0, 0.5], "m": M34, "v": V}, "torch.addmv(c, m, v, beta=2)"),
    "addr": ({"c": M34, "u": [1.0, -1.0, 0.5], "v": V}, "torch.addr(c, u, v, alpha=3)"),
    "cdist": ({"x": M34, "y": [[0.5, 1.0, -1.0, 0.0], [2.0, -0.5, 0.5, 1.0]]}, "torch.cdist(x, y)"),
    "cdist_p1": ({"x": M34, "y": [[0.5, 1.0, -1.0, 0.0], [2.0, -0.5, 0.5, 1.0]]}, "torch.cdist(x, y, p=1)"),
    "cdist_p3": ({"x": M34, "y": [[0.5, 1.0, -1.0, 0.0], [2.0, -0.5, 0.5, 1.0]]}, "torch.cdist(x, y, p=3)"),
    "cdist_inf": ({"x": M34, "y": [[0.5, 1.0, -1.0, 0.0], [2.0, -0.5, 0.5, 1.0]]},
                  "torch.cdist(x, y, p=float('inf'))"),
    "cdist_batched": ({"x": [M34, M34B], "y": [[[0.5, 1.0, -1.0], [2.0, -0.5, 0.5]]]},
                      "torch.cdist(x[..., :3], y)"),
    "dist": ({"x": M34, "y": [0.5, 1.0, -1.0, 0.0]}, "torch.dist(x, y)"),
    "dist_zero": ({"x": V, "y": V}, "torch.dist(x, y) + torch.dist(x, y, 3)"),
    "cdist_zero_rows": ({"x": [[1.0, 2.0], [0.5, -1.0]], "y": [[1.0, 2.0]]},
                        "torch.cdist(x, y) + torch.cdist(x, y, 1)"),
    "atan2_hypot_at_origin": ({"x": [0.0, 1.0], "y": [0.0, 2.0]}, "torch.atan2(x, y) + torch.hypot(x, y)"),
    "logit_at_bounds": ({"x": [0.0, 1.0, 0.5]}, "torch.logit(x)"),
    "logcumsumexp_neg_inf": ({"x": ("const", [float("-inf"), float("-inf"), 1.0])}, "torch.logcumsumexp(x, 0)"),
    "cumprod_nan": ({"x": [2.0, float("nan"), 3.0]}, "torch.cumprod(x, 0)"),
    "dist_p1": ({"x": M34, "y": [0.5, 1.0, -1.0, 0.0]}, "x.dist(y, 1)"),
    "dist_inf": ({"x": M34, "y": [0.5, 1.0, -1.0, 0.0]}, "torch.dist(x, y, float('inf'))"),
    "dist_p3": ({"x": M34, "y": [0.5, 1.0, -1.0, 0.0]}, "torch.dist(x, y, 3)"),
}
# cases without a gradient, or whose gradient finite differences cannot see (steps, picks at ties)
NO_GRADCHECK = {"floor_divide", "heaviside", "trunc", "fix", "logit_outside", "median_ties", "aminmax_dim", "cdist_inf",
                "dist_inf", "median_all_nan", "nan_to_num", "kthvalue", "median_dim",
                "median_nan", "mode", "dist_zero", "cdist_zero_rows", "atan2_hypot_at_origin", "logit_at_bounds",
                "cumprod_nan"}
# (ops whose gradient is linear in the incoming one and free of the input have no second derivative to check)
GRADGRAD = ["asin", "acos", "sinh", "acosh", "atanh", "log2", "sinc_away", "logit", "atan2", "hypot",
            "logaddexp_mild", "xlogy", "lerp_tensor", "addcdiv", "cumprod", "cumprod_zeros", "logcumsumexp", "kron",
            "cross", "baddbmm", "addmv", "addr", "cdist", "cdist_p3", "dist"]


def _weights(shape):
    n = int(np.prod(shape)) if shape else 1
    return np.cos(np.arange(n) * 0.7 + 0.3).reshape(shape)


def _make(torch, spec):
    if isinstance(spec, tuple):
        kind, vals = spec
        return torch.tensor(vals, dtype=torch.int64 if kind == "long" else torch.float64)
    return torch.tensor(spec, dtype=torch.float64, requires_grad=True)


def run(torch, inputs, code):
    """(inputs, outputs as a list) of ``code`` evaluated on fresh inputs."""
    ns = {n: _make(torch, s) for n, s in inputs.items()}
    ns["torch"] = torch
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = eval(code, ns)
    outs = list(out) if isinstance(out, tuple) else [out]
    return ns, outs


def describe(torch, inputs, code):
    ns, outs = run(torch, inputs, code)
    res = {"outputs": [{"values": _plain(o.detach().tolist()), "dtype": str(o.dtype).split(".")[-1],
                        "shape": list(o.shape), "grad_fn": o.grad_fn.name() if o.grad_fn is not None else None}
                       for o in outs]}
    diff = [o for o in outs if o.requires_grad]
    leaves = [n for n in inputs if not isinstance(inputs[n], tuple)]
    if diff and leaves:
        loss = sum((o * torch.tensor(_weights(tuple(o.shape)), dtype=o.dtype)).sum() for o in diff)
        try:
            grads = torch.autograd.grad(loss, [ns[n] for n in leaves], allow_unused=True)
        except RuntimeError as e:      # a node without a formula (NotImplemented)
            res["backward_error"] = str(e)
            return res
        res["grads"] = {n: (None if g is None else _plain(g.tolist())) for n, g in zip(leaves, grads)}
    return res


def _plain(v):
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


if __name__ == "__main__":       # run with PyTorch to write the expected numbers
    import torch
    data = {name: describe(torch, inputs, code) for name, (inputs, code) in CASES.items()}
    with open(EXPECTED_PATH, "w") as f:
        json.dump({"torch_version": torch.__version__, "cases": data}, f, indent=0, sort_keys=True)
        f.write("\n")
    raise SystemExit(0)

import pytest  # noqa: E402

import engine  # noqa: E402
from tests.checks import NO_GPU, assert_ran_on, tolerance, gradcheck, gradgradcheck, on_backend  # noqa: E402

with open(EXPECTED_PATH, encoding="utf-8") as _f:
    EXPECTED = json.load(_f)["cases"]


def _arr(v):
    return np.array(_unplain(v), dtype=np.float64)


def _unplain(v):
    if isinstance(v, list):
        return [_unplain(x) for x in v]
    return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}.get(v, v) if isinstance(v, str) else v


def _check_matches_pytorch(name):
    inputs, code = CASES[name]
    got, want = describe(engine, inputs, code), EXPECTED[name]
    assert len(got["outputs"]) == len(want["outputs"])
    for g, w in zip(got["outputs"], want["outputs"]):
        want_fn = w["grad_fn"]        # PyTorch's name(), C++ namespace and all
        assert (g["dtype"], g["shape"], g["grad_fn"]) == (w["dtype"], w["shape"], want_fn)
        tol = 1e-6 if g["dtype"] == "float32" else 1e-12
        np.testing.assert_allclose(_arr(g["values"]), _arr(w["values"]), rtol=tol, atol=tol)
    assert got.get("backward_error") == want.get("backward_error")
    assert set(got.get("grads", {})) == set(want.get("grads", {}))
    for n, w in want.get("grads", {}).items():
        g = got["grads"][n]
        assert (g is None) == (w is None), n
        if w is not None:
            np.testing.assert_allclose(_arr(g), _arr(w), rtol=1e-10, atol=1e-12, err_msg=n)


def _fn_of(name):
    inputs, code = CASES[name]
    names = [n for n, s in inputs.items() if not isinstance(s, tuple)]
    consts = {n: _make(engine, s) for n, s in inputs.items() if isinstance(s, tuple)}

    def fn(*args):
        ns = dict(consts, torch=engine, **dict(zip(names, args)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = eval(code, ns)
        return tuple(out) if isinstance(out, tuple) else out
    return fn, [_make(engine, inputs[n]) for n in names]


def _groups(names, size):
    names = sorted(names)
    return [names[i:i + size] for i in range(0, len(names), size)]


def _each(group, check):
    """Run ``check`` on every case of ``group``, naming the case that fails (one test item per group keeps
    the suite's per-test setup cost down)."""
    for name in group:
        try:
            check(name)
        except AssertionError as e:
            raise AssertionError(f"case {name!r}: {e}") from None


def _gradcheck(name):
    if name not in NO_GRADCHECK and EXPECTED[name].get("grads"):
        fn, args = _fn_of(name)
        gradcheck(fn, args)


@pytest.mark.parametrize("group", _groups(CASES, 8), ids=lambda g: f"{g[0]}..{g[-1]}")
def test_matches_pytorch_and_finite_differences(group):
    _each(group, lambda name: (_check_matches_pytorch(name), _gradcheck(name)))


@pytest.mark.parametrize("group", _groups(GRADGRAD, 5), ids=lambda g: f"{g[0]}..{g[-1]}")
def test_gradgradcheck(group):
    def check(name):
        fn, args = _fn_of(name)
        gradgradcheck(fn, args)
    _each(group, check)


# ---- views, in-place variants, methods -------------------------------------------------------------
def test_diagonal_is_a_view_that_shares_storage_and_version():
    x = engine.arange(12.0).reshape(3, 4)
    d = x.diagonal(1)
    assert d._storage is x._storage and d.stride() == (5,) and d.storage_offset() == 1
    before = x._version
    d.mul_(10)
    assert x.tolist()[0][1] == 10.0 and x.tolist()[2][3] == 110.0
    assert x._version == d._version == before + 1
    c = engine.diag(x)                                   # diag of a matrix is a copy
    assert c._storage is not x._storage and c.grad_fn is None


def test_inplace_on_a_diagonal_view_reaches_the_base_gradient():
    a = engine.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = a * 1
    b.diagonal().mul_(3)
    assert b.grad_fn.name() == "torch::autograd::CopySlices"
    b.sum().backward()
    assert a.grad.tolist() == [[3.0, 1.0], [1.0, 3.0]]


def test_saved_input_modified_through_a_diagonal_view_raises():
    y = engine.randn(3, 3, requires_grad=True).clone()
    w = y.sinh()
    y.diagonal().add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        w.sum().backward()


INPLACE = [   # (method call on a float64 non-leaf a, the out-of-place code it matches)
    ("a.asin_()", "torch.asin(a)"), ("a.arccos_()", "torch.acos(a)"), ("a.atanh_()", "torch.atanh(a)"),
    ("a.sinh_()", "torch.sinh(a)"), ("a.log2_()", "torch.log2(a)"), ("a.sinc_()", "torch.sinc(a)"),
    ("a.trunc_()", "torch.trunc(a)"), ("a.frac_()", "torch.frac(a)"), ("a.deg2rad_()", "torch.deg2rad(a)"),
    ("a.logit_(0.1)", "torch.logit(a, 0.1)"), ("a.nan_to_num_(1.0)", "torch.nan_to_num(a, 1.0)"),
    ("a.atan2_(b)", "torch.atan2(a, b)"), ("a.hypot_(b)", "torch.hypot(a, b)"),
    ("a.xlogy_(b.abs())", "torch.xlogy(a, b.abs())"),
    ("a.lerp_(b, 0.25)", "torch.lerp(a, b, 0.25)"), ("a.addcmul_(b, b, value=2)", "torch.addcmul(a, b, b, value=2)"),
    ("a.addcdiv_(b, b + 3)", "torch.addcdiv(a, b, b + 3)"), ("a.cumprod_(1)", "torch.cumprod(a, 1)"),
    ("a.floor_divide_(0.25)", "torch.floor_divide(a, 0.25)"),
    ("a.addr_(b[0], b[1, :2], beta=0.5)", "torch.addr(a, b[0], b[1, :2], beta=0.5)"),
]


@pytest.mark.parametrize("call,ref", INPLACE, ids=[c for c, _ in INPLACE])
def test_inplace_variants_match_and_bump_the_version(call, ref):
    x = engine.tensor([[0.3, -0.2], [0.6, 0.1], [-0.45, 0.8]], dtype=engine.float64, requires_grad=True)
    bv = engine.tensor([[0.5, 1.5], [-0.7, 0.25], [2.0, -1.0]], dtype=engine.float64)
    if "addr" in call:
        x = engine.ones(3, 2, dtype=engine.float64, requires_grad=True)
        bv = engine.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], dtype=engine.float64)
    want = eval(ref.replace("torch", "engine"), {"engine": engine, "a": x.detach(), "b": bv})
    a = x * 1
    v = a._version
    out = eval(call, {"a": a, "b": bv})
    assert out is a and a._version == v + 1
    np.testing.assert_allclose(a.detach().numpy(), want.numpy(), rtol=1e-12)
    if "floor_divide" not in call and "atanh" not in call:   # PyTorch has no derivative for these two
        a.sum().backward()                 # the in-place node's gradient runs
        assert x.grad is not None


def test_inplace_float_op_on_an_integer_tensor_is_refused():
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        engine.tensor([1, 2]).asin_()


def test_methods_and_aliases_exist():
    for name in ("asin", "arcsin", "arccosh", "atan2", "arctan2", "hypot", "logaddexp", "log2", "log10", "fix",
                 "frac", "floor_divide", "logit", "xlogy", "lerp", "addcmul", "addcdiv", "sinc", "heaviside",
                 "nan_to_num", "cumprod", "logcumsumexp", "nansum", "nanmean", "median", "nanmedian", "kthvalue",
                 "mode", "aminmax", "count_nonzero", "diff", "diag", "diagonal", "trace", "kron", "cross", "rot90",
                 "repeat_interleave", "tile", "tensor_split", "argwhere", "bincount", "histc", "baddbmm", "addbmm",
                 "addmv", "addr", "dist", "asin_", "arcsin_", "fix_", "baddbmm_", "lerp_", "cumprod_"):
        assert hasattr(engine.Tensor, name), name
    for name in ("meshgrid", "cdist", "tensordot", "searchsorted", "bucketize", "isin", "arctanh", "arctan2"):
        assert callable(getattr(engine, name)), name


def test_named_results():
    x = engine.tensor([[3.0, 1.0, 2.0]])
    m = engine.median(x, 1)
    assert type(m).__name__ == "median" and m.values.tolist() == [2.0] and m.indices.tolist() == [2]
    mn, mx = engine.aminmax(x)
    assert (mn.item(), mx.item()) == (1.0, 3.0) and engine.aminmax(x)._fields == ("min", "max")
    assert engine.kthvalue(x, 1)._fields == ("values", "indices")


def test_warnings_as_pytorch():
    with pytest.warns(UserWarning, match="required to pass the indexing argument"):
        engine.meshgrid(engine.ones(2), engine.ones(3))
    with pytest.warns(UserWarning, match="Using torch.cross without specifying the dim arg is deprecated"):
        out = engine.cross(engine.eye(3), engine.ones(3, 3))
    assert out.tolist() == engine.cross(engine.eye(3), engine.ones(3, 3), dim=0).tolist()   # the first size-3 dim
    assert [row[0] for row in out.tolist()] == [0.0, -1.0, 1.0]


def test_cdist_takes_the_matrix_product_route_above_25_rows_as_pytorch():
    x = engine.randn(30, 3, requires_grad=True)
    out = engine.cdist(x, engine.randn(4, 3))
    assert out.grad_fn.name() == "ViewBackward0"
    assert out.grad_fn.next_functions[0][0].name() == "EuclideanDistBackward0"
    small = engine.cdist(x[:5], engine.randn(4, 3), compute_mode="donot_use_mm_for_euclid_dist")
    assert small.grad_fn.name() == "CdistBackward0"


def test_floor_divide_backward_raises_pytorchs_error():
    x = engine.randn(3, requires_grad=True)
    y = engine.floor_divide(x, 2)
    assert y.requires_grad and y.grad_fn.name() == "torch::autograd::NotImplemented"
    with pytest.raises(RuntimeError, match="derivative for aten::floor_divide is not implemented"):
        y.sum().backward()


# ---- array_api_strict: the same kernels and formulas off NumPy --------------------------------------
STRICT = ["asin", "atan2", "hypot", "logaddexp", "xlogy", "lerp_tensor", "addcdiv", "sinc", "logit_eps", "cumprod",
          "cumprod_zeros", "logcumsumexp", "nansum", "median_dim_keepdim", "kthvalue_dim0", "diagonal_3d", "diag_1d",
          "trace", "cross", "rot90_k3_dims", "baddbmm", "addbmm", "addmv", "addr", "cdist_p3", "dist", "nan_to_num",
          "repeat_interleave_tensor"]


def _check_on(backend, name):
    inputs, code = CASES[name]
    want = describe(engine, inputs, code)
    with on_backend(backend):
        ns, outs = run(engine, inputs, code)
        assert_ran_on(backend, outs[0])
        got = describe(engine, inputs, code)
    for g, w in zip(got["outputs"], want["outputs"]):
        assert (g["dtype"], g["shape"], g["grad_fn"]) == (w["dtype"], w["shape"], w["grad_fn"])
        np.testing.assert_allclose(_arr(g["values"]), _arr(w["values"]), **tolerance(backend, w["dtype"]))
    assert got.get("backward_error") == want.get("backward_error")
    for n, w in want.get("grads", {}).items():
        np.testing.assert_allclose(_arr(got["grads"][n]), _arr(w), **tolerance(backend), err_msg=n)


@pytest.mark.parametrize("group", _groups(STRICT, 7), ids=lambda g: f"{g[0]}..{g[-1]}")
def test_array_api_strict_matches_numpy(group):
    _each(group, lambda name: _check_on("array_api_strict", name))


@pytest.mark.skipif(not engine.cuda.is_available(), reason=NO_GPU)
@pytest.mark.parametrize("group", _groups(CASES, 25), ids=lambda g: f"{g[0]}..{g[-1]}")
def test_cuda_matches_numpy(group):
    """Every case of the table on CuPy, against the NumPy run."""
    _each(group, lambda name: _check_on("cuda", name))


def test_engine_trace_is_the_recording_module_and_torch_trace():
    import engine.trace as trace_module
    assert engine.trace is trace_module and engine.trace.Trace is trace_module.Trace
    assert engine.trace(engine.tensor([[1.0, 2.0], [3.0, 4.0]])).item() == 5.0


def exercise_math_ops():
    """One call of every op-table row this module's functions use (for test_every_table_op_is_exercised)."""
    for inputs, code in CASES.values():
        describe(engine, inputs, code)
    engine.cdist(engine.randn(30, 2), engine.randn(3, 2))                  # EuclideanDistBackward0
    engine.floor_divide(engine.randn(3, requires_grad=True), engine.ones(3))


def test_compiled_pointwise_math_matches_eager():
    def f(x, y):
        return (engine.atan2(x.asin(), y) * engine.lerp(x, y, 0.3)).logaddexp(y).hypot(x).sum()

    x = engine.tensor(np.linspace(0.1, 0.9, 12).reshape(3, 4), dtype=engine.float64, requires_grad=True)
    y = engine.tensor(np.linspace(-1.0, 1.5, 12).reshape(3, 4), dtype=engine.float64, requires_grad=True)
    compiled = engine.compile(f)(x, y)
    compiled.backward()
    gx, gy = x.grad.numpy().copy(), y.grad.numpy().copy()
    x.grad = y.grad = None
    eager = f(x, y)
    eager.backward()
    assert compiled.item() == pytest.approx(eager.item(), rel=1e-12)
    np.testing.assert_allclose(gx, x.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gy, y.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("fn", [lambda t: engine.cumprod(t, 0), lambda t: engine.logcumsumexp(t, -1),
                                lambda t: engine.median(t, 0).values, lambda t: engine.kthvalue(t, 1).values,
                                lambda t: engine.nansum(t), lambda t: engine.aminmax(t).max],
                         ids=["cumprod", "logcumsumexp", "median", "kthvalue", "nansum", "aminmax"])
def test_zero_dim_inputs_pass_their_value_and_gradient(fn):
    x = engine.tensor(2.5, dtype=engine.float64, requires_grad=True)
    y = fn(x)
    (g,) = engine.autograd.grad(y, x)
    assert (y.item(), g.item(), y.shape) == (2.5, 1.0, ())
