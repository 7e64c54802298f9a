"""engine.optim's NAdam, RAdam, Adamax, Adadelta, ASGD, Rprop, Adafactor and LBFGS against PyTorch 2.13:
trajectories and final state to ~1e-13 in float64, state layout, argument errors, flags, memory, backends."""
from __future__ import annotations

import numpy as np
import pytest

import engine
import engine.nn as nn
from engine import optim
from engine import memory
from tests.checks import BACKENDS, assert_ran_on, on_backend

# Expected values from PyTorch 2.13, generated (default dtype float32, so the scalar state tensors
# ``step``, ``mu_product``, ``eta`` and ``mu`` are float32 as here) by:
#   p = torch.nn.Parameter(torch.tensor(P2 if two_d else P1, dtype=torch.float64))
#   k = torch.tensor(K2 if two_d else K1, dtype=torch.float64)
#   opt = getattr(torch.optim, name)([p], **kw)
#   for _ in range(steps):
#       opt.zero_grad(); LOSSES[loss](p, k).backward(); opt.step(); print(p.detach().tolist())
#   print({key: (v.tolist() if torch.is_tensor(v) else v) for key, v in opt.state_dict()["state"][0].items()})
# (lerp weights 0.6 and 0.9 take lerp's second branch; RAdam's 8 steps cross into the rectified
# update at step 6; the "bowl" loss makes Rprop's gradient change sign and ASGD's average move.)
P1, K1 = [0.5, -1.5, 2.0], [0.3, -0.2, 0.1]
P2, K2 = [[0.5, -1.5, 2.0], [1.0, 0.3, -0.7]], [[0.3, -0.2, 0.1], [-0.4, 0.2, 0.05]]
LOSSES = {
    "cubic": lambda p, k: (p * p * p).sum() * 0.1 + (p * k).sum(),
    "bowl": lambda p, k: ((p - k) ** 2 * engine.tensor([1.0, 3.0, 0.5], dtype=engine.float64)).sum(),
}
# (name, kwargs, loss, steps, two_d)
CONFIGS = [
    ("NAdam", dict(lr=0.1), "cubic", 4, False),
    ("NAdam", dict(lr=0.05, betas=(0.8, 0.99), weight_decay=0.1, momentum_decay=0.01), "cubic", 4, False),
    ("NAdam", dict(lr=0.1, weight_decay=0.2, decoupled_weight_decay=True, maximize=True), "cubic", 4, False),
    ("RAdam", dict(lr=0.1), "cubic", 8, False),
    ("RAdam", dict(lr=0.05, betas=(0.4, 0.9), eps=1e-3, weight_decay=0.1), "cubic", 8, False),
    ("RAdam", dict(lr=0.1, betas=(0.9, 0.99), weight_decay=0.2, decoupled_weight_decay=True, maximize=True),
     "cubic", 8, False),
    ("Adamax", dict(lr=0.1), "cubic", 4, False),
    ("Adamax", dict(lr=0.05, betas=(0.4, 0.99), eps=1e-3, weight_decay=0.1, maximize=True), "cubic", 4, False),
    ("Adadelta", dict(), "cubic", 4, False),
    ("Adadelta", dict(lr=0.5, rho=0.3, eps=1e-4, weight_decay=0.1), "cubic", 4, False),
    ("Adadelta", dict(lr=2.0, maximize=True), "bowl", 4, False),
    ("ASGD", dict(), "cubic", 4, False),
    ("ASGD", dict(lr=0.05, lambd=0.1, alpha=0.5, t0=0.5, weight_decay=0.1), "cubic", 5, False),
    ("ASGD", dict(lr=0.3, t0=2, maximize=True), "bowl", 5, False),
    ("Rprop", dict(), "cubic", 4, False),
    ("Rprop", dict(lr=0.8, etas=(0.3, 1.5), step_sizes=(0.01, 1.0)), "bowl", 6, False),
    ("Rprop", dict(lr=0.1, maximize=True), "cubic", 4, False),
    ("Adafactor", dict(), "cubic", 4, False),
    ("Adafactor", dict(lr=0.05, beta2_decay=-0.5, eps=(1e-3, 1e-3), d=1.5, weight_decay=0.1), "cubic", 4, True),
    ("Adafactor", dict(lr=0.3, maximize=True), "cubic", 4, True),
]
IDS = [f"{c[0]}-{c[1]}" for c in CONFIGS]
EXPECTED = [
    # NAdam {'lr': 0.1}
    [[0.3943548236837256, -1.60564517690937, 1.8943548216791761],
     [0.3187710994800467, -1.6901582599409275, 1.8195386378634413],
     [0.24918778217514703, -1.7722342464073413, 1.751480358515729],
     [0.18034507171578804, -1.856733143539371, 1.6851609248248296]],
    # NAdam {'lr': 0.05, 'betas': [0.8, 0.99], 'weight_decay': 0.1, 'momentum_decay': 0.01}
    [[0.44523309768992136, -1.5547669019135761, 1.9452330967664009],
     [0.40276154861860014, -1.600416934987217, 1.9027112365232262],
     [0.3621215556748016, -1.6459619852590381, 1.8620402988212894],
     [0.32132601232265634, -1.6934173195286149, 1.8212674575221726]],
    # NAdam {'lr': 0.1, 'weight_decay': 0.2, 'decoupled_weight_decay': True, 'maximize': True}
    [[0.5956451763162743, -1.36435482309063, 2.065645178320824],
     [0.6648275545140864, -1.2690694568289214, 2.104738486027637],
     [0.7288554336566779, -1.1864306618117781, 2.1384667681923824],
     [0.7929164074439528, -1.1113467749158852, 2.171952388599511]],
    # RAdam {'lr': 0.1}
    [[0.4625, -1.5475, 1.87], [0.4255699013157895, -1.597285625, 1.7479436842105265],
     [0.38919212973749506, -1.6495635068394647, 1.6334139743599199],
     [0.35334755273983637, -1.7045613395522736, 1.5260050768098594],
     [0.31801552542517486, -1.762530540020712, 1.4253232806044736],
     [0.3154555625422153, -1.765151861682578, 1.422885716958083],
     [0.31221515870301214, -1.7684890876286314, 1.419832127027428],
     [0.3083856264343822, -1.7724512110106014, 1.4162496477701985]],
    # RAdam {'lr': 0.05, 'betas': [0.4, 0.9], 'eps': 0.001, 'weight_decay': 0.1}
    [[0.47875, -1.51625, 1.925], [0.45779873325892856, -1.5329671149553572, 1.853421875],
     [0.43717988823078957, -1.550240558181794, 1.7855510743103027],
     [0.4169095972462976, -1.56814456840708, 1.7214488424220744],
     [0.39699002086784313, -1.5867405207662457, 1.6610106478277193],
     [0.3846471187987762, -1.6002115414478912, 1.6495552157688433],
     [0.36873870859200975, -1.617803338437991, 1.634800182701248],
     [0.34991080519728396, -1.638937085255421, 1.617243203174287]],
    # RAdam {'lr': 0.1, 'betas': [0.9, 0.99], 'weight_decay': 0.2, 'decoupled_weight_decay': True, 'maximize': True}
    [[0.5275, -1.4224999999999999, 2.09], [0.5548961513157894, -1.350126217105263, 2.184012105263158],
     [0.5822208153420021, -1.2826089721677891, 2.282522256618441],
     [0.609506937609062, -1.2196878259327313, 2.386072045626528],
     [0.6367880867741198, -1.161111673160297, 2.495267368381731],
     [0.6322666336420086, -1.130383507055179, 2.4536346632034793],
     [0.6300611867078852, -1.0985042567499266, 2.41509410311328],
     [0.6298248530373821, -1.0658742403909762, 2.3792725419412046]],
    # Adamax {'lr': 0.1}
    [[0.4000000026666666, -1.599999997894737, 1.9000000007692308],
     [0.3036931719959958, -1.6922442514153744, 1.8046414850560712],
     [0.21055556672983272, -1.7793047242341922, 1.7137780652851697],
     [0.12006768044156123, -1.8626609939994696, 1.6272602909146299]],
    # Adamax {'lr': 0.05, 'betas': [0.4, 0.99], 'eps': 0.001, 'weight_decay': 0.1, 'maximize': True}
    [[0.5498466257668712, -1.4500798722044728, 2.049954586739328],
     [0.5992435408204979, -1.4024892075736708, 2.0992234581468487],
     [0.648320599644722, -1.3575279226906187, 2.148112292238689],
     [0.697180323016285, -1.3153106784175648, 2.1968123505394885]],
    # Adadelta {}
    [[0.4968378347703744, -1.5031622075843225, 1.9968377316956412],
     [0.4935974079660542, -1.5064157364721271, 1.9935978059638375],
     [0.490305992594952, -1.5097384519881085, 1.990307764523133],
     [0.4869770234608922, -1.5131198237466448, 1.9869812113327137]],
    # Adadelta {'lr': 0.5, 'rho': 0.3, 'eps': 0.0001, 'weight_decay': 0.1}
    [[0.4940262188319092, -1.5059721057936886, 1.9940240466631212],
     [0.48662709489067035, -1.513403089162186, 1.986620753422251],
     [0.4781181066031192, -1.5220005608705045, 1.9781051598752746],
     [0.46865451639948036, -1.5316259965363659, 1.9686322550878013]],
    # Adadelta {'lr': 2.0, 'maximize': True}
    [[0.506324357687247, -1.5063245548005673, 2.0063245465605832],
     [0.5129078167727097, -1.512828307345985, 2.012823598694332],
     [0.5197354600421693, -1.519465577549017, 2.0194496329517375],
     [0.5268036019515367, -1.526214454562211, 2.0261796867772284]],
    # ASGD {}
    [[0.49624950008383023, -1.5047484998938627, 1.9869980002906173],
     [0.4925102160048952, -1.5095397956122711, 1.9741515399916474],
     [0.4887820301948414, -1.514374409943877, 1.9614577621305134],
     [0.4850648261853904, -1.5192528741166613, 1.9489138793330896]],
    # ASGD {'lr': 0.05, 'lambd': 0.1, 'alpha': 0.5, 't0': 0.5, 'weight_decay': 0.1}
    [[0.4762499996460974, -1.508750000130385, 1.9149999987334012],
     [0.45314298366556055, -1.5177848398564657, 1.836038778808921],
     [0.43064369214822557, -1.5271155163643553, 1.762479696078868],
     [0.40871926652187085, -1.5367535718501715, 1.693773259165218],
     [0.3873390466061843, -1.5467111263829223, 1.6294426320418018]],
    # ASGD {'lr': 0.3, 't0': 2, 'maximize': True}
    [[0.6199850047677755, -3.839955092981458, 2.5699400226473808],
     [0.8119530866475163, -10.391611576083525, 3.310828252962043],
     [1.1190867701483573, -28.735375859484357, 4.2739340991121],
     [1.6104720828937147, -80.09472272896825, 5.525901582044049],
     [2.3966362861960184, -223.88988335164166, 7.1533598549572535]],
    # Rprop {}
    [[0.49, -1.51, 1.99], [0.478, -1.522, 1.978], [0.46359999999999996, -1.5364, 1.9636],
     [0.44631999999999994, -1.55368, 1.94632]],
    # Rprop {'lr': 0.8, 'etas': [0.3, 1.5], 'step_sizes': [0.01, 1.0]}
    [[-0.30000000000000004, -0.7, 1.2], [-0.30000000000000004, 0.30000000000000004, 0.19999999999999996],
     [-0.06000000000000005, 0.30000000000000004, -0.8], [0.29999999999999993, 5.551115123125783e-17, -0.8],
     [0.84, -0.4499999999999999, -0.5], [0.84, -0.4499999999999999, -0.050000000000000044]],
    # Rprop {'lr': 0.1, 'maximize': True}
    [[0.6, -1.4, 2.1], [0.72, -1.2799999999999998, 2.22], [0.864, -1.136, 2.3640000000000003],
     [1.0368, -0.9632, 2.5368000000000004]],
    # Adafactor {}
    [[0.48528039855612026, -1.5147196014438797, 1.9852803985561203],
     [0.47067119959038195, -1.529573039236131, 1.9706835574237924],
     [0.45616483099589905, -1.544552023006422, 1.9562036682733672],
     [0.44175460503961006, -1.5596502915746875, 1.9418358680316143]],
    # Adafactor {'lr': 0.05, 'beta2_decay': -0.5, 'eps': [0.001, 0.001], 'd': 1.5, 'weight_decay': 0.1}
    [[[0.4400845951073231, -1.5461140639741622, 1.9312489626852112],
      [1.0643110378051768, 0.18251115779096255, -0.7368035824088629]],
     [[0.3806597790698147, -1.5941646892487564, 1.864324994222535],
      [1.1023204450936983, 0.07952588429212962, -0.7781870448893696]],
     [[0.3216863648591821, -1.6438300285607998, 1.79896060528455],
      [1.1225491977552424, -0.0112462720039812, -0.8239244040938526]],
     [[0.26303036034960636, -1.6949003378687248, 1.7349646869947575],
      [1.1326467697524447, -0.091801842542892, -0.8738776128221456]]],
    # Adafactor {'lr': 0.3, 'maximize': True}
    [[[0.7850436050841229, -1.2338284715230636, 2.291674464543838],
      [0.6558995251354669, 0.8758363595031344, -0.49990947640094774]],
     [[1.0055664835089362, -1.121803567807681, 2.5354845051905444],
      [0.20659007749112004, 1.5602959153191205, -0.43359980292103345]],
     [[1.265874751172667, -1.0589067990271042, 2.831847109332174],
      [-0.2130442024067126, 2.388275488636437, -0.3945517762687295]],
     [[1.6934279117445756, -1.0171821902875127, 3.3025694587460372],
      [-0.5685322669737497, 3.3705659733318125, -0.3640329703508761]]],
]

