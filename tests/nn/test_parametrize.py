"""engine.nn.utils.parametrize, parametrizations (weight_norm, spectral_norm, orthogonal) and the legacy
weight_norm/spectral_norm hooks, against PyTorch 2.13's layouts, messages and numbers
(tests/fixtures/nn_utils_reference.json, made by tests/fixtures/make_nn_utils_reference.py)."""
from __future__ import annotations

import copy
import json
import os
import pickle
import warnings

import numpy as np
import pytest

import engine
import engine.nn as nn
from engine.nn.utils import parametrizations as P
from engine.nn.utils import parametrize as PZ
from engine.nn.utils.weight_norm import _weight_norm, norm_except_dim

from tests.checks import f64, gradcheck, gradgradcheck

REF = json.load(open(os.path.join(os.path.dirname(__file__), "..", "fixtures", "nn_utils_reference.json")))
D = engine.float64
W = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [-2.0, 1.0, 0.5], [0.3, 0.2, -0.1]]
U0, V0 = [0.6, -0.8, 0.0, 0.0], [0.0, 0.6, 0.8]
X = [[0.3, -0.2, 0.1], [0.5, 0.4, -0.3], [-0.1, 0.2, 0.6]]
XT = [[0.3, -0.2], [0.5, 0.4], [-0.1, 0.2], [0.7, -0.5]]


def lin(w, bias=False):
    w = engine.tensor(w, dtype=D)
    m = nn.Linear(w.shape[1], w.shape[0], bias=bias, dtype=D)
    with engine.no_grad():
        m.weight.copy_(w)
    return m


def flat(t):
    return np.asarray(t.detach().cpu().numpy(), dtype=np.float64).ravel()


def close(t, key, tol=1e-12):
    np.testing.assert_allclose(flat(t), REF[key], rtol=tol, atol=tol, err_msg=key)


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).mT


class SymmetricInv(Symmetric):
    def right_inverse(self, A):
        return A.triu()


class DropColumn(nn.Module):
    def forward(self, X):
        return X[:, :-1]


def err(fn, kind):
    with pytest.raises(kind) as e:
        fn()
    return str(e.value)


# ---- parametrize ---------------------------------------------------------------------------------
def test_register_moves_the_tensor_into_a_parametrization_list():
    m = lin(X, bias=True)
    w0 = m.weight
    opt = engine.optim.SGD(m.parameters(), lr=0.1)
    PZ.register_parametrization(m, "weight", Symmetric())
    assert type(m).__name__ == "ParametrizedLinear" and type(m).__mro__[1] is nn.Linear
    assert repr(m) == ("ParametrizedLinear(\n  in_features=3, out_features=3, bias=True\n"
                       "  (parametrizations): ModuleDict(\n    (weight): ParametrizationList(\n"
                       "      (0): Symmetric()\n    )\n  )\n)")
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert [n for n, _ in m.named_parameters()] == ["bias", "parametrizations.weight.original"]
    assert m.parametrizations.weight.original is w0           # NOTE [ Parametrizations ] 3
    assert opt.param_groups[0]["params"][0] is w0
    w = m.weight.detach().numpy()
    np.testing.assert_array_equal(w, w.T)
    np.testing.assert_array_equal(np.triu(w), np.triu(np.array(X)))
    assert m.weight.grad_fn.name() == "AddBackward0"
    assert PZ.is_parametrized(m) and PZ.is_parametrized(m, "weight") and not PZ.is_parametrized(m, "bias")
    assert PZ.type_before_parametrizations(m) is nn.Linear


def test_gradients_reach_the_original_parameter():
    m = lin(X)
    PZ.register_parametrization(m, "weight", Symmetric())
    x = f64(2, 3, seed=1, requires_grad=False)

    def fn(w):
        m.parametrizations.weight._parameters["original"] = w
        return m(x)
    gradcheck(fn, [f64(3, 3, seed=2)])
    m.parametrizations.weight._parameters["original"] = nn.Parameter(engine.tensor(X, dtype=D))
    m(x).sum().backward()
    g = m.parametrizations.weight.original.grad.numpy()
    assert g[1, 0] == 0.0 and g[0, 1] != 0.0                  # the lower triangle is never read


