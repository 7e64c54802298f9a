"""F.grid_sample, F.affine_grid (engine/nn/functional/sampling.py, engine/ops/nn/sampling.py) and F.pdist
(engine/nn/functional/distance.py, engine/ops/nn/pdist.py)."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import engine
import engine.nn.functional as F
from tests.checks import BACKENDS, f64, gradcheck, gradgradcheck, matches_numpy


# ---- a point-by-point reference ------------------------------------------------------------------------
def _pixel(c, size, padding, align):
    x = (c + 1) / 2 * (size - 1) if align else ((c + 1) * size - 1) / 2
    if padding == "border":
        x = min(max(x, 0.0), size - 1.0)
    elif padding == "reflection":
        lo, hi = (0.0, size - 1.0) if align else (-0.5, size - 0.5)
        span = hi - lo
        if span <= 0:
            x = 0.0
        else:
            t = abs(x - lo) % (2 * span)
            x = lo + (t if t <= span else 2 * span - t)
        x = min(max(x, 0.0), size - 1.0)
    return x


def _np_grid_sample(img, grid, mode, padding, align):
    n, c, h, w = img.shape
    out = np.zeros((n, c) + grid.shape[1:3])
    for b in range(n):
        for i in range(grid.shape[1]):
            for j in range(grid.shape[2]):
                x = _pixel(grid[b, i, j, 0], w, padding, align)
                y = _pixel(grid[b, i, j, 1], h, padding, align)
                if mode == "nearest":
                    taps = [(round(x), round(y), 1.0)]           # Python's round: half to even
                else:
                    x0, y0 = math.floor(x), math.floor(y)
                    tx, ty = x - x0, y - y0
                    taps = [(x0, y0, (1 - tx) * (1 - ty)), (x0 + 1, y0, tx * (1 - ty)),
                            (x0, y0 + 1, (1 - tx) * ty), (x0 + 1, y0 + 1, tx * ty)]
                for xx, yy, wt in taps:
                    if 0 <= xx < w and 0 <= yy < h:
                        out[b, :, i, j] += wt * img[b, :, yy, xx]
    return out


def _grid(n, ho, wo, seed, spread=1.3):
    rng = np.random.default_rng(seed)
    return engine.tensor(rng.uniform(-spread, spread, (n, ho, wo, 2)), dtype=engine.float64, requires_grad=True)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_matches_a_point_by_point_reference(mode, padding, align):
    x = f64(2, 3, 4, 5, seed=1)
    g = _grid(2, 3, 4, seed=2)
    out = F.grid_sample(x, g, mode=mode, padding_mode=padding, align_corners=align)
    want = _np_grid_sample(x.detach().numpy(), g.detach().numpy(), mode, padding, align)
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-12, atol=1e-12)
    node = out.grad_fn
    assert node.name() == "GridSampler2DBackward0"
    assert node._saved_input is x and node._saved_grid is g
    assert (node._saved_interpolation_mode, node._saved_padding_mode, node._saved_align_corners) == \
        ({"bilinear": 0, "nearest": 1}[mode], {"zeros": 0, "border": 1, "reflection": 2}[padding], align)


@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_gradients(padding, align):
    x = f64(1, 2, 3, 4, seed=3)
    g = _grid(1, 2, 3, seed=4)
    gradcheck(lambda a, b: F.grid_sample(a, b, padding_mode=padding, align_corners=align), [x, g])


def test_grid_sample_second_order_and_nearest():
    x, g = f64(1, 2, 3, 3, seed=5), _grid(1, 2, 2, seed=6, spread=0.9)
    gradgradcheck(lambda a, b: F.grid_sample(a, b, align_corners=False), [x, g])
    out = F.grid_sample(x, g, mode="nearest", align_corners=True)
    gx, gg = engine.autograd.grad(out.sum(), [x, g])
    assert float(gg.abs().sum().item()) == 0.0 and float(gx.sum().item()) == 8.0     # 2 channels x 4 points
    gradcheck(lambda a: F.grid_sample(a, g, mode="nearest", align_corners=True), [x])


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_volumes_of_depth_one_sample_as_images(mode, padding):
    """With align_corners a depth of 1 maps every z to that one slice: 5-D sampling is the 4-D one."""
    x = f64(2, 3, 4, 5, seed=13)
    g = _grid(2, 3, 4, seed=14)
    z = engine.tensor(np.random.default_rng(15).uniform(-1, 1, (2, 1, 3, 4, 1)))
    g3 = engine.cat([g.detach().unsqueeze(1), z], -1)
    out = F.grid_sample(x.unsqueeze(2), g3, mode=mode, padding_mode=padding, align_corners=True)
    assert out.grad_fn.name() == "GridSampler3DBackward0" and tuple(out.shape) == (2, 3, 1, 3, 4)
    want = F.grid_sample(x, g, mode=mode, padding_mode=padding, align_corners=True)
    np.testing.assert_allclose(out.detach().numpy()[:, :, 0], want.detach().numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("padding", ["zeros", "reflection"])
def test_volume_gradients(padding):
    x = f64(1, 2, 2, 3, 3, seed=16)
    g = engine.tensor(np.random.default_rng(17).uniform(-1.2, 1.2, (1, 2, 1, 2, 3)), requires_grad=True)
    gradcheck(lambda a, b: F.grid_sample(a, b, padding_mode=padding, align_corners=False), [x, g])


def test_identity_affine_grid_reproduces_the_image():
    x = f64(2, 3, 4, 5, seed=7)
    theta = engine.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]] * 2, dtype=engine.float64)
    for align in (False, True):
        grid = F.affine_grid(theta, x.shape, align_corners=align)
        np.testing.assert_allclose(F.grid_sample(x, grid, align_corners=align).detach().numpy(),
                                   x.detach().numpy(), atol=1e-12)
    # a horizontal flip
    flip = engine.tensor([[[-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]] * 2, dtype=engine.float64)
    out = F.grid_sample(x, F.affine_grid(flip, x.shape, align_corners=False), align_corners=False)
    np.testing.assert_allclose(out.detach().numpy(), x.detach().numpy()[..., ::-1], atol=1e-12)


def test_affine_grid_values_node_and_gradient():
    theta = f64(2, 2, 3, seed=8)
    grid = F.affine_grid(theta, (2, 1, 3, 4), align_corners=False)
    xs, ys = (np.arange(4) * 2 + 1) / 4 - 1, (np.arange(3) * 2 + 1) / 3 - 1     # pixel centres
    base = np.stack(np.broadcast_arrays(xs[None, :], ys[:, None], 1.0), -1)      # (3, 4, 3)
    want = np.einsum("hwk,nik->nhwi", base, theta.detach().numpy())
    np.testing.assert_allclose(grid.detach().numpy(), want, rtol=1e-12)
    node = grid.grad_fn
    assert node.name() == "AffineGridGeneratorBackward0" and list(node._saved) == []
    assert node._saved_size == (2, 1, 3, 4) and node._saved_align_corners is False
    gradcheck(lambda t: F.affine_grid(t, (2, 1, 3, 4), align_corners=True), [theta])
    gradcheck(lambda t: F.affine_grid(t, (1, 2, 2, 3, 2), align_corners=False), [f64(1, 3, 4, seed=9)])
    assert tuple(F.affine_grid(f64(1, 3, 4, seed=9), (1, 2, 2, 3, 5), align_corners=False).shape) == (1, 2, 3, 5, 3)


def test_defaults_warn_as_pytorch():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        F.affine_grid(engine.zeros(1, 2, 3), (1, 1, 2, 2))
    assert len(caught) == 1 and "align_corners=False since 1.3.0" in str(caught[0].message)


# ---- pdist -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("p", [0, 0.5, 1, 1.5, 2, 3, math.inf])
def test_pdist_values_and_gradients(p):
    x = f64(5, 3, seed=10)
    out = F.pdist(x, p)
    xs = x.detach().numpy()
    want = [np.linalg.norm(xs[i] - xs[j], ord=p) if p else np.count_nonzero(xs[i] - xs[j])
            for i in range(5) for j in range(i + 1, 5)]
    np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-12)
    assert out.grad_fn.name() == "PdistBackward0" and out.grad_fn._saved_p == float(p)
    if p:
        gradcheck(lambda a: F.pdist(a, p), [x])


def test_pdist_equal_rows_pass_no_gradient_and_second_order():
    x = engine.tensor([[0.0, 1.0], [0.0, 1.0], [2.0, -1.0]], dtype=engine.float64, requires_grad=True)
    F.pdist(x).backward(engine.tensor([1.0, 2.0, 3.0], dtype=engine.float64))
    np.testing.assert_allclose(x.grad.numpy(), np.array([[-4, 4], [-6, 6], [10, -10]]) / math.sqrt(8), rtol=1e-12)
    gradgradcheck(lambda a: F.pdist(a), [f64(4, 3, seed=11)])
    with pytest.raises(RuntimeError, match="pdist only supports 2D tensors, got: 3D"):
        F.pdist(engine.zeros(2, 3, 4))


# ---- other backends: the same results as on NumPy ----------------------------------------------------
def _run_all():
    rng = np.random.default_rng(12)
    x = engine.tensor(rng.standard_normal((2, 3, 4, 5)), requires_grad=True)
    g = engine.tensor(rng.uniform(-1.2, 1.2, (2, 3, 2, 2)), requires_grad=True)
    theta = engine.tensor(rng.standard_normal((2, 2, 3)), requires_grad=True)
    outs = [F.grid_sample(x, g, mode=m, padding_mode=p, align_corners=a)
            for m, p, a in (("bilinear", "zeros", False), ("bilinear", "reflection", True),
                            ("nearest", "border", False), ("bilinear", "border", True))]
    outs.append(F.grid_sample(x, F.affine_grid(theta, (2, 3, 3, 3), align_corners=False), align_corners=False))
    outs.append(F.pdist(x[0, 0], 1.5))
    g3 = engine.tensor(rng.uniform(-1.2, 1.2, (2, 1, 2, 2, 3)), requires_grad=True)
    outs.append(F.grid_sample(x.reshape(2, 3, 2, 2, 5), g3, padding_mode="reflection", align_corners=False))
    sum(((k + 1) * o).sum() for k, o in enumerate(outs)).backward()
    return outs + [x.grad, g.grad, theta.grad]


@pytest.mark.parametrize("backend", BACKENDS)
def test_other_backends_match_numpy(backend):
    matches_numpy(backend, _run_all)


def exercise_sampling_ops():
    """Runs the grid_sampler_2d/3d, affine_grid_generator and pdist rows once (for
    test_every_table_op_is_exercised)."""
    theta = f64(1, 2, 3, seed=50)
    F.grid_sample(f64(1, 2, 3, 3, seed=51), F.affine_grid(theta, (1, 2, 3, 3), align_corners=False),
                  align_corners=False)
    F.pdist(f64(4, 3, seed=52))
    F.grid_sample(f64(1, 1, 2, 2, 2, seed=53), F.affine_grid(f64(1, 3, 4, seed=54), (1, 1, 2, 2, 2),
                                                             align_corners=True), align_corners=True)