FINAL_STATE = [
    {'step': 4.0,
     'mu_product': 0.04107322916388512,
     'exp_avg': [0.11702297406307316, 0.214428813552042, 0.39049246509148133],
     'exp_avg_sq': [0.00047076764410446353, 0.0015352436376642156, 0.005301443335156107]},
    {'step': 4.0,
     'mu_product': 0.02570459060370922,
     'exp_avg': [0.23257205876217307, 0.23557289854428862, 0.822092677394887],
     'exp_avg_sq': [0.006260244065066951, 0.006023932256857941, 0.07821217672771821]},
    {'step': 4.0,
     'mu_product': 0.04107322916388512,
     'exp_avg': [-0.1451297647591107, -0.11137411541149057, -0.4823545811792723],
     'exp_avg_sq': [0.0007030395793327584, 0.0004826814887920956, 0.0077921717136039854]},
    {'step': 8.0,
     'exp_avg': [0.19484641893628607, 0.37229751853009696, 0.4921767537552234],
     'exp_avg_sq': [0.0009547871838994466, 0.003256398993254312, 0.006961265434700881]},
    {'step': 8.0,
     'exp_avg': [0.3808687640385466, 0.4136446795901198, 1.080226923690996],
     'exp_avg_sq': [0.08917039570097661, 0.0834599763264615, 0.8286182530989601]},
    {'step': 8.0,
     'exp_avg': [-0.23169122696981365, -0.15130749657624187, -0.9843776305195264],
     'exp_avg_sq': [0.012596604993331218, 0.007228145933039881, 0.22319624195310886]},
    {'step': 4.0,
     'exp_avg': [0.11634570710562632, 0.21493290526086445, 0.38563579180141344],
     'exp_inf': [0.37387613459503, 0.7497776005046345, 1.29610390867003]},
    {'step': 4.0,
     'exp_avg': [-0.34493974432978936, -0.49973189555582936, -1.2057937458719337],
     'exp_inf': [0.36226382001263535, 0.6074071739999999, 1.2705046967962177]},
    {'step': 4.0,
     'square_avg': [0.04795989582931975, 0.07915315703260835, 0.5756008758529054],
     'acc_delta': [3.662688712106627e-06, 3.723396112264313e-06, 3.660051459180672e-06]},
    {'step': 4.0,
     'square_avg': [0.17302500900512116, 0.11475703670372242, 2.160542384024964],
     'acc_delta': [0.00032807925041783155, 0.000338118780215426, 0.0003286851042057512]},
    {'step': 4.0,
     'square_avg': [0.061088770745747166, 21.26310361507246, 1.2552580955412023],
     'acc_delta': [3.904470379440533e-06, 3.715434550722834e-06, 3.7044990099250074e-06]},
    {'step': 4.0,
     'eta': 0.009999969974160194,
     'mu': 1.0,
     'ax': [0.4850648261853904, -1.5192528741166613, 1.9489138793330896]},
    {'step': 5.0,
     'eta': 0.04938647896051407,
     'mu': 0.2222222238779068,
     'ax': [0.4152209983585962, -1.5341350387945127, 1.7153471336378905]},
    {'step': 5.0,
     'eta': 0.2999662458896637,
     'mu': 0.3333333432674408,
     'ax': [2.003554184544867, -151.99230304030493, 6.339630718500651]},
    {'step': 4.0,
     'prev': [0.3644774879999999, 0.5081574879999999, 1.256717488],
     'step_size': [0.01728, 0.01728, 0.01728]},
    {'step': 6.0, 'prev': [0.0, 0.0, -0.6], 'step_size': [0.162, 0.13499999999999998, 0.44999999999999996]},
    {'step': 4.0,
     'prev': [-0.5239488, -0.18714879999999995, -1.7765488000000005],
     'step_size': [0.17279999999999998, 0.17279999999999998, 0.17279999999999998]},
    {'step': 4.0, 'variance': [0.13507396113306733, 0.24911606075409604, 1.611154415393108]},
    {'step': 4.0,
     'row_var': [[0.5751203212604705], [0.0333850474498031]],
     'col_var': [[0.0592408467542455, 0.18661936604593926, 0.6668978402652257]]},
    {'step': 4.0,
     'row_var': [[1.5254284177211215], [0.5404504974800416]],
     'col_var': [[0.24394865566191173, 0.7816715041125883, 2.073198213027245]]},
]