def test_assignment_goes_through_right_inverse():
    m = lin(X)
    PZ.register_parametrization(m, "weight", SymmetricInv())
    orig = m.parametrizations.weight.original
    A = engine.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 5.0], [3.0, 5.0, 6.0]], dtype=D)
    m.weight = A
    assert m.parametrizations.weight.original is orig
    np.testing.assert_array_equal(orig.detach().numpy(), np.triu(A.numpy()))
    np.testing.assert_array_equal(m.weight.detach().numpy(), A.numpy())
    m2 = PZ.register_parametrization(lin(X), "weight", Symmetric())

    def assign():
        m2.weight = A
    assert err(assign, RuntimeError) == "parametrization Symmetric does not implement right_inverse."


def test_shape_and_dtype_checks_and_unsafe():
    assert err(lambda: PZ.register_parametrization(lin(X), "weight", DropColumn()), ValueError) == (
        "Registering a parametrization may not change the shape of the tensor, unless `unsafe` flag is enabled.\n"
        "unparametrized shape: torch.Size([3, 3])\nparametrized shape: torch.Size([3, 2])")

    class Half(nn.Module):
        def forward(self, X):
            return X.float()
    assert err(lambda: PZ.register_parametrization(lin(X), "weight", Half()), ValueError) == (
        "Registering a parametrization may not change the dtype of the tensor, unless `unsafe` flag is enabled.\n"
        "unparametrized dtype: torch.float64\nparametrized dtype: torch.float32")
    m = PZ.register_parametrization(lin(X), "weight", Symmetric())
    assert err(lambda: PZ.register_parametrization(m, "weight", DropColumn()), ValueError) == (
        "Registering a parametrization may not change the shape of the tensor, unless the `unsafe` flag is enabled.\n"
        "module.weight.shape: torch.Size([3, 3])\nparametrization(module.weight).shape: torch.Size([3, 2])")
    assert m.parametrizations.weight.unsafe is False
    PZ.register_parametrization(m, "weight", DropColumn(), unsafe=True)
    assert tuple(m.weight.shape) == (3, 2) and m.parametrizations.weight.unsafe is True
    assert err(lambda: PZ.register_parametrization(lin(X), "foo", Symmetric()), ValueError) == (
        "Module 'Linear(in_features=3, out_features=3, bias=False)' does not have a parameter, a buffer, or a "
        "parametrized element with name 'foo'")


def test_chained_parametrizations_and_their_repr():
    m = PZ.register_parametrization(lin(X), "weight", Symmetric())
    PZ.register_parametrization(m, "weight", Symmetric())
    assert "(0-1): 2 x Symmetric()" in repr(m)
    assert list(m.state_dict()) == ["parametrizations.weight.original"]


def test_cached_computes_once_per_block():
    m = PZ.register_parametrization(lin(X), "weight", Symmetric())
    assert m.weight is not m.weight
    with PZ.cached():
        a = m.weight
        assert m.weight is a
        with PZ.cached():
            assert m.weight is a
    assert m.weight is not a and not PZ._cache


def test_remove_parametrizations_both_ways():
    m = PZ.register_parametrization(lin(X), "weight", Symmetric())
    orig = m.parametrizations.weight.original
    sym = m.weight.detach().numpy().copy()
    PZ.remove_parametrizations(m, "weight")
    assert type(m) is nn.Linear and not hasattr(m, "parametrizations")
    assert m.weight is orig and isinstance(m.weight, nn.Parameter)
    np.testing.assert_array_equal(m.weight.detach().numpy(), sym)
    assert m.weight._storage.base == "parameter"
    m = PZ.register_parametrization(lin(X), "weight", Symmetric())
    PZ.remove_parametrizations(m, "weight", leave_parametrized=False)
    np.testing.assert_array_equal(m.weight.detach().numpy(), np.array(X))
    assert err(lambda: PZ.remove_parametrizations(m, "weight"), ValueError) == (
        "Module Linear(in_features=3, out_features=3, bias=False) does not have a parametrization on weight")
    m = P.weight_norm(lin(W))
    assert err(lambda: PZ.remove_parametrizations(m, "weight", leave_parametrized=False), ValueError) == (
        "Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is parametrized in terms of a "
        "sequence of tensors.")
    w = m.weight.detach().numpy().copy()
    PZ.remove_parametrizations(m, "weight")
    np.testing.assert_allclose(m.weight.detach().numpy(), w, rtol=1e-15)
    assert list(m.state_dict()) == ["weight"]


