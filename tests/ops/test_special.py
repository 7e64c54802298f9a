"""lgamma, digamma, polygamma, mvlgamma (engine/ops/special/gamma.py) and the engine.special namespace, against
numbers printed by PyTorch 2.13 (float64) and finite differences."""
import math

import numpy as np
import pytest

import engine
from tests.checks import BACKENDS, gradcheck, gradgradcheck, matches_numpy

# Printed by the reference PyTorch with:
#   X = [...]; t = torch.tensor(X, dtype=torch.float64)
#   print(torch.lgamma(t).tolist()); print(torch.digamma(t).tolist())
#   for n in (2, 3, 6): print(torch.polygamma(n, t).tolist())
#   S = [...]; for each function print(f(torch.tensor(S, dtype=torch.float64)).tolist())
#   print(torch.mvlgamma(torch.tensor([1.7, 3.2, 10.5], dtype=torch.float64), 3).tolist())
#   print(torch.lgamma(torch.tensor([0.3, 4.5, -1.5])).tolist(), torch.digamma(...).tolist())   # float32
# and (TRIGAMMA_TRUE) mpmath.polygamma(1, x) at 40 digits.
X = [-30.7, -10.71, -2.61, -2.46, -1.5, -0.42, -1e-20, 1e-300, 1e-20, 1e-08, 0.1, 0.5, 0.9, 0.999, 1.0, 1.001, 1.3, 1.4616, 1.7, 2.0, 2.001, 2.5, 3.7, 6.2, 12.0, 171.6, 10000.0, 1000000000000000.0, 1e+100, 2e+305]
LGAMMA = [-75.70198246001306, -15.41736523215696, -0.11862717393747273, -0.004466346754714766, 0.860047015376481, 1.2972876603428345, 46.051701859880914, 690.7755278982137, 46.051701859880914, 18.42068073818021, 2.252712651734206, 0.5723649429247001, 0.06637623973474295, 0.0005780385328913802, 0.0, -0.0005763935982833062, -0.10817480950786047, -0.12148629003589732, -0.09580769740706588, 0.0, 0.000423106734800117, 0.2846828704729192, 1.428072326665388, 5.1322987878372945, 17.502307845873887, 709.6573587630563, 82099.71749644238, 3.3538776394910668e+16, 2.2925850929940456e+102, 1.4039632010874878e+308]
DIGAMMA = [1.1579602221507965, -0.01973170443705774, 0.007813600737704984, 1.4867304571617408, 0.7031566406452433, 0.7655510521696802, 1e+20, -9.999999999999999e+299, -1e+20, -100000000.57721564, -10.423754940411076, -1.9635100260214229, -0.7549269499470513, -0.5788618021086457, -0.5772156649015328, -0.5755719318103018, -0.16919088886680006, -3.1106251230539556e-05, 0.20854787487349372, 0.422784335098467, 0.4234290671906983, 0.7031566406452431, 1.1671535393615111, 1.7417418216895297, 2.4426616799758123, 5.1422496041643715, 9.21029037114285, 34.538776394910684, 230.25850929940458, 702.9816005437439]
POLY2 = [-68.83857073554515, -77.05167806525749, -25.32054810797149, 7.847959495147943, -0.23620405164172825, 16.018094510520147, 2.0000000000000003e+60, -math.inf, -2.0000000000000003e+60, -2e+24, -2001.8614573783439, -16.828796644234316, -3.201797043794721, -2.4106202092316718, -2.404113806319188, -2.3976322897333318, -1.1984625146519565, -0.8855761967999035, -0.6040890841034592, -0.4041138063191886, -0.4036203097033726, -0.23620405164172736, -0.09539530872855405, -0.030545983860287944, -0.007547205368998914, -3.4158301871165455e-05, -1.0001000050000002e-08, -1.000000000000001e-30, -1e-200, -0.0]
POLY3 = [769.0208485156818, 875.2712080041897, 305.58004244711947, 207.33044250302657, 194.59427621918758, 247.00415882376575, 6.000000000000002e+80, math.inf, 6.000000000000002e+80, 5.999999999999999e+32, 60004.512876790235, 97.40909103400242, 9.73901409377673, 6.518886830187096, 6.493939402266829, 6.469114055935719, 2.401023914308926, 1.551125050812975, 0.8895620066243167, 0.4939394022668293, 0.4930541757260497, 0.2239058488172521, 0.05827921795656364, 0.010637631974165021, 0.001310093231070826, 3.992753966149736e-07, 2.0003000200000004e-12, 2.000000000000003e-45, 0.0, 0.0]
POLY6 = [-3283537.089465368, -4166132.539976843, -501799.8997762589, 111448.23591954622, -1.3180061075581837, 279671.84568525094, 7.200000000000005e+142, -math.inf, -7.200000000000005e+142, -7.2e+58, -7200000373.781805, -92203.45792380297, -1513.8810303046332, -731.0922907711819, -726.0114797149846, -720.9710699397377, -117.06294952174872, -51.991591609469324, -18.330554984096477, -6.0114797149844375, -5.99097026886891, -1.3180061075500353, -0.09576004675283736, -0.00332165361365932, -5.120348656417774e-05, -4.782502754490285e-12, -1.2003600419999998e-22, -1.2000000000000039e-88, -0.0, -0.0]
SPECIAL = [0.0, -0.0, -1.0, -7.0, math.inf, -math.inf, math.nan, 5e-324, -5e-324]
SPECIAL_OUT = {
 'lgamma': [math.inf, math.inf, math.inf, math.inf, math.inf, math.inf, math.nan, 744.4400719213812, 744.4400719213812] ,
 'digamma': [-math.inf, math.inf, math.nan, math.nan, math.inf, math.nan, math.nan, -math.inf, math.inf] ,
 'poly1': [math.inf, math.inf, 6.580790147320947e+32, 1.3430183974124383e+31, 0.0, math.nan, math.nan, math.inf, math.inf] ,
 'poly2': [-math.inf, -math.inf, -math.inf, -math.inf, math.nan, -math.inf, math.nan, -math.inf, math.inf] ,
 'poly3': [math.inf, math.inf, math.inf, math.inf, math.nan, math.inf, math.nan, math.inf, math.inf] ,
}
MVL = [1.7967802878953851, 3.134267676374753, 40.148880949056604]
F32 = [1.0957978963851929, 2.4537365436553955, 0.8600470423698425], [-3.502523899078369, 1.3888709545135498, 0.7031567692756653]
TRIGAMMA_X = [0.1, 0.5, 1.3, 3.7, 12.0, -0.42, -2.61]
TRIGAMMA_TRUE = [101.43329915079275, 4.934802200544679, 1.1342534349966193, 0.3100378576700383, 0.08690187287176838,
                 9.514314785758264, 10.829996468647181]