def _run(i, steps=None, **extra):
    name, kw, loss, n, two_d = CONFIGS[i]
    p = nn.Parameter(engine.tensor(P2 if two_d else P1, dtype=engine.float64))
    k = engine.tensor(K2 if two_d else K1, dtype=engine.float64)
    opt = getattr(optim, name)([p], **{**kw, **extra})
    traj = []
    for _ in range(n if steps is None else steps):
        opt.zero_grad()
        LOSSES[loss](p, k).backward()
        opt.step()
        traj.append(p.detach().tolist())
    return traj, opt, p


def _state_values(opt):
    return {key: (v.tolist() if isinstance(v, engine.Tensor) else v) for key, v in opt.state_dict()["state"][0].items()}


@pytest.mark.parametrize("i", range(len(CONFIGS)), ids=IDS)
def test_trajectory_and_final_state_match_pytorch(i):
    traj, opt, _ = _run(i)
    np.testing.assert_allclose(traj, EXPECTED[i], rtol=1e-13, atol=0)
    got = _state_values(opt)
    assert list(got) == list(FINAL_STATE[i])
    for key, want in FINAL_STATE[i].items():
        np.testing.assert_allclose(got[key], want, rtol=1e-13, atol=0, err_msg=key)


# PyTorch 2.13: list(opt.state_dict()["param_groups"][0]) and the dtype of each scalar state tensor
GROUP_KEYS = {
    "NAdam": ["lr", "betas", "eps", "weight_decay", "momentum_decay", "decoupled_weight_decay", "maximize", "foreach",
              "capturable", "differentiable", "params"],
    "RAdam": ["lr", "betas", "eps", "weight_decay", "maximize", "foreach", "capturable", "decoupled_weight_decay",
              "differentiable", "params"],
    "Adamax": ["lr", "betas", "eps", "weight_decay", "foreach", "maximize", "differentiable", "capturable", "params"],
    "Adadelta": ["lr", "rho", "eps", "weight_decay", "maximize", "capturable", "foreach", "differentiable", "params"],
    "ASGD": ["lr", "lambd", "alpha", "t0", "weight_decay", "foreach", "maximize", "differentiable", "capturable",
             "params"],
    "Rprop": ["lr", "etas", "step_sizes", "foreach", "maximize", "differentiable", "capturable", "params"],
    "Adafactor": ["lr", "beta2_decay", "eps", "d", "weight_decay", "foreach", "maximize", "params"],
}
SCALAR_STATE = {"NAdam": ["step", "mu_product"], "ASGD": ["step", "eta", "mu"]}
FIRST = {name: next(i for i, c in enumerate(CONFIGS) if c[0] == name) for name in GROUP_KEYS}