def test_two_parametrized_tensors_share_one_class_until_both_go():
    m = lin(X, bias=True)
    PZ.register_parametrization(m, "weight", Symmetric())
    cls = type(m)
    PZ.register_parametrization(m, "bias", nn.Identity())
    assert type(m) is cls
    PZ.remove_parametrizations(m, "weight")
    assert type(m) is cls and PZ.is_parametrized(m, "bias")
    PZ.remove_parametrizations(m, "bias")
    assert type(m) is nn.Linear


def test_deepcopy_works_and_pickling_refuses():
    m = P.weight_norm(lin(W))
    c = copy.deepcopy(m)
    assert type(c).__name__ == "ParametrizedLinear"
    np.testing.assert_array_equal(c.weight.detach().numpy(), m.weight.detach().numpy())
    assert c.parametrizations.weight.original0 is not m.parametrizations.weight.original0
    msg = err(lambda: pickle.dumps(m), RuntimeError)
    assert msg.startswith("Serialization of parametrized modules is only supported through state_dict(). See:\n")


def test_state_dict_round_trip_into_a_parametrized_module():
    a, b = P.weight_norm(lin(W)), P.weight_norm(nn.Linear(3, 4, bias=False, dtype=D))
    assert str(b.load_state_dict(a.state_dict())) == "<All keys matched successfully>"
    np.testing.assert_allclose(b.weight.detach().numpy(), a.weight.detach().numpy(), rtol=1e-15)


def test_transfer_parametrizations_and_params():
    a = PZ.register_parametrization(lin(X), "weight", Symmetric())
    b = nn.Linear(3, 3, bias=False, dtype=D)
    PZ.transfer_parametrizations_and_params(a, b)
    assert type(b).__name__ == "ParametrizedLinear"
    assert b.parametrizations.weight.original is a.parametrizations.weight.original


# ---- weight_norm ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_matches_pytorch(dim):
    m = P.weight_norm(lin(W), dim=dim)
    assert list(m.state_dict()) == ["parametrizations.weight.original0", "parametrizations.weight.original1"]
    close(m.parametrizations.weight.original0, f"wn_g_{dim}")
    with engine.no_grad():
        m.parametrizations.weight.original0.mul_(2.0)
    close(m.weight, f"wn_w_{dim}")
    assert m.weight.grad_fn.name() == REF[f"wn_fn_{dim}"]
    assert "(0): _WeightNorm()" in repr(m)


def test_weight_norm_node_keeps_v_g_and_the_norms():
    v, g = f64(4, 3, 2, seed=3), f64(4, 1, 1, seed=4)
    fn = _weight_norm(v, g, 0).grad_fn
    assert fn.name() == "WeightNormInterfaceBackward0"
    assert fn._saved_v is not None and tuple(fn._saved_g.shape) == (4, 1, 1)
    assert tuple(fn._saved_result1.shape) == (4, 1, 1)
    np.testing.assert_allclose(fn._saved_result1.numpy().ravel(), norm_except_dim(v, 2, 0).detach().numpy().ravel())
    assert _weight_norm(v, f64(1, 3, 1, seed=5), 1).grad_fn.name() == "MulBackward0"   # a middle dim: composed
    assert _weight_norm(v, f64(1, 1, 2, seed=5), 2).grad_fn.name() == "WeightNormInterfaceBackward0"


@pytest.mark.parametrize("dim,gshape", [(0, (4, 1, 1)), (2, (1, 1, 2)), (1, (1, 3, 1)), (-1, ())])
def test_weight_norm_gradients(dim, gshape):
    v, g = f64(4, 3, 2, seed=6), f64(*gshape, seed=7, low=0.5)
    gradcheck(lambda v, g: _weight_norm(v, g, dim), [v, g])
    if dim in (0, 2):
        gradgradcheck(lambda v, g: _weight_norm(v, g, dim), [v, g])


