"""engine.distributions against closed forms and numbers printed by PyTorch 2.13 (float64 parameters)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import engine
from engine.autograd import gradcheck

D = engine.distributions


def t(x):
    return engine.tensor(x, dtype=engine.float64)


def close(a, b, tol=1e-12):
    np.testing.assert_allclose(np.asarray(a.tolist() if isinstance(a, engine.Tensor) else a, dtype=float),
                               np.asarray(b, dtype=float), rtol=tol, atol=tol)


# ---- values printed by PyTorch 2.13 for the same parameters ---------------------------------------------
def test_normal_matches_pytorch(each_backend):
    d = D.Normal(t([0.1, -1., 2.]), t([1.5]))
    v = t([0.2, 0.7, 1.5])
    assert d.batch_shape == (3,) and d.event_shape == ()
    close(d.log_prob(v), [-1.3266258635350594, -1.966625863535059, -1.3799591968683926])
    close(d.cdf(v), [0.5265764643003651, 0.871462850657585, 0.36944134018176367])
    close(d.icdf(t([0.2, 0.7, 0.9])), [-1.1624318503593714, -0.213399230937939, 3.922327348316901])
    close(d.entropy(), [1.824403641312837] * 3)
    close(d.mean, [0.1, -1., 2.]); close(d.variance, [2.25] * 3); close(d.stddev, [1.5] * 3)


def test_gamma_beta_dirichlet_match_pytorch(each_backend):
    g = D.Gamma(t([0.5, 2., 3.]), t([1.3]))
    v = t([0.2, 0.7, 1.5])
    close(g.log_prob(v), [0.10353614552609558, -0.7419464150037502, -1.0451241709411434])
    close(g.cdf(v), [0.5291583180093684, 0.2311787320957553, 0.30979291021592625])
    close(g.entropy(), [-0.17175433455350242, 1.314851400434042, 1.58521424589552])
    b = D.Beta(t([0.5, 2., 3.]), t([1.3]))
    close(b.log_prob(t([0.2, 0.7, 0.9])), [0.2025018844915754, 0.37740660216608163, 0.6945521161012179])
    close(b.entropy(), [-0.45272202667823197, -0.12203122006351402, -0.3137986570451521])
    close(b.mode, [0.0, 0.7692307692307692, 0.8695652173913044])
    d = D.Dirichlet(t([[0.5, 2., 3.], [1., 1., 1.]]))
    assert d.batch_shape == (2,) and d.event_shape == (3,)
    close(d.log_prob(t([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])), [0.9067536349052947, 0.6931471805599453])
    close(d.entropy(), [-1.9146769909858063, -0.6931471805599453])


def test_discrete_match_pytorch(each_backend):
    close(D.Bernoulli(t([0.2, 0.5, 0.9])).entropy(), [0.5004024235381879, 0.6931471805599453, 0.3250829733914482])
    close(D.Bernoulli(logits=t([0.2, -3, 0.9])).log_prob(t([0., 1., 1.])),
          [-0.7981388693815918, -3.048587351573742, -0.3411538747320878])
    c = D.Categorical(t([[0.2, 0.5, 0.3], [1., 1., 2.]]))
    assert c.batch_shape == (2,) and c.event_shape == ()
    close(c.log_prob(t([1., 2.])), [-0.6931471805599453, -0.6931471805599453])
    close(c.entropy(), [1.0296530140645737, 1.0397207708399179])
    o = D.OneHotCategorical(t([[0.2, 0.5, 0.3], [1., 1., 2.]]))
    assert o.event_shape == (3,)
    close(o.log_prob(t([[0., 1., 0.], [0., 0., 1.]])), [-0.6931471805599453, -0.6931471805599453])
    close(D.Poisson(t([0.5, 2., 3.])).log_prob(t([0., 1., 4.])), [-0.5, -1.3068528194400546, -1.7836046756755066])
    bi = D.Binomial(t([5., 5., 10.]), t([0.2, 0.5, 0.9]))
    close(bi.log_prob(t([0., 1., 4.])), [-1.1157177565710485, -1.8562979903656265, -8.889845089878113])
    close(D.Binomial(5, logits=t([0.2, 0.5, 0.9])).entropy(),
          [1.5174014081188825, 1.4847346327494568, 1.399913864304836])


def test_multivariate_normal_matches_pytorch_for_each_parametrisation(each_backend):
    cov = t([[2., 0.3, 0.1], [0.3, 1., 0.2], [0.1, 0.2, 0.5]])
    loc = t([0.1, 0.2, 0.3])
    x = t([0., 1., 0.])
    for d in (D.MultivariateNormal(loc, cov), D.MultivariateNormal(loc, scale_tril=engine.linalg.cholesky(cov)),
              D.MultivariateNormal(loc, precision_matrix=engine.linalg.inv(cov))):
        assert d.batch_shape == () and d.event_shape == (3,)
        close(d.log_prob(x), -3.2647946490114355, 1e-10)
        close(d.entropy(), 4.191191456309041, 1e-10)
        close(d.variance, [2., 1., 0.5], 1e-10)
        close(d.covariance_matrix, cov.tolist(), 1e-10)
    b = D.MultivariateNormal(t([[0., 0., 0.], [1., 1., 1.]]), scale_tril=engine.eye(3, dtype=engine.float64) * 2)
    assert b.batch_shape == (2,) and b.log_prob(x).shape == (2,)


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")   # log(0) = -inf, silent as in PyTorch
def test_exponential_laplace_uniform_lognormal_closed_forms(each_backend):
    e = D.Exponential(t([0.5, 2.]))
    close(e.log_prob(t([1., 3.])), [math.log(0.5) - 0.5, math.log(2.) - 6.])
    close(e.cdf(t([1., 3.])), [1 - math.exp(-0.5), 1 - math.exp(-6.)])
    close(e.entropy(), [1 - math.log(0.5), 1 - math.log(2.)])
    la = D.Laplace(t(0.3), t([1., 2.]))
    close(la.log_prob(t([1., -1.])), [-math.log(2.) - 0.7, -math.log(4.) - 0.65])
    close(la.icdf(la.cdf(t([1., -1.]))), [1., -1.])
    close(la.variance, [2., 8.])
    u = D.Uniform(t([0., -1.]), t([2., 1.]), validate_args=False)   # 1.5 lies outside the second
    close(u.log_prob(t([0.5, 1.5])), [-math.log(2.), -math.inf])
    close(u.cdf(t([0.5, 1.5])), [0.25, 1.]); close(u.variance, [1 / 3, 1 / 3])
    ln = D.LogNormal(t([0.1, -1., 2.]), t([1.5]))
    close(ln.log_prob(t([0.2, 0.7, 0.9])), [-0.3643386125380823, -1.059699170208823, -2.2040526591863414], 1e-12)
    close(ln.mean, [math.exp(0.1 + 1.125), math.exp(-1 + 1.125), math.exp(2 + 1.125)])
    td = D.TransformedDistribution(D.Normal(t([0.1, -1., 2.]), t([1.5])),
                                   [D.AffineTransform(1., 2.), D.SigmoidTransform()])
    close(td.log_prob(t([0.2, 0.7, 0.9])), [-0.5565759427000581, -0.6464869283298439, -0.046024661548028645], 1e-12)
    close(td.cdf(t([0.2, 0.7, 0.9])), [0.1943167628219376, 0.7309754994800598, 0.17508528958731173])


def test_kl_divergence_matches_pytorch(each_backend):
    K = D.kl_divergence
    close(K(D.Normal(t([0., 1.]), t([1., 2.])), D.Normal(t(0.5), t(1.5))), [0.18324288588594217, 0.15676237199266352])
    close(K(D.Bernoulli(t([0.2, 0., 1.])), D.Bernoulli(t([0.5, 0.3, 0.]))), [0.19274475702175742,
                                                                              0.3566749439387321, math.inf])
    close(K(D.Categorical(t([0.2, 0.5, 0.3])), D.Categorical(t([[0.1, 0.1, 0.8], [0., 0.5, 0.5]]))),
          [0.6490996164255212, math.inf])
    close(K(D.Uniform(t([0., 0.]), t([1., 1.])), D.Uniform(t([-1., 0.5]), t([2., 3.]))), [math.log(3.), math.inf])
    close(K(D.Beta(t([0.5, 2.]), t([1.3, 4.])), D.Beta(t(2.), t(2.))), [1.3636463389261233, 0.303972804325936], 1e-11)
    close(K(D.Gamma(t([0.5, 2.]), t([1.3, 4.])), D.Gamma(t(2.), t(2.))), [1.780565033153295, 0.3862943611198906], 1e-11)
    close(K(D.Dirichlet(t([0.5, 2., 1.])), D.Dirichlet(t([2., 2., 1.]))), 2.0505548290744273, 1e-11)
    cov = t([[2., 0.3, 0.1], [0.3, 1., 0.2], [0.1, 0.2, 0.5]])
    close(K(D.MultivariateNormal(t([0.1, 0.2, 0.3]), cov),
            D.MultivariateNormal(t([[0., 0., 0.], [1., 1., 1.]]), scale_tril=engine.eye(3, dtype=engine.float64) * 2)),
          [1.1000656849848127, 1.3250656849848128], 1e-10)
    close(K(D.Independent(D.Normal(t([0., 1.]), t([1., 2.])), 1),
            D.Independent(D.Normal(t([0.5, 0.5]), t([1.5, 1.5])), 1)),
          0.3400052578786057)
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p type Independent and q "
                                                  "type Normal"):
        K(D.Independent(D.Normal(t([0., 1.]), t(1.)), 1), D.Normal(t(0.), t(1.)))


def test_register_kl_picks_the_most_specific_pair():
    class MyNormal(D.Normal):
        pass

    @D.register_kl(MyNormal, D.Normal)
    def _kl(p, q):
        return engine.tensor(42.)

    assert D.kl_divergence(MyNormal(0., 1.), D.Normal(0., 1.)).item() == 42.
    assert D.kl_divergence(D.Normal(0., 1.), MyNormal(0., 1.)).item() == 0.


# ---- the KL against a Monte Carlo estimate ---------------------------------------------------------------
def test_kl_equals_expected_log_ratio():
    engine.manual_seed(1)
    p, q = D.Gamma(t([2., 0.7]), t([1.5, 1.])), D.Gamma(t(1.2), t(0.8))
    x = p.sample((40000,))
    mc = (p.log_prob(x) - q.log_prob(x)).mean(0)
    close(mc, D.kl_divergence(p, q).tolist(), 0.03)


# ---- sampling: shapes, dtypes, moments, reproducibility ------------------------------------------------
@pytest.mark.parametrize("make, mean, var", [
    (lambda: D.Normal(t([1., -2.]), t([0.5, 2.])), [1., -2.], [0.25, 4.]),
    (lambda: D.Uniform(t([0., 1.]), t([1., 4.])), [0.5, 2.5], [1 / 12, 0.75]),
    (lambda: D.Exponential(t([0.5, 2.])), [2., 0.5], [4., 0.25]),
    (lambda: D.Laplace(t([0.5, 2.]), t([1., 0.5])), [0.5, 2.], [2., 0.5]),
    (lambda: D.Gamma(t([0.3, 4.]), t([1., 2.])), [0.3, 2.], [0.3, 1.]),
    (lambda: D.Beta(t([0.5, 2.]), t([1.5, 3.])), [0.25, 0.4], [0.0625, 0.04]),
    (lambda: D.Bernoulli(t([0.2, 0.7])), [0.2, 0.7], [0.16, 0.21]),
    (lambda: D.Poisson(t([0.5, 6.])), [0.5, 6.], [0.5, 6.]),
    (lambda: D.Binomial(t([3., 10.]), t([0.2, 0.6])), [0.6, 6.], [0.48, 2.4]),
    (lambda: D.LogNormal(t([0., 0.5]), t([0.3, 0.2])), None, None),
])
def test_sample_shapes_and_moments(make, mean, var):
    engine.manual_seed(0)
    d = make()
    x = d.sample((20000,))
    assert x.shape == (20000, 2) and x.dtype is engine.float64 and x.grad_fn is None
    mean = d.mean.tolist() if mean is None else mean
    var = d.variance.tolist() if var is None else var
    close(mean, d.mean.tolist()); close(var, d.variance.tolist())
    sd = np.sqrt(np.asarray(var))
    np.testing.assert_array_less(np.abs(np.asarray(x.mean(0).tolist()) - mean), 5 * sd / math.sqrt(20000))
    np.testing.assert_allclose(x.var(0).tolist(), var, rtol=0.08)
    assert d.sample().shape == (2,) and d.sample((3, 4)).shape == (3, 4, 2)


def test_vector_samples_and_reproducibility():
    engine.manual_seed(3)
    c = D.Categorical(t([[0.1, 0.2, 0.7], [0.5, 0.5, 0.]]))
    x = c.sample((30000,))
    assert x.shape == (30000, 2) and x.dtype is engine.int64
    freq = [[float((x[:, b] == k).double().mean().item()) for k in range(3)] for b in range(2)]
    np.testing.assert_allclose(freq, [[0.1, 0.2, 0.7], [0.5, 0.5, 0.]], atol=0.015)
    o = D.OneHotCategorical(t([0.1, 0.2, 0.7])).sample((5, 2))
    assert o.shape == (5, 2, 3) and bool((o.sum(-1) == 1).all())
    dr = D.Dirichlet(t([[1., 2., 3.]])).sample((20000,))
    assert dr.shape == (20000, 1, 3)
    close(dr.sum(-1).max().item(), 1.0, 1e-12)
    np.testing.assert_allclose(dr.mean(0).tolist(), [[1 / 6, 2 / 6, 3 / 6]], atol=0.01)
    cov = t([[2., 0.6], [0.6, 1.]])
    m = D.MultivariateNormal(t([1., -1.]), cov).sample((40000,))
    assert m.shape == (40000, 2)
    xc = m - m.mean(0)
    np.testing.assert_allclose(((xc.T @ xc) / 40000).tolist(), cov.tolist(), atol=0.05)
    engine.manual_seed(7)
    a = D.Gamma(t([0.5, 3.]), t(1.)).sample((4,))
    engine.manual_seed(7)
    assert a.tolist() == D.Gamma(t([0.5, 3.]), t(1.)).sample((4,)).tolist()


# ---- gradients ---------------------------------------------------------------------------------------------
def _seeded(fn):
    def run(*args):
        engine.manual_seed(11)
        return fn(*args)
    return run


def test_rsample_and_log_prob_gradients_by_finite_differences(each_backend):
    loc, scale = t([0.3, -0.2]).requires_grad_(), t([1.2, 0.7]).requires_grad_()
    assert gradcheck(_seeded(lambda a, b: D.Normal(a, b).rsample((3,))), (loc, scale))
    assert gradcheck(_seeded(lambda a, b: D.Laplace(a, b).rsample((3,))), (loc, scale))
    assert gradcheck(_seeded(lambda a, b: D.Uniform(a, a + b).rsample((3,))), (loc, scale))
    assert gradcheck(_seeded(lambda b: D.Exponential(b).rsample((3,))), (scale,))
    assert gradcheck(_seeded(lambda a, b: D.LogNormal(a, b).rsample((3,))), (loc, scale))
    v = t([0.4, 1.1])
    for make in (D.Normal, D.Laplace, D.Gamma, D.Beta, D.LogNormal):
        assert gradcheck(lambda a, b: make(a.abs() + 0.1, b).log_prob(v / 2), (loc, scale))
        assert gradcheck(lambda a, b: make(a.abs() + 0.1, b).entropy(), (loc, scale))
    p = t([0.3, 0.6]).requires_grad_()
    assert gradcheck(lambda q: D.Bernoulli(q).log_prob(t([1., 0.])), (p,))
    assert gradcheck(lambda q: D.Binomial(4, q).log_prob(t([1., 3.])), (p,))
    assert gradcheck(lambda q: D.Categorical(logits=q.unsqueeze(0).expand(2, 2)).log_prob(t([1., 0.])), (p,))
    assert gradcheck(lambda r: D.Poisson(r).log_prob(t([1., 3.])), (scale,))
    conc = t([0.8, 2.0, 1.5]).requires_grad_()
    assert gradcheck(lambda c: D.Dirichlet(c).log_prob(t([0.2, 0.3, 0.5])), (conc,))
    assert gradcheck(lambda c: D.Dirichlet(c).entropy(), (conc,))
    assert gradcheck(lambda a, x: D.Gamma(a, t(1.)).cdf(x), (scale, t([0.5, 2.]).requires_grad_()))


def test_multivariate_normal_gradients(each_backend):
    loc = t([0.1, 0.2]).requires_grad_()
    A = t([[1.0, 0.0], [0.4, 0.8]]).requires_grad_()
    assert gradcheck(_seeded(lambda m, L: D.MultivariateNormal(m, scale_tril=L.tril()).rsample((2,))), (loc, A))
    assert gradcheck(lambda m, L: D.MultivariateNormal(m, scale_tril=L.tril()).log_prob(t([[0.5, -1.], [0., 0.]])),
                     (loc, A))
    assert gradcheck(lambda m, L: D.MultivariateNormal(m, L @ L.T + engine.eye(2, dtype=engine.float64)).log_prob(
        t([0.5, -1.])), (loc, A))
    assert gradcheck(lambda m, L: D.kl_divergence(D.MultivariateNormal(m, scale_tril=L.tril()),
                                                  D.MultivariateNormal(t([0., 1.]), t([[2., 0.3], [0.3, 1.]]))),
                     (loc, A))


def test_kl_gradients(each_backend):
    a, b = t([0.7, 1.3]).requires_grad_(), t([1.2, 0.4]).requires_grad_()
    assert gradcheck(lambda x, y: D.kl_divergence(D.Normal(x, y), D.Normal(t(0.), t(1.))), (a, b))
    assert gradcheck(lambda x, y: D.kl_divergence(D.Beta(x, y), D.Beta(y, x)), (a, b))
    assert gradcheck(lambda x, y: D.kl_divergence(D.Gamma(x, y), D.Gamma(y, x)), (a, b))
    assert gradcheck(lambda x: D.kl_divergence(D.Bernoulli(x / 2), D.Bernoulli(t([0.5, 0.2]))), (a,))


def test_gamma_implicit_gradient_holds_the_quantile_fixed():
    # NOTE [ Implicit reparameterization of Gamma ]: dx/da is the move of x that keeps P(a, x) fixed;
    # find that move directly by solving P(a +- h, x') = P(a, x) with bisection on the (PyTorch-checked) cdf
    from engine.distributions.gamma import _gammainc_series, standard_gamma_grad_host

    def solve(a, u):
        lo, hi = 1e-12, 200.0
        for _ in range(64):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if _gammainc_series(a, mid)[0] < u else (lo, mid)
        return (lo + hi) / 2

    for a, x in ((0.3, 0.05), (1.0, 1.7), (2.5, 0.9), (7.0, 9.3)):
        u = float(_gammainc_series(a, x)[0])
        h = 1e-5
        fd = (solve(a + h, u) - solve(a - h, u)) / (2 * h)
        close(standard_gamma_grad_host(a, x), fd, 1e-5)


def test_gamma_implicit_gradient_agrees_with_pytorch(each_backend):
    # torch._standard_gamma_grad (PyTorch 2.13) at the same points; PyTorch uses approximations
    # (good to about 1e-4 relative), glassgrad sums the series
    from engine.distributions.gamma import standard_gamma_grad_host
    a = [50., 200., 0.5, 2., 0.05, 1000.]
    x = [48., 215., 12., 25., 1e-8, 1010.]
    torch_values = [0.9830016745497429, 1.0374272342271829, 4.353868206406302, 2.9484533865477776,
                    3.5845671864832955e-06, 1.0051508594287342]
    np.testing.assert_allclose(standard_gamma_grad_host(a, x), torch_values, rtol=5e-4)


def test_gamma_beta_rsample_gradients_in_expectation():
    engine.manual_seed(5)
    a = t([0.5, 3.]).requires_grad_()
    r = t([2., 0.5]).requires_grad_()
    D.Gamma(a, r).rsample((20000,)).mean(0).sum().backward()     # d E[x]/da = 1/r, d E[x]/dr = -a/r^2
    np.testing.assert_allclose(a.grad.tolist(), [0.5, 2.], rtol=0.04)
    np.testing.assert_allclose(r.grad.tolist(), [-0.125, -12.], rtol=0.04)
    c1, c0 = t([2.]).requires_grad_(), t([3.]).requires_grad_()
    D.Beta(c1, c0).rsample((20000,)).mean().backward()            # E[x] = c1/(c1+c0)
    np.testing.assert_allclose([c1.grad.item(), c0.grad.item()], [3 / 25, -2 / 25], rtol=0.08)
    x = D.Dirichlet(t([1., 2., 3.]).requires_grad_()).rsample((2,))
    assert x.grad_fn is not None and x.shape == (2, 3)


def test_rsample_keeps_the_graph_and_sample_does_not():
    loc = t([0.]).requires_grad_()
    assert D.Normal(loc, t([1.])).rsample().grad_fn.name() == "AddBackward0"
    assert D.Normal(loc, t([1.])).sample().grad_fn is None
    assert D.Normal(0., 1.).has_rsample and D.Gamma(1., 1.).has_rsample and D.Dirichlet(t([1., 1.])).has_rsample
    assert not D.Poisson(1.).has_rsample and not D.Categorical(t([0.5, 0.5])).has_rsample
    with pytest.raises(NotImplementedError, match="Poisson has no rsample"):
        D.Poisson(1.).rsample()


# ---- shapes, expand, repr, validation ----------------------------------------------------------------------
def test_expand_independent_and_shapes():
    n = D.Normal(engine.zeros(2, 3), 1.).expand((4, 2, 3))
    assert n.batch_shape == (4, 2, 3) and n.sample().shape == (4, 2, 3)
    i = D.Independent(D.Normal(engine.zeros(2, 3), 1.), 1)
    assert i.batch_shape == (2,) and i.event_shape == (3,) and i.log_prob(engine.zeros(3)).shape == (2,)
    assert repr(i.support) == "IndependentConstraint(Real(), 1)"
    m = D.MultivariateNormal(engine.zeros(2), engine.eye(2)).expand((5,))
    assert m.batch_shape == (5,) and m.event_shape == (2,) and m.rsample((3,)).shape == (3, 5, 2)
    c = D.Categorical(logits=engine.zeros(2, 3)).expand((4, 2))
    assert c.sample().shape == (4, 2) and c.entropy().shape == (4, 2)
    assert D.Dirichlet(engine.ones(3)).expand((2,)).sample().shape == (2, 3)
    assert engine.distributions is D


def test_repr_and_constraints():
    assert repr(D.Normal(engine.tensor([0., 1.]), engine.tensor(1.))) == \
        "Normal(loc: torch.Size([2]), scale: torch.Size([2]))"
    assert repr(D.Normal(0., 1.)) == "Normal(loc: 0.0, scale: 1.0)"
    assert repr(D.Categorical(logits=engine.zeros(2, 3))) == "Categorical(logits: torch.Size([2, 3]))"
    assert repr(D.MultivariateNormal(engine.zeros(2), engine.eye(2))) == \
        "MultivariateNormal(loc: torch.Size([2]), covariance_matrix: torch.Size([2, 2]))"
    assert repr(D.Independent(D.Normal(engine.zeros(3), 1.), 1)) == \
        "Independent(Normal(loc: torch.Size([3]), scale: torch.Size([3])), 1)"
    assert repr(D.Beta(1., 2.)) == "Beta()" and repr(D.LogNormal(0., 1.)) == "LogNormal()"
    assert repr(D.Binomial(10, engine.tensor(0.3))) == "Binomial(total_count: 10.0, probs: 0.30000001192092896)"
    assert repr(D.Uniform(0., 1.).support) == "Interval(lower_bound=0.0, upper_bound=1.0)"
    assert repr(D.Categorical(engine.ones(3)).support) == "IntegerInterval(lower_bound=0, upper_bound=2)"
    assert repr(D.Normal(0., 1.).arg_constraints["scale"]) == "GreaterThan(lower_bound=0.0)"
    assert repr(D.Poisson(1.).support) == "IntegerGreaterThan(lower_bound=0)"
    C = D.constraints
    assert C.positive.check(engine.tensor([1., -1., 0.])).tolist() == [True, False, False]
    assert C.simplex.check(engine.tensor([[0.5, 0.5], [0.5, 0.6]])).tolist() == [True, False]
    assert C.real_vector.check(engine.tensor([[1., float("nan")], [1., 2.]])).tolist() == [False, True]
    assert C.lower_cholesky.check(engine.tensor([[1., 0.], [2., 3.]])).item() is True
    assert C.positive_definite.check(engine.tensor([[1., 1.], [1., 1.]])).item() is False


@pytest.mark.parametrize("make, message", [
    (lambda: D.Normal(engine.tensor([0.]), engine.tensor([-1.])),
     "Expected parameter scale (Tensor of shape (1,)) of distribution Normal(loc: tensor([0.]), scale: "
     "tensor([-1.])) to satisfy the constraint GreaterThan(lower_bound=0.0), but found invalid values:\ntensor([-1.])"),
    (lambda: D.Normal(0., 1.).log_prob(engine.tensor(float("nan"))),
     "Expected value argument (Tensor of shape ()) to be within the support (Real()) of the distribution "
     "Normal(loc: 0.0, scale: 1.0), but found invalid values:\nnan"),
    (lambda: D.Bernoulli(engine.tensor(0.5)).log_prob(engine.tensor(0.3)),
     "Expected value argument (Tensor of shape ()) to be within the support (Boolean()) of the distribution "
     "Bernoulli(probs: 0.5), but found invalid values:\n0.30000001192092896"),
    (lambda: D.Bernoulli(), "Either `probs` or `logits` must be specified, but not both."),
    (lambda: D.Uniform(1., 0.),
     "Expected parameter low (Tensor of shape ()) of distribution Uniform(low: 1.0, high: 0.0) to satisfy the "
     "constraint LessThan(upper_bound=0.0), but found invalid values:\n1.0"),
    (lambda: D.MultivariateNormal(engine.zeros(2)),
     "Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified."),
    (lambda: D.MultivariateNormal(engine.tensor(0.), engine.eye(1)), "loc must be at least one-dimensional."),
    (lambda: D.MultivariateNormal(engine.zeros(2), scale_tril=engine.ones(2)),
     "scale_tril matrix must be at least two-dimensional, with optional leading batch dimensions"),
    (lambda: D.MultivariateNormal(engine.zeros(2), engine.ones(2, 2)),
     "Expected parameter covariance_matrix (Tensor of shape (2, 2)) of distribution MultivariateNormal(loc: "
     "torch.Size([2]), covariance_matrix: torch.Size([2, 2])) to satisfy the constraint PositiveDefinite(), but "
     "found invalid values:\ntensor([[1., 1.],\n        [1., 1.]])"),
    (lambda: D.Independent(D.Normal(0., 1.), 1),
     "Expected reinterpreted_batch_ndims <= len(base_distribution.batch_shape), actual 1 vs 0"),
    (lambda: D.Categorical(engine.tensor(1.)), "`probs` parameter must be at least one-dimensional."),
    (lambda: D.Normal(0., 1.).log_prob(1.), "The value argument to log_prob must be a Tensor"),
    (lambda: D.Normal(engine.zeros(2), 1.).log_prob(engine.zeros(3)),
     "Value is not broadcastable with batch_shape+event_shape: torch.Size([3]) vs torch.Size([2])."),
    (lambda: D.MultivariateNormal(engine.zeros(2), engine.eye(2)).log_prob(engine.zeros(3)),
     "The right-most size of value must match event_shape: torch.Size([3]) vs torch.Size([2])."),
    (lambda: D.Dirichlet(engine.tensor(1.)), "`concentration` parameter must be at least one-dimensional."),
    (lambda: D.Binomial(10, engine.tensor(0.3)).log_prob(engine.tensor(11.)),
     "Expected value argument (Tensor of shape ()) to be within the support (IntegerInterval(lower_bound=0, "
     "upper_bound=10.0)) of the distribution Binomial(total_count: 10.0, probs: 0.30000001192092896), but found "
     "invalid values:\n11.0"),
    (lambda: D.kl_divergence(D.MultivariateNormal(engine.zeros(2), engine.eye(2)),
                             D.MultivariateNormal(engine.zeros(3), engine.eye(3))),
     "KL-divergence between two Multivariate Normals with                          different event shapes "
     "cannot be computed"),
])
def test_validation_errors_in_pytorch_words(make, message):
    with pytest.raises(ValueError) as info:
        make()
    assert str(info.value) == message


def test_validation_can_be_turned_off():
    assert D.Normal(engine.tensor([0.]), engine.tensor([-1.]), validate_args=False).scale.item() == -1.
    D.Distribution.set_default_validate_args(False)
    try:
        assert math.isnan(D.Normal(0., 1.).log_prob(engine.tensor(float("nan"))).item())
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError, match="Expected parameter"):
        D.Exponential(engine.tensor(-1.))
    with pytest.raises(NotImplementedError, match="Inhomogeneous total count not supported by `entropy`."):
        D.Binomial(engine.tensor([2., 3.]), engine.tensor(0.5)).entropy()
    with pytest.raises(NotImplementedError, match="does not implement mode"):
        D.Distribution(validate_args=False).mode


def test_special_function_nodes_appear_in_the_graph():
    a = t([2., 3.]).requires_grad_()
    assert D.Gamma(a, 1.).rsample().grad_fn.next_functions[0][0].name() == "StandardGammaBackward"
    lp = D.Gamma(a, 1.).log_prob(t([1., 2.]))
    assert lp.grad_fn.next_functions[1][0].name() == "LgammaBackward0"
    assert D.Categorical(engine.ones(2, 3)).enumerate_support().tolist() == [[0, 0], [1, 1], [2, 2]]
    close(D.Normal(0., 1.).perplexity(), math.exp(0.5 + 0.5 * math.log(2 * math.pi)), 1e-6)