@pytest.mark.parametrize("name", list(GROUP_KEYS))
def test_defaults_group_keys_and_scalar_state(name):
    p = nn.Parameter(engine.ones(3))
    opt = getattr(optim, name)([p])
    assert list(opt.state_dict()["param_groups"][0]) == GROUP_KEYS[name]
    p.grad = engine.ones(3)
    opt.step()
    st = opt.state[p]
    for key in SCALAR_STATE.get(name, ["step"]):
        assert st[key].dim() == 0 and st[key].dtype is engine.float32, key
    assert st["step"].item() == 1.0
    assert all(v._storage.category == "optimizer" for v in st.values())



def test_scalar_state_is_float64_under_a_float64_default():
    # PyTorch's _get_scalar_dtype(): step, mu_product, eta and mu follow a float64 default dtype
    prev = engine.get_default_dtype()
    engine.set_default_dtype(engine.float64)
    try:
        for name in SCALAR_STATE:
            p = nn.Parameter(engine.ones(2))
            opt = getattr(optim, name)([p])
            p.grad = engine.ones(2)
            opt.step()
            assert [opt.state[p][k].dtype for k in SCALAR_STATE[name]] == [engine.float64] * len(SCALAR_STATE[name])
    finally:
        engine.set_default_dtype(prev)

def test_pytorch_defaults():
    p = nn.Parameter(engine.ones(1))
    g = {name: getattr(optim, name)([p]).param_groups[0] for name in GROUP_KEYS}
    assert (g["NAdam"]["lr"], g["NAdam"]["momentum_decay"], g["NAdam"]["betas"]) == (2e-3, 4e-3, (0.9, 0.999))
    assert (g["RAdam"]["lr"], g["RAdam"]["eps"], g["RAdam"]["decoupled_weight_decay"]) == (1e-3, 1e-8, False)
    assert (g["Adamax"]["lr"], g["Adadelta"]["lr"], g["Adadelta"]["rho"], g["Adadelta"]["eps"]) == (
        2e-3, 1.0, 0.9, 1e-6)
    assert (g["ASGD"]["lr"], g["ASGD"]["lambd"], g["ASGD"]["alpha"], g["ASGD"]["t0"]) == (1e-2, 1e-4, 0.75, 1e6)
    assert (g["Rprop"]["lr"], g["Rprop"]["etas"], g["Rprop"]["step_sizes"]) == (1e-2, (0.5, 1.2), (1e-6, 50))
    assert (g["Adafactor"]["lr"], g["Adafactor"]["beta2_decay"], g["Adafactor"]["eps"], g["Adafactor"]["d"]) == (
        1e-2, -0.8, (None, 1e-3), 1.0)
    lb = optim.LBFGS([p]).param_groups[0]
    assert [lb[k] for k in ("lr", "max_iter", "max_eval", "tolerance_grad", "tolerance_change", "history_size",
                            "line_search_fn")] == [1, 20, 25, 1e-7, 1e-9, 100, None]