def test_weight_norm_gradients_reach_g_and_v_through_the_module():
    m = P.weight_norm(lin(W, bias=True))
    x = f64(2, 3, seed=8, requires_grad=False)
    plist = m.parametrizations.weight

    def fn(g, v):
        plist._parameters["original0"], plist._parameters["original1"] = g, v
        return m(x)
    gradcheck(fn, [f64(4, 1, seed=9, low=0.5), f64(4, 3, seed=10)])


# ---- spectral_norm -------------------------------------------------------------------------------
def _spectral(w=W):
    m = P.spectral_norm(lin(w))
    sn = m.parametrizations.weight[0]
    with engine.no_grad():
        sn._u.copy_(engine.tensor(U0, dtype=D))
        sn._v.copy_(engine.tensor(V0, dtype=D))
    return m, sn


def test_spectral_norm_power_iteration_matches_pytorch():
    m, sn = _spectral()
    assert list(m.state_dict()) == ["parametrizations.weight.original", "parametrizations.weight.0._u",
                                    "parametrizations.weight.0._v"]
    assert [n for n, _ in m.named_buffers()] == ["parametrizations.weight.0._u", "parametrizations.weight.0._v"]
    w = m.weight
    close(w, "sn_w_train")
    close(sn._u, "sn_u")
    close(sn._v, "sn_v")
    assert w.grad_fn.name() == "DivBackward0"
    assert w.grad_fn.next_functions[1][0].name() == "VdotBackward0"
    m.eval()
    close(m.weight, "sn_w_eval")
    close(sn._u, "sn_u_eval")                               # eval: no iteration
    with engine.no_grad():
        sn._u.copy_(engine.tensor(U0, dtype=D))
        sn._v.copy_(engine.tensor(V0, dtype=D))
    sn._power_method(engine.tensor(W, dtype=D), 15)
    close(sn._u, "sn_u15", 1e-10)
    close(sn._v, "sn_v15", 1e-10)


def test_spectral_norm_starts_near_the_top_singular_value():
    engine.manual_seed(0)
    m = P.spectral_norm(lin(W))
    m.eval()
    sigma = np.linalg.svd(np.array(W), compute_uv=False)[0]
    np.testing.assert_allclose(np.linalg.svd(m.weight.detach().numpy(), compute_uv=False)[0], 1.0, rtol=1e-3)
    np.testing.assert_allclose(flat(m.parametrizations.weight.original), np.ravel(W))
    assert sigma > 1


def test_spectral_norm_gradient_with_fixed_vectors():
    m, sn = _spectral()
    m.eval()
    x = f64(2, 3, seed=11, requires_grad=False)

    def fn(w):
        m.parametrizations.weight._parameters["original"] = w
        return m(x)
    gradcheck(fn, [engine.tensor(W, dtype=D, requires_grad=True)])


def test_spectral_norm_shapes_dims_and_errors():
    ct = P.spectral_norm(nn.ConvTranspose2d(2, 5, 3))
    assert tuple(ct.parametrizations.weight[0]._u.shape) == (5,)    # dim 1 for transposed convolutions
    b = P.spectral_norm(nn.Linear(3, 3), name="bias")
    assert not b.parametrizations.bias[0]._buffers
    np.testing.assert_allclose(np.linalg.norm(b.bias.detach().numpy()), 1.0, rtol=1e-6)
    assert err(lambda: P.spectral_norm(nn.Linear(3, 3), n_power_iterations=0), ValueError) == (
        "Expected n_power_iterations to be positive, but got n_power_iterations=0")
    assert err(lambda: P.spectral_norm(nn.Linear(3, 3), dim=2), IndexError) == (
        "Dimension out of range (expected to be in range of [-2, 1] but got 2)")
    assert err(lambda: P.spectral_norm(nn.Linear(3, 3), name="nope"), ValueError) == (
        "Module 'Linear(in_features=3, out_features=3, bias=True)' has no parameter or buffer with name 'nope'")