D = engine.float64


def t64(values, requires_grad=False):
    return engine.tensor(values, dtype=D, requires_grad=requires_grad)


def same(got, want, rtol=1e-13, atol=0.0):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert np.array_equal(np.isnan(got), np.isnan(want)), (got, want)
    inf = np.isinf(want)
    assert np.array_equal(got[inf], want[inf]), (got, want)
    fin = ~np.isnan(want) & ~inf
    np.testing.assert_allclose(got[fin], want[fin], rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", ["lgamma", "digamma", "POLY2", "POLY3", "POLY6"])
def test_float64_values_match_pytorch(name):
    x = t64(X)
    fn = {"lgamma": engine.lgamma, "digamma": engine.digamma}.get(name) or \
        (lambda v: engine.polygamma(int(name[4:]), v))
    want = globals()[name.upper()]
    # near a root (digamma's at 1.4616, lgamma's at -2.457) only an absolute accuracy is kept: the recurrence
    # and the reflection cancel there (PyTorch's too); POLY6 at -1.5: PyTorch's sum cancels (off by 6e-12)
    atol = {"digamma": 1e-15, "lgamma": 1e-15}.get(name, 0.0)
    same(fn(x).tolist(), want, rtol=1e-11 if name == "POLY6" else 1e-13, atol=atol)


def test_trigamma_and_half_integers_are_accurate():
    """polygamma(1, x) against the true values; PyTorch's own trigamma is good to about 5e-10 only."""
    same(engine.polygamma(1, t64(TRIGAMMA_X)).tolist(), TRIGAMMA_TRUE)
    same(engine.polygamma(6, t64([-1.5])).tolist(), [-1.318006107550035])   # mpmath; the sums cancel exactly


def test_poles_infinities_and_nan_as_pytorch():
    s = t64(SPECIAL)
    same(engine.lgamma(s).tolist(), SPECIAL_OUT["lgamma"])
    same(engine.digamma(s).tolist(), SPECIAL_OUT["digamma"])
    for n in (1, 2, 3):
        same(engine.polygamma(n, s).tolist(), SPECIAL_OUT[f"poly{n}"], rtol=1e-12)
    assert engine.polygamma(0, s).tolist()[:2] == [-math.inf, math.inf]


def test_mvlgamma_float32_and_integer_inputs():
    same(engine.mvlgamma(t64([1.7, 3.2, 10.5]), 3).tolist(), MVL)
    f32 = engine.tensor([0.3, 4.5, -1.5])
    assert engine.lgamma(f32).dtype is engine.float32
    assert engine.lgamma(f32).tolist() == F32[0]
    # PyTorch runs float32 digamma in float32 arithmetic (a few ulp off); here it is float64, rounded once
    np.testing.assert_allclose(engine.digamma(f32).tolist(), F32[1], rtol=1e-6)
    for fn in (engine.lgamma, engine.digamma, lambda v: engine.polygamma(1, v), lambda v: engine.mvlgamma(v, 2)):
        assert fn(engine.tensor([3, 4])).dtype is engine.float32
    assert engine.lgamma(engine.tensor([1, 2, 3])).tolist() == [0.0, 0.0, float(np.float32(math.log(2.0)))]


def test_graph_nodes_and_saved_values():
    x = t64([0.7, 2.5], requires_grad=True)
    assert engine.lgamma(x).grad_fn.name() == "LgammaBackward0"
    assert engine.digamma(x).grad_fn.name() == "DigammaBackward0"
    y = engine.polygamma(2, x)
    assert y.grad_fn.name() == "PolygammaBackward0" and y.grad_fn._saved_n == 2
    assert y.grad_fn._saved_self is x or y.grad_fn._saved_self.tolist() == x.tolist()
    m = engine.mvlgamma(x + 2, 2)
    assert m.grad_fn.name() == "MvlgammaBackward0" and m.grad_fn._saved_p == 2


@pytest.mark.parametrize("fn", [engine.lgamma, engine.digamma, lambda v: engine.polygamma(1, v),
                                lambda v: engine.polygamma(3, v), lambda v: engine.mvlgamma(v + 1.5, 3)],
                         ids=["lgamma", "digamma", "trigamma", "polygamma3", "mvlgamma"])
def test_finite_differences(fn):
    x = t64([0.35, 1.7, 4.2, -0.6, -2.3], requires_grad=True)
    if fn.__name__ == "<lambda>" and "mvlgamma" in repr(fn.__code__.co_names):
        x = t64([0.35, 1.7, 4.2], requires_grad=True)
    gradcheck(fn, [x])
    gradgradcheck(fn, [x])


def test_gradient_formulas():
    x = t64([0.6, 3.0], requires_grad=True)
    (g,) = engine.autograd.grad(engine.lgamma(x).sum(), x)
    assert g.tolist() == engine.digamma(x.detach()).tolist()
    (g,) = engine.autograd.grad(engine.digamma(x).sum(), x)
    assert g.tolist() == engine.polygamma(1, x.detach()).tolist()
    (g,) = engine.autograd.grad(engine.polygamma(2, x).sum(), x)
    assert g.tolist() == engine.polygamma(3, x.detach()).tolist()


def test_methods_and_in_place_forms():
    x = t64([2.5, 4.0])
    assert x.lgamma().tolist() == engine.lgamma(x).tolist()
    assert x.polygamma(2).tolist() == engine.polygamma(2, x).tolist()
    assert x.mvlgamma(p=2).tolist() == engine.mvlgamma(x, 2).tolist()
    y = x.clone()
    assert y.digamma_() is y and y.tolist() == engine.digamma(x).tolist()
    y = x.clone()
    y.polygamma_(1)
    assert y.tolist() == engine.polygamma(1, x).tolist()
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        engine.tensor([1, 2]).lgamma_()


def test_errors_as_pytorch():
    x = t64([2.0, 3.0])
    with pytest.raises(RuntimeError, match=r"^polygamma\(n, x\) does not support negative n.$"):
        engine.polygamma(-1, x)
    with pytest.raises(TypeError, match=r"polygamma\(\): argument 'n' \(position 1\) must be int, not float"):
        engine.polygamma(1.5, x)
    with pytest.raises(TypeError, match=r"polygamma\(\): argument 'input' \(position 2\) must be Tensor, not float"):
        engine.polygamma(1, 2.0)
    with pytest.raises(TypeError, match=r"lgamma\(\): argument 'input' \(position 1\) must be Tensor, not float"):
        engine.lgamma(2.0)
    with pytest.raises(RuntimeError, match="^p has to be greater than or equal to 1$"):
        engine.mvlgamma(x, 0)
    assert engine.mvlgamma(x, 5).tolist()[0] == math.inf      # no domain check in PyTorch 2.13: a pole


def exercise_special_ops():
    """One call of each gamma-family row (tests/ops/test_ops_grad.py checks every row is exercised)."""
    x = t64([0.7, 2.5], requires_grad=True)
    for y in (engine.lgamma(x), engine.digamma(x), engine.polygamma(2, x), engine.mvlgamma(x + 1, 2)):
        y.sum().backward()
    S, p = engine.special, t64([0.3, 0.6], requires_grad=True)
    for y in (S.erfc(x), S.exp2(x), S.entr(x), S.i0(x), S.i1(x), S.ndtri(p), S.log_ndtr(x), S.xlog1py(x, p),
              S.xlog1py(2.0, p), S.xlog1py(x, 2.0)):
        y.sum().backward()

# engine.special: printed by the reference PyTorch with, for each name, getattr(torch.special, name)(torch.tensor(XS,
# dtype=torch.float64)).tolist() (ndtri on PS, entr on ES, xlog1py on the pairs in test_special_values_match_pytorch)
XS = [-40.0, -5.0, -1.3, -0.3, 0.0, 0.2, 0.9, 2.5, 7.0, 30.5, 100.0, math.inf, -math.inf, math.nan]
PS = [0.0, 1e-300, 1e-20, 1e-05, 0.01, 0.3, 0.5, 0.77, 0.99, 0.999999999999, 1.0, 1.5, -0.1, math.nan]
ES = [0.0, 1e-300, 0.3, 1.0, 5.0, -1.0, math.inf, math.nan]
SPECIAL_REF = {
    'erfc': [2.0, 1.9999999999984626, 1.9340079449406524, 1.3286267594591274, 1.0, 0.7772974107895215, 0.20309178757716786, 0.0004069520174449589, 4.183825607779414e-23, 0.0, 0.0, 0.0, 2.0, math.nan],
    'exp2': [9.094947017729282e-13, 0.03125, 0.40612619817811774, 0.8122523963562356, 1.0, 1.148698354997035, 1.8660659830736148, 5.656854249492381, 128.0, 1518500249.988025, 1.2676506002282294e+30, math.inf, 0.0, math.nan],
    'ndtr': [0.0, 2.8665157186802404e-07, 0.0968004845856103, 0.3820885778110474, 0.5, 0.579259709439103, 0.8159398746532405, 0.9937903346742238, 0.9999999999987201, 1.0, 1.0, 1.0, 0.0, math.nan],
    'log_ndtr': [-804.6084420137539, -15.064998393988727, -2.335103278662442, -0.9621028181688508, -0.6931471805599453, -0.5460043537227741, -0.20341460975574688, -0.006229025485860001, -1.2798125438866539e-12, -1.3029379131780713e-204, -0.0, -0.0, -math.inf, math.nan],
    'i0': [1.48947747934199e+16, 27.239871823604442, 1.4692777979442508, 1.0226268793515967, 1.0, 1.0100250277951457, 1.2129851657286845, 3.289839144050123, 168.59390851028968, 1278062138712.5664, 1.0737517071310738e+42, math.nan, math.nan, math.nan],
    'i1': [-1.4707396163259354e+16, -24.335642142450524, -0.7973293149792692, -0.15169384000359282, 0.0, 0.1005008340281251, 0.4971264481609644, 2.5167162452886984, 156.03909286995534, 1256932623308.4714, 1.0683693903381625e+42, math.nan, math.nan, math.nan],
    'expit': [4.248354255291589e-18, 0.0066928509242848554, 0.2141650169574414, 0.425557483188341, 0.5, 0.549833997312478, 0.7109495026250039, 0.9241418199787566, 0.9990889488055994, 0.9999999999999432, 1.0, 1.0, 0.0, math.nan],
    'sinc': [-3.898171832519376e-17, 3.898171832519376e-17, -0.19809085184633993, 0.8583936913341398, 1.0, 0.935489283788639, 0.10929240478705181, 0.12732395447351627, 3.8981718325193755e-17, 0.010436389710943957, 6.2528371445095934e-18, math.nan, math.nan, math.nan],
    'ndtri': [-math.inf, -37.0470962993612, -9.262340089798409, -4.264890793922825, -2.3263478740408408, -0.5244005127080409, 0.0, 0.7388468491852137, 2.3263478740408408, 7.0344869100478356, math.inf, math.nan, math.nan, math.nan],
    'entr': [0.0, 6.907755278982137e-298, 0.3611918412977808, -0.0, -8.047189562170502, -math.inf, -math.inf, math.nan],
    'xlog1py': [0.0, math.nan, 0.8109302162163288, math.nan, 0.0],
}


def test_special_values_match_pytorch():
    S = engine.special
    x, p, e = t64(XS), t64(PS), t64(ES)
    for name, want in SPECIAL_REF.items():
        if name == "xlog1py":
            got = S.xlog1py(t64([0.0, 0.0, 2.0, 3.0, 0.0]), t64([-1.0, math.nan, 0.5, -2.0, 3.0]))
        else:
            got = getattr(S, name)({"ndtri": p, "entr": e}.get(name, x))
        same(got.tolist(), want, rtol=1e-14)


def test_special_names_are_the_engine_functions():
    S = engine.special
    assert S.gammaln is engine.lgamma and S.psi is S.digamma is engine.digamma and S.multigammaln is engine.mvlgamma
    assert S.expit is engine.functional.sigmoid and engine.sigmoid.__wrapped__ is S.expit and S.erfinv is engine.erfinv and S.logsumexp is engine.logsumexp
    assert engine.erfc is S.erfc and engine.tensor([0.5]).i0().tolist() == S.i0(engine.tensor([0.5])).tolist()


SPECIAL_NODES = {   # name: (call, PyTorch 2.13's grad_fn chain from the output)
    "gammaln": (lambda S, x: S.gammaln(x), ["LgammaBackward0"]),
    "multigammaln": (lambda S, x: S.multigammaln(x + 2, 2), ["MvlgammaBackward0", "AddBackward0"]),
    "erfc": (lambda S, x: S.erfc(x), ["ErfcBackward0"]),
    "expit": (lambda S, x: S.expit(x), ["SigmoidBackward0"]),
    "logit": (lambda S, x: S.logit(x), ["LogitBackward0"]),
    "xlog1py": (lambda S, x: S.xlog1py(x, x * 2), ["SpecialXlog1PyBackward0"]),
    "xlog1py_number_self": (lambda S, x: S.xlog1py(2.0, x), ["SpecialXlog1PyBackward1"]),
    "xlog1py_number_other": (lambda S, x: S.xlog1py(x, 2.0), ["SpecialXlog1PyBackward2"]),
    "exp2": (lambda S, x: S.exp2(x), ["Exp2Backward0"]),
    "entr": (lambda S, x: S.entr(x), ["SpecialEntrBackward0"]),
    "round": (lambda S, x: S.round(x), ["RoundBackward1"]),
    "i0": (lambda S, x: S.i0(x), ["I0Backward0"]),
    "i1": (lambda S, x: S.i1(x), ["SpecialI1Backward0"]),
    "ndtr": (lambda S, x: S.ndtr(x), ["MulBackward1", "AddBackward1", "ErfBackward0", "MulBackward1"]),
    "ndtri": (lambda S, x: S.ndtri(x), ["SpecialNdtriBackward0"]),
    "log_ndtr": (lambda S, x: S.log_ndtr(x), ["SpecialLogNdtrBackward0"]),
    "logsumexp": (lambda S, x: S.logsumexp(x, 0), ["LogsumexpBackward0"]),
    "log_softmax": (lambda S, x: S.log_softmax(x, 0), ["LogSoftmaxBackward0"]),
    "softmax": (lambda S, x: S.softmax(x, 0), ["SoftmaxBackward0"]),
}


@pytest.mark.parametrize("name", sorted(SPECIAL_NODES))
def test_special_graph_nodes_and_finite_differences(name):
    call, chain = SPECIAL_NODES[name]
    x = t64([0.3, 0.45, 0.7], requires_grad=True)
    node, names = call(engine.special, x).grad_fn, []
    while node is not None and "AccumulateGrad" not in node.name():
        names.append(node.name())
        nxt = [n for n, _ in node.next_functions if n is not None]
        node = nxt[0] if nxt else None
    assert names == chain
    if name != "round":
        gradcheck(lambda v: call(engine.special, v), [x])
    if name not in ("round", "xlog1py_number_other"):      # the latter's gradient is a constant
        gradgradcheck(lambda v: call(engine.special, v), [x])


def test_special_gradients_at_special_points():
    S = engine.special
    x = t64([0.0, 2.0], requires_grad=True)
    (g,) = engine.autograd.grad(S.i1(x).sum(), x)
    assert g.tolist()[0] == 0.5                              # i1'(0) = 1/2, as PyTorch's i1_backward
    (g,) = engine.autograd.grad(S.entr(x).sum(), x)
    assert g.tolist()[0] == math.inf                         # -(1 + log 0)
    (g,) = engine.autograd.grad(S.xlog1py(x, t64([-1.0, 1.0])).sum(), x)
    assert g.tolist() == [0.0, math.log(2.0)]                # 0 where self is 0 and other <= -1


def test_special_dtypes():
    S = engine.special
    for fn in (S.erfc, S.exp2, S.entr, S.i0, S.i1, S.ndtr, S.log_ndtr):
        assert fn(engine.tensor([1, 2])).dtype is engine.float32
    assert S.erfc(engine.tensor([0.5])).tolist() == [float(np.float32(math.erfc(0.5)))]
    with pytest.raises(TypeError, match=r"must be Tensor, not float"):
        S.erfc(0.5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_other_backends_match_numpy(backend):
    """The kernels and backward formulas run unchanged off NumPy (array_api_strict, CuPy)."""
    def run():
        x = t64([0.35, 1.7, -2.3, 12.0], requires_grad=True)
        S = engine.special
        out = (engine.lgamma(x) + engine.digamma(x) + engine.polygamma(3, x) + S.erfc(x) + S.i1(x)
               + S.log_ndtr(x) + engine.mvlgamma(x.abs() + 2, 2))
        out.sum().backward()
        return out, x.grad

    matches_numpy(backend, run, **({"rtol": 1e-14, "atol": 1e-14} if backend != "cuda" else {}))