@pytest.mark.parametrize("name", list(GROUP_KEYS))
def test_state_dict_round_trip_continues_exactly(name):
    i = FIRST[name]
    _, opt, p = _run(i, steps=2)
    q = nn.Parameter(p.detach().clone())
    opt2 = getattr(optim, name)([q], **CONFIGS[i][1])
    opt2.load_state_dict(opt.state_dict())
    assert all(v._storage.category == "optimizer" for v in opt2.state[q].values())
    assert all(opt2.state[q][key]._storage is not v._storage for key, v in opt.state[p].items())
    k = engine.tensor(K1, dtype=engine.float64)
    for prm, o in ((p, opt), (q, opt2)):
        o.zero_grad()
        LOSSES[CONFIGS[i][2]](prm, k).backward()
        o.step()
    if name in SCALAR_STATE:
        # as PyTorch's load_state_dict: every state tensor but ``step`` takes the parameter's dtype, so
        # the loaded run keeps mu_product/eta/mu in float64 where the original rounds them to float32
        assert [opt2.state[q][key].dtype for key in SCALAR_STATE[name]] == [engine.float32] + [engine.float64] * (
            len(SCALAR_STATE[name]) - 1)
        np.testing.assert_allclose(q.tolist(), p.tolist(), rtol=1e-7)
    else:
        assert q.tolist() == p.tolist()
    assert p.tolist() == EXPECTED[i][2]