# ---- orthogonal ----------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", ["sq", "tall", "wide"])
@pytest.mark.parametrize("mp", ["matrix_exp", "cayley", "householder"])
def test_orthogonal_maps_match_pytorch(shape, mp):
    x = {"sq": X, "tall": XT, "wide": np.array(XT).T.tolist()}[shape]
    m = P.orthogonal(lin(x), orthogonal_map=mp, use_trivialization=False)
    close(m.weight, f"orth_{shape}_{mp}", 1e-10)
    close(m.parametrizations.weight.original, f"orth_{shape}_{mp}_orig", 1e-10)
    w = m.weight.detach().numpy()
    small = w if w.shape[0] >= w.shape[1] else w.T
    np.testing.assert_allclose(small.T @ small, np.eye(small.shape[1]), atol=1e-12)


@pytest.mark.parametrize("mp", ["matrix_exp", "cayley", "householder"])
def test_orthogonal_gradients(mp):
    m = P.orthogonal(lin(XT), orthogonal_map=mp, use_trivialization=False)

    def fn(w):
        m.parametrizations.weight._parameters["original"] = w
        return m.weight
    gradcheck(fn, [engine.tensor(XT, dtype=D, requires_grad=True)])


def test_orthogonal_trivialization_and_training_stays_orthogonal():
    m = P.orthogonal(lin(W[:3]))
    assert list(m.state_dict()) == ["parametrizations.weight.original", "parametrizations.weight.0.base"]
    close(m.weight, "orth_triv_w", 1e-10)
    close(m.parametrizations.weight.original, "orth_triv_orig")
    assert m.weight.grad_fn.name() == "MmBackward0"
    t = P.orthogonal(lin(W), orthogonal_map="householder")
    close(t.weight, "orth_triv_tall_w", 1e-10)          # base's first columns depend on W only
    opt = engine.optim.SGD(m.parameters(), lr=0.5)
    for _ in range(3):
        opt.zero_grad()
        (m(engine.tensor([[1.0, 2.0, 3.0]], dtype=D)) ** 3).sum().backward()
        opt.step()
    w = m.weight.detach().numpy()
    assert not np.allclose(w, np.reshape(REF["orth_triv_w"], (3, 3)))
    np.testing.assert_allclose(w.T @ w, np.eye(3), atol=1e-12)


def test_orthogonal_errors():
    assert err(lambda: P.orthogonal(nn.Linear(3, 3), orthogonal_map="foo"), ValueError) == (
        'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". Got: foo')
    assert err(lambda: P.orthogonal(nn.Linear(3, 3), name="bias"), ValueError) == (
        "Expected a matrix or batch of matrices. Got a tensor of 1 dimensions.")
    m = P.orthogonal(nn.Linear(3, 3), use_trivialization=False)

    def assign():
        m.weight = engine.eye(3)
    assert err(assign, NotImplementedError) == (
        "It is not possible to assign to the matrix exponential or the Cayley parametrizations when "
        "use_trivialization=False.")


def test_matrix_exp_of_a_large_matrix():
    a = np.array([[0.0, 3.0, -1.0], [-3.0, 0.0, 2.5], [1.0, -2.5, 0.0]])
    got = P.matrix_exp(engine.tensor(a, dtype=D)).numpy()
    w, V = np.linalg.eig(a)
    np.testing.assert_allclose(got, (V @ np.diag(np.exp(w)) @ np.linalg.inv(V)).real, atol=1e-12)


# ---- the legacy hooks ----------------------------------------------------------------------------
def test_legacy_weight_norm():
    m = lin(W, bias=True)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        nn.utils.weight_norm(m)
    assert [(r.category, str(r.message)) for r in rec] == [
        (FutureWarning, "`torch.nn.utils.weight_norm` is deprecated in favor of "
                        "`torch.nn.utils.parametrizations.weight_norm`.")]
    assert rec[0].filename == __file__
    assert list(m.state_dict()) == ["bias", "weight_g", "weight_v"]
    close(m.weight_g, "wn_g_0")
    assert m.weight.grad_fn.name() == "WeightNormInterfaceBackward0"
    x = f64(2, 3, seed=12, requires_grad=False)

    def fn(g, v):
        m._parameters["weight_g"], m._parameters["weight_v"] = g, v
        return m(x)
    gradcheck(fn, [f64(4, 1, seed=13, low=0.5), f64(4, 3, seed=14)])
    with pytest.warns(FutureWarning):
        assert err(lambda: nn.utils.weight_norm(m), RuntimeError) == (
            "Cannot register two weight_norm hooks on the same parameter weight")
    w = m.weight.detach().numpy().copy()
    nn.utils.remove_weight_norm(m)
    assert list(m.state_dict()) == ["bias", "weight"] and not m._forward_pre_hooks
    np.testing.assert_allclose(m.weight.detach().numpy(), w)
    assert err(lambda: nn.utils.remove_weight_norm(m), ValueError) == (
        "weight_norm of 'weight' not found in Linear(in_features=3, out_features=4, bias=True)")


def test_legacy_spectral_norm():
    m = nn.utils.spectral_norm(lin(W))
    assert list(m.state_dict()) == ["weight_orig", "weight_u", "weight_v"]
    assert type(m.weight) is engine.Tensor and not m.weight.requires_grad
    with engine.no_grad():
        m.weight_u.copy_(engine.tensor(U0, dtype=D))
        m.weight_v.copy_(engine.tensor(V0, dtype=D))
    m(engine.zeros(1, 3, dtype=D))
    close(m.weight, "lsn_w")
    close(m.weight_u, "lsn_u")
    close(m.weight_v, "lsn_v")
    assert err(lambda: nn.utils.spectral_norm(m), RuntimeError) == (
        "Cannot register two spectral_norm hooks on the same parameter weight")
    nn.utils.remove_spectral_norm(m)
    close(m.weight, "lsn_removed")
    assert list(m.state_dict()) == ["weight"] and isinstance(m.weight, nn.Parameter)
    assert err(lambda: nn.utils.remove_spectral_norm(m), ValueError) == (
        "spectral_norm of 'weight' not found in Linear(in_features=3, out_features=4, bias=False)")
    assert err(lambda: nn.utils.spectral_norm(nn.Linear(3, 3, bias=False), name="bias"), ValueError) == (
        "`SpectralNorm` cannot be applied as parameter `bias` is None")
    assert err(lambda: nn.utils.spectral_norm(nn.Linear(3, 3), n_power_iterations=0), ValueError) == (
        "Expected n_power_iterations to be positive, but got n_power_iterations=0")


def test_legacy_spectral_norm_gradient_reaches_weight_orig():
    m = nn.utils.spectral_norm(lin(W))
    m.eval()
    x = f64(2, 3, seed=15, requires_grad=False)

    def fn(w):
        m._parameters["weight_orig"] = w
        return m(x)
    gradcheck(fn, [engine.tensor(W, dtype=D, requires_grad=True)])


class Twice(nn.Module):
    def forward(self, x):
        return 2 * x

    def right_inverse(self, x):
        return x / 2


def test_a_buffer_can_be_parametrized():
    bn = nn.BatchNorm1d(3)
    PZ.register_parametrization(bn, "running_mean", Twice())
    assert list(bn.state_dict()) == ["weight", "bias", "running_var", "num_batches_tracked",
                                     "parametrizations.running_mean.original"]
    assert [n for n, _ in bn.named_buffers()] == ["running_var", "num_batches_tracked",
                                                  "parametrizations.running_mean.original"]
    bn.running_mean = engine.tensor([2.0, 4.0, 6.0])
    assert bn.parametrizations.running_mean.original.tolist() == [1.0, 2.0, 3.0]
    assert not bn.parametrizations.running_mean.original.requires_grad


def test_recorded_leaves_carry_the_original_names():
    m = nn.Sequential(P.weight_norm(nn.Linear(3, 2)))
    with engine.record() as trace:
        m(engine.randn(4, 3)).sum().backward()
    leaves = sorted(e["tensor"]["name"] for e in trace.events if e["kind"] == "leaf")
    assert leaves == ["0.bias", "0.parametrizations.weight.original0", "0.parametrizations.weight.original1"]
    assert m[0].parametrizations.weight.original1.grad is not None


def exercise_weight_norm_ops():
    """For test_ops_grad's coverage check: the fused weight-norm row, forward and through create_graph."""
    v, g = f64(4, 3, seed=20), f64(4, 1, seed=21, low=0.5)
    engine.autograd.grad(_weight_norm(v, g, 0).sum(), [v, g], create_graph=True)