# PyTorch 2.13's errors for these arguments, word for word
ERRORS = [
    ("NAdam", dict(lr=-1.0), "Invalid learning rate: -1.0"),
    ("NAdam", dict(eps=-1e-8), "Invalid epsilon value: -1e-08"),
    ("NAdam", dict(betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
    ("NAdam", dict(betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
    ("NAdam", dict(weight_decay=-0.1), "Invalid weight_decay value: -0.1"),
    ("NAdam", dict(momentum_decay=-0.004), "Invalid momentum_decay value: -0.004"),
    ("RAdam", dict(lr=-0.5), "Invalid learning rate: -0.5"), ("RAdam", dict(eps=-1), "Invalid epsilon value: -1"),
    ("RAdam", dict(betas=(0.9, 1.0)), "Invalid beta parameter at index 1: 1.0"),
    ("RAdam", dict(weight_decay=-1), "Invalid weight_decay value: -1"),
    ("Adamax", dict(lr=-1.0), "Invalid learning rate: -1.0"), ("Adamax", dict(eps=-1.0), "Invalid epsilon value: -1.0"),
    ("Adamax", dict(betas=(-0.1, 0.9)), "Invalid beta parameter at index 0: -0.1"),
    ("Adamax", dict(weight_decay=-0.5), "Invalid weight_decay value: -0.5"),
    ("Adadelta", dict(lr=-1.0), "Invalid learning rate: -1.0"), ("Adadelta", dict(rho=1.5), "Invalid rho value: 1.5"),
    ("Adadelta", dict(eps=-1e-6), "Invalid epsilon value: -1e-06"),
    ("Adadelta", dict(weight_decay=-1), "Invalid weight_decay value: -1"),
    ("ASGD", dict(lr=-0.01), "Invalid learning rate: -0.01"),
    ("ASGD", dict(weight_decay=-0.1), "Invalid weight_decay value: -0.1"),
    ("Rprop", dict(lr=-1.0), "Invalid learning rate: -1.0"),
    ("Rprop", dict(etas=(1.5, 1.2)), "Invalid eta values: 1.5, 1.2"),
    ("Rprop", dict(etas=(0.5, 0.9)), "Invalid eta values: 0.5, 0.9"),
    ("Adafactor", dict(lr=-1.0), "Learning rate should be >= 0 but is: -1.0"),
    ("Adafactor", dict(beta2_decay=0.5), "beta2_decay should be <= 0 but is: 0.5"),
    ("Adafactor", dict(eps=(-1.0, 1e-3)), "epsilon1 should be >= 0 but is: -1.0"),
    ("Adafactor", dict(eps=(None, -1e-3)), "epsilon2 should be >= 0 but is: -0.001"),
    ("Adafactor", dict(d=0.5), "Clipping threshold d should be >= 1 but is: 0.5"),
    ("Adafactor", dict(weight_decay=-0.1), "weight_decay should be >= 0 but is: -0.1"),
    ("LBFGS", dict(lr=-1.0), "Invalid learning rate: -1.0"),
]


@pytest.mark.parametrize("name, kw, msg", ERRORS, ids=[f"{n}-{kw}" for n, kw, _ in ERRORS])
def test_argument_errors_in_pytorchs_words(name, kw, msg):
    with pytest.raises(ValueError) as info:
        getattr(optim, name)([nn.Parameter(engine.ones(2))], **kw)
    assert str(info.value) == msg


def test_tensor_lr():
    p = nn.Parameter(engine.ones(2))
    with pytest.raises(ValueError, match="^Tensor lr must be 1-element$"):
        optim.NAdam([p], lr=engine.tensor([0.1, 0.2]))
    # a one-element tensor lr is read at each step: the same values as its float
    i = FIRST["RAdam"]
    traj, _, _ = _run(i, lr=engine.tensor(0.1, dtype=engine.float64))
    np.testing.assert_allclose(traj, EXPECTED[i], rtol=1e-13, atol=0)


# ---- flags (NOTE [ Optimizer flags glassgrad accepts ]) ------------------------------------------
DEVICES = "['cuda', 'xpu', 'hpu', 'privateuseone', 'xla']"
CAPTURABLE_MSG = {  # PyTorch 2.13's AssertionError on CPU parameters
    "NAdam": f"If capturable=True, params, mu_products and state_steps must be on supported devices: {DEVICES}.",
    "RAdam": f"If capturable=True, params and state_steps must be on supported devices: {DEVICES}.",
    "Adamax": f"If capturable=True, params and state_steps must be on supported devices: {DEVICES}.",
    "Adadelta": "If capturable=True, params and state_steps must be on supported devices: "
                "['cuda', 'xpu', 'hpu', 'privateuseone'].",
    "ASGD": f"If capturable=True, params, mus, etas, and state_steps must be on supported devices: {DEVICES}.",
    "Rprop": f"If capturable=True, params and state_steps must be on supported devices: {DEVICES}.",
}


@pytest.mark.parametrize("name", list(CAPTURABLE_MSG))
def test_capturable_and_differentiable_raise_as_pytorch_on_cpu(name):
    p = nn.Parameter(engine.ones(3))
    p.grad = engine.ones(3)
    opt = getattr(optim, name)([p], capturable=True)
    with pytest.raises(AssertionError) as info:
        opt.step()
    assert str(info.value) == CAPTURABLE_MSG[name] and p.tolist() == [1.0, 1.0, 1.0]
    opt = getattr(optim, name)([p], differentiable=True)
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad is being used in an in-place "
                                           "operation.$"):
        opt.step()
    assert p.tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("name", list(CAPTURABLE_MSG))
def test_foreach_changes_nothing(name):
    i = FIRST[name]
    traj, _, _ = _run(i, foreach=True)
    np.testing.assert_allclose(traj, EXPECTED[i], rtol=1e-13, atol=0)


def test_adafactor_takes_no_capturable():
    with pytest.raises(TypeError):
        optim.Adafactor([nn.Parameter(engine.ones(2))], capturable=True)


# ---- memory and events -----------------------------------------------------------------------
# optimizer bytes for nn.Linear(10, 5) (float32: 200 + 20 bytes of parameters) after one step
STATE_BYTES = {
    "NAdam": 2 * 220 + 2 * (4 + 4),        # exp_avg, exp_avg_sq; step, mu_product per parameter
    "RAdam": 2 * 220 + 2 * 4, "Adamax": 2 * 220 + 2 * 4, "Adadelta": 2 * 220 + 2 * 4,
    "ASGD": 220 + 2 * (4 + 4 + 4),         # ax; step, eta, mu
    "Rprop": 2 * 220 + 2 * 4,              # prev, step_size
    "Adafactor": (5 + 10) * 4 + 5 * 4 + 2 * 4,   # row_var (5, 1) + col_var (1, 10); variance (5,); steps
}


def _optimizer_bytes():
    return memory.memory_stats().get("allocated_bytes.optimizer.current", 0)


@pytest.mark.parametrize("name", list(STATE_BYTES))
def test_state_bytes_in_optimizer_category_and_freed(name):
    lin = nn.Linear(10, 5)
    lin(engine.ones(2, 10)).sum().backward()
    before = _optimizer_bytes()
    opt = getattr(optim, name)(lin.parameters())
    opt.step()
    assert _optimizer_bytes() - before == STATE_BYTES[name]
    if name == "Adafactor":
        w = opt.state[lin.weight]
        assert list(w) == ["step", "row_var", "col_var"]
        assert (tuple(w["row_var"].shape), tuple(w["col_var"].shape)) == ((5, 1), (1, 10))
        assert list(opt.state[lin.bias]) == ["step", "variance"]
        del w
    del opt
    assert _optimizer_bytes() == before


def test_step_events_phase_and_versions():
    lin = nn.Linear(3, 2)
    opt = optim.NAdam(lin.parameters())
    lin(engine.ones(1, 3)).sum().backward()
    with engine.record() as tr:
        opt.step()
        opt.step()
    steps = [(e["optimizer"], e["params"], e["step"]) for e in tr.events if e["kind"] == "optimizer_step"]
    assert steps == [("NAdam", 2, 1), ("NAdam", 2, 2)]
    assert {e["phase"] for e in tr.events} == {"optimizer"}
    # per parameter: step, mu_product, exp_avg, exp_avg_sq (weight 24 bytes, bias 8), all optimizer state
    assert [a["bytes"] for a in tr.events if a["kind"] == "alloc"] == [4, 4, 24, 24, 4, 4, 8, 8]
    category = {}
    for e in tr.events:
        if e["kind"] in ("alloc", "category"):
            category[e["storage"]] = e["new"] if e["kind"] == "category" else e["category"]
    assert set(category.values()) == {"optimizer"}
    versions = [e["tensor"] for e in tr.events if e["kind"] == "version"]
    assert versions == [lin.weight._id, lin.bias._id] * 2


# ---- other backends --------------------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_updates_run_on_other_backends(backend):
    rtol = 1e-13 if backend == "array_api_strict" else 1e-11
    for i, (name, kw, *_) in enumerate(CONFIGS):
        with on_backend(backend):
            traj, opt, p = _run(i)
        assert_ran_on(backend, p, *[v for v in opt.state[p].values() if isinstance(v, engine.Tensor) and v.dim()])
        np.testing.assert_allclose(traj, EXPECTED[i], rtol=rtol, atol=0, err_msg=f"{name} {kw}")


@pytest.mark.skipif(not engine.cuda.is_available(), reason="no CUDA GPU visible to CuPy")
@pytest.mark.parametrize("name", list(CAPTURABLE_MSG))
def test_capturable_runs_on_cuda(name):
    i = FIRST[name]
    with on_backend("cuda"):
        traj, _, _ = _run(i, capturable=True)
    np.testing.assert_allclose(traj, EXPECTED[i], rtol=1e-11, atol=0)


# ---- LBFGS (NOTE [ L-BFGS in glassgrad ]) ---------------------------------------------------------
# PyTorch 2.13, float64: after each opt.step(closure), (returned loss, parameters, state["func_evals"],
# state["n_iter"], closure calls so far, len(state["old_dirs"])), from the same problems and settings.
A = [[3.0, 0.5, 0.2], [0.5, 2.0, -0.3], [0.2, -0.3, 1.0]]
B = [1.0, -2.0, 0.5]


def _rosenbrock(ps):
    (p,) = ps
    return (1 - p[0]) ** 2 + 100 * (p[1] - p[0] ** 2) ** 2


def _quartic_bowl(ps):
    (p,) = ps
    a, b = engine.tensor(A, dtype=engine.float64), engine.tensor(B, dtype=engine.float64)
    return 0.5 * (p @ (a @ p)) - (b * p).sum() + 0.1 * (p ** 4).sum()


def _two_params(ps):
    u, w = ps
    return ((w @ u - engine.tensor([1.0, 2.0], dtype=engine.float64)) ** 2).sum() + 0.5 * (u * u).sum() + 0.1 * (
        w * w).sum()


LBFGS_PROBLEMS = {"rosen": ([[-1.5, 2.0]], _rosenbrock), "quad": ([[0.5, -1.5, 2.0]], _quartic_bowl),
                  "two": ([[0.3, -0.2], [[1.0, 0.5], [-0.5, 2.0]]], _two_params)}
LBFGS_CONFIGS = [("rosen", dict(max_iter=12), 1),
                 ("rosen", dict(line_search_fn="strong_wolfe", history_size=3, max_iter=10), 1),
                 ("quad", dict(lr=0.5, history_size=2, max_iter=6, tolerance_grad=1e-5), 3),
                 ("quad", dict(line_search_fn="strong_wolfe"), 2),
                 ("two", dict(max_iter=4, history_size=3), 3),
                 ("two", dict(line_search_fn="strong_wolfe", max_iter=5, max_eval=9), 3)]
LBFGS_EXPECTED = [
    [(12.5, [[-1.21824483709206, 1.4273533706140442]], 12, 12, 12, 11)],
    [(12.5, [[-1.0217822711307085, 1.0702366405477743]], 12, 10, 12, 3)],
    [(2.9625, [[0.44727099614774696, -0.9316338500236778, 0.4168466754512876]], 6, 6, 6, 2),
     (-1.236262369408779, [[0.4667234561083323, -0.9349716679397583, 0.1291901764322421]], 12, 12, 12, 2),
     (-1.2806987203050475, [[0.4671568709973215, -0.9346792696565992, 0.12541660740756203]], 18, 18, 18, 2)],
    [(2.9625, [[0.46715963773571195, -0.934673992768749, 0.1253792999373192]], 10, 9, 10, 8),
     (-1.2807066471824085, [[0.46715963773571195, -0.934673992768749, 0.1253792999373192]], 11, 10, 11, 9)],
    [(7.7575,
      [[0.2630338099274474, 0.9337101565301601],
       [[0.9932986924868649, 0.6230912311211917], [-0.3009797365059282, 1.997415282070648]]],
      4, 4, 4, 3),
     (1.0865106449060717,
      [[0.12575936398481022, 0.9275385680852151],
       [[0.6329282325053744, 0.9769920570999591], [0.10746572243746771, 1.8853934363144011]]],
      8, 8, 8, 3),
     (0.9869163637964362,
      [[0.13635647304995713, 0.9101657800289694],
       [[0.18634169103502105, 0.9213330778088703], [0.31685834363197346, 1.8663470236238056]]],
      12, 12, 12, 3)],
    [(7.7575,
      [[0.24763057409523853, 0.9223282738397377],
       [[0.9192536423188357, 0.7561457459411586], [-0.19870344603430923, 1.9533468330786594]]],
      6, 5, 6, 4),
     (1.0501006288105756,
      [[0.1825552167171282, 0.9153347050393441],
       [[0.19073587220164137, 0.9437151335491126], [0.3735040920204981, 1.8979825504806425]]],
      12, 10, 12, 9),
     (0.950579220790478,
      [[0.184548431881278, 0.9305198828761432],
       [[0.1830792489592892, 0.9312915861263075], [0.367348122730642, 1.861432087772576]]],
      18, 15, 18, 14)],
]


def _lbfgs(problem, kw, steps):
    init, fn = LBFGS_PROBLEMS[problem]
    ps = [nn.Parameter(engine.tensor(v, dtype=engine.float64)) for v in init]
    opt = optim.LBFGS(ps, **kw)
    calls = [0]

    def closure():
        calls[0] += 1
        opt.zero_grad()
        loss = fn(ps)
        loss.backward()
        return loss

    rows = []
    for _ in range(steps):
        loss = opt.step(closure)
        st = opt.state[ps[0]]
        rows.append((loss.item(), [p.detach().tolist() for p in ps], st["func_evals"], st["n_iter"], calls[0],
                     len(st["old_dirs"])))
    return rows, opt, ps, closure


def _check_lbfgs_rows(rows, want, rtol):
    for got, exp in zip(rows, want, strict=True):
        assert got[2:] == exp[2:]                       # evaluations, iterations, closure calls, history
        assert got[0] == pytest.approx(exp[0], rel=rtol, abs=0)
        for g, e in zip(got[1], exp[1]):
            np.testing.assert_allclose(g, e, rtol=rtol, atol=0)


@pytest.mark.parametrize("i", range(len(LBFGS_CONFIGS)), ids=[f"{c[0]}-{c[1]}" for c in LBFGS_CONFIGS])
def test_lbfgs_matches_pytorch(i):
    rows, _, _, _ = _lbfgs(*LBFGS_CONFIGS[i])
    _check_lbfgs_rows(rows, LBFGS_EXPECTED[i], rtol=1e-13)


@pytest.mark.parametrize("backend", BACKENDS)
def test_lbfgs_runs_on_other_backends(backend):
    for i, config in enumerate(LBFGS_CONFIGS):
        with on_backend(backend):
            rows, opt, ps, _ = _lbfgs(*config)
        st = opt.state[ps[0]]
        assert_ran_on(backend, *ps, st["d"], st["prev_flat_grad"], *st["old_dirs"])
        _check_lbfgs_rows(rows, LBFGS_EXPECTED[i], rtol=1e-13 if backend == "array_api_strict" else 1e-9)


def test_lbfgs_strong_wolfe_solves_rosenbrock_as_pytorch():
    # PyTorch 2.13: one step with max_iter=100 ends at these values after 51 evaluations, 41 iterations
    rows, _, _, _ = _lbfgs("rosen", dict(line_search_fn="strong_wolfe", max_iter=100), 1)
    (_, [p], evals, iters, calls, _), = rows
    assert (evals, iters, calls) == (51, 41, 51)
    np.testing.assert_allclose(p, [0.9999979943196398, 0.9999973438921637], rtol=1e-9)


def test_lbfgs_state_keys_types_and_memory():
    before = _optimizer_bytes()
    _, opt, (p,), closure = _lbfgs("quad", dict(lr=0.5, history_size=2, max_iter=6, tolerance_grad=1e-5), 2)
    st = opt.state_dict()["state"][0]
    # PyTorch 2.13's keys, in its order; t stays the float lr after the first iteration
    assert list(st) == ["func_evals", "n_iter", "al", "d", "t", "old_dirs", "old_stps", "ro", "H_diag",
                        "prev_flat_grad", "prev_loss"]
    assert (st["func_evals"], st["n_iter"], st["t"]) == (12, 12, 0.5)
    assert isinstance(st["prev_loss"], float)
    assert [len(st[k]) for k in ("al", "old_dirs", "old_stps", "ro")] == [2, 2, 2, 2]
    assert all(t.dim() == 0 for t in st["ro"] + st["al"] + [st["H_diag"]])
    tensors = [st["d"], st["H_diag"], st["prev_flat_grad"], *st["al"], *st["old_dirs"], *st["old_stps"], *st["ro"]]
    assert all(t._storage.category == "optimizer" and t.dtype is engine.float64 for t in tensors)
    # d, prev_flat_grad and two (y, s) pairs of 3 floats; H_diag, two ro and two al scalars
    assert _optimizer_bytes() - before == 6 * 24 + 5 * 8
    del st, tensors, opt, closure      # the closure holds the optimizer too
    assert _optimizer_bytes() == before


def test_lbfgs_state_dict_round_trip_continues_exactly():
    kw = dict(lr=0.5, history_size=2, max_iter=6, tolerance_grad=1e-5)
    _, opt, (p,), closure = _lbfgs("quad", kw, 1)
    q = nn.Parameter(p.detach().clone())
    opt2 = optim.LBFGS([q], **kw)
    opt2.load_state_dict(opt.state_dict())
    loaded = opt2.state[q]
    assert loaded["old_dirs"] is not opt.state[p]["old_dirs"]
    assert all(a._storage is not b._storage for a, b in zip(loaded["old_dirs"], opt.state[p]["old_dirs"]))

    def closure2():
        opt2.zero_grad()
        loss = _quartic_bowl([q])
        loss.backward()
        return loss

    opt.step(closure)
    opt2.step(closure2)
    assert q.tolist() == p.tolist()
    np.testing.assert_allclose(p.tolist(), LBFGS_EXPECTED[2][1][1][0], rtol=1e-13)


def test_lbfgs_errors_in_pytorchs_words():
    p = nn.Parameter(engine.ones(2))
    opt = optim.LBFGS([p])
    with pytest.raises(TypeError, match=r"^LBFGS.step\(\) missing 1 required positional argument: 'closure'$"):
        opt.step()
    with pytest.raises(ValueError, match=r"^LBFGS doesn't support per-parameter options \(parameter groups\)$"):
        optim.LBFGS([{"params": [p]}, {"params": [nn.Parameter(engine.ones(1))]}])
    opt = optim.LBFGS([p], line_search_fn="armijo")

    def closure():
        opt.zero_grad()
        loss = ((p - 3) ** 2).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="^only 'strong_wolfe' is supported$"):
        opt.step(closure)


def test_lbfgs_stops_at_once_when_the_gradient_is_tiny():
    p = nn.Parameter(engine.tensor([3.0], dtype=engine.float64))
    opt = optim.LBFGS([p])

    def closure():
        opt.zero_grad()
        loss = ((p - 3) ** 2).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == 0.0
    assert p.tolist() == [3.0] and dict(opt.state[p]) == {"func_evals": 1, "n_iter": 0}


def test_lbfgs_closure_runs_in_the_callers_phases():
    lin = nn.Linear(3, 1)
    x = engine.ones(4, 3)
    opt = optim.LBFGS(lin.parameters(), max_iter=2)

    def closure():
        opt.zero_grad()
        loss = lin(x).square().mean()
        loss.backward()
        return loss

    with engine.record() as tr:
        opt.step(closure)
    ops = [e for e in tr.events if e["kind"] == "op"]
    assert ops and {e["phase"] for e in ops} == {"forward"}
    assert {e["phase"] for e in tr.events if e["kind"] == "execute"} == {"backward"}
    assert {e["phase"] for e in tr.events if e["kind"] == "version"} == {"optimizer"}
    steps = [e for e in tr.events if e["kind"] == "optimizer_step"]
    assert [(e["optimizer"], e["params"], e["step"], e["phase"]) for e in steps] == [("LBFGS", 2, 1, "optimizer")]
