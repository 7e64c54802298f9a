"""The ops added for what learners reach for: prod, einsum, binary cross-entropy (with and
without logits), and class weights, label smoothing and probability targets in cross_entropy
and nll_loss.

Forward values and gradients are compared with numbers a real PyTorch 2.13 printed (EXPECTED,
GRAPHS and ERRORS below, made by the script in the comment next to them from the case tables
VALUE_CASES, GRAPH_CASES and ERROR_CASES); gradients are also checked against finite
differences in float64, and the ops run on array_api_strict as the op suite does.
"""
from __future__ import annotations

import numpy as np
import pytest

import engine
import engine.nn as nn
import engine.nn.functional as F
from engine._device import cpu_namespace
from tests.engine.conftest import f64, gradcheck, gradgradcheck

D = engine.float64

X = [[1.5, -2.0, 0.5], [0.25, 3.0, -1.0]]
XZ1 = [[1.5, 0.0, 0.5], [0.25, 3.0, -1.0]]      # one zero
XZ2 = [[0.0, 2.0, 0.0], [0.25, 0.0, -1.0]]      # a row with two zeros, a row with one
P = [[0.2, 0.7, 0.5], [0.9, 0.1, 0.35]]         # probabilities
T = [[0.0, 1.0, 0.3], [1.0, 0.0, 0.8]]          # binary targets (soft ones too)

# ---- case tables (each runs the same code in PyTorch and in glassgrad) ------------------------
# An input spec is a nested list (a float64 leaf that requires grad; float32 in GRAPH_CASES and
# ERROR_CASES), ("const", values) for one that does not, or ("long", values) for int64.
VALUE_CASES = {
    "prod_all": ({"x": X}, "x.prod()"),
    "prod_all_one_zero": ({"x": XZ1}, "x.prod()"),
    "prod_all_two_zeros": ({"x": XZ2}, "torch.prod(x)"),
    "prod_dim": ({"x": X}, "x.prod(1)"),
    "prod_dim_zeros": ({"x": XZ2}, "x.prod(1)"),
    "prod_dim0_keepdim_zeros": ({"x": XZ2}, "x.prod(0, keepdim=True)"),
    "prod_dim_negative_one_zero": ({"x": XZ1}, "torch.prod(x, -1, True)"),
    "prod_dtype": ({"x": XZ1}, "torch.prod(x, 0, dtype=torch.float32)"),
    "prod_0d": ({"x": 2.5}, "x.prod() * x.prod(0)"),
    "prod_long": ({"i": ("long", [[1, 2, 3], [4, 5, 6]])}, "i.prod(1)"),
    "prod_long_to_float": ({"i": ("long", [[1, 2, 3], [4, 5, 6]])}, "i.prod(dtype=torch.float64)"),
    "bce_mean": ({"p": P, "t": T}, "F.binary_cross_entropy(p, t)"),
    "bce_sum": ({"p": P, "t": T}, "F.binary_cross_entropy(p, t, reduction='sum')"),
    "bce_none_weight": ({"p": P, "t": T, "w": ("const", [0.5, 1.0, 2.0])},
                        "F.binary_cross_entropy(p, t, weight=w, reduction='none')"),
    "bce_weight_mean": ({"p": P, "t": T, "w": ("const", [[0.5], [2.0]])}, "F.binary_cross_entropy(p, t, w)"),
    "bce_at_0_and_1": ({"p": [0.0, 1.0, 1.0, 0.0], "t": ("const", [0.0, 1.0, 0.0, 0.25])},
                       "F.binary_cross_entropy(p, t, reduction='none')"),
    "bce_module": ({"p": P, "t": T}, "nn.BCELoss(weight=torch.tensor([1.0, 0.5, 2.0], dtype=torch.float64), "
                                     "reduction='sum')(p, t)"),
    "bcel_mean": ({"x": X, "t": T}, "F.binary_cross_entropy_with_logits(x, t)"),
    "bcel_none_weight": ({"x": X, "t": T, "w": ("const", [0.5, 1.0, 2.0])},
                         "F.binary_cross_entropy_with_logits(x, t, weight=w, reduction='none')"),
    "bcel_pos_weight": ({"x": X, "t": T, "pw": ("const", [1.0, 3.0, 0.5])},
                        "F.binary_cross_entropy_with_logits(x, t, pos_weight=pw)"),
    "bcel_both_sum": ({"x": X, "t": T, "w": ("const", [[2.0], [0.5]]), "pw": ("const", [1.0, 3.0, 0.5])},
                      "F.binary_cross_entropy_with_logits(x, t, w, reduction='sum', pos_weight=pw)"),
    "bcel_extreme_logits": ({"x": [-100.0, -30.0, 0.0, 30.0, 100.0], "t": ("const", [1.0, 0.0, 1.0, 0.0, 1.0]),
                             "pw": ("const", [2.0])},
                            "F.binary_cross_entropy_with_logits(x, t, reduction='none', pos_weight=pw)"),
    "bcel_module": ({"x": X, "t": T}, "nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0, 1.0, 0.5], "
                                      "dtype=torch.float64))(x, t)"),
}

GRAPH_CASES = {
    "prod_all": ({"x": X}, "x.prod()"),
    "prod_dim": ({"x": X}, "x.prod(1)"),
    "prod_dim_keepdim_dtype": ({"x": X}, "torch.prod(x, 0, True, dtype=torch.float64)"),
    "prod_of_intermediate": ({"x": X}, "(x * 2).prod(1)"),
    "bce": ({"p": P, "t": T}, "F.binary_cross_entropy(p, t)"),
    "bce_weight": ({"p": P, "t": ("const", T), "w": ("const", [0.5, 1.0, 2.0])},
                   "F.binary_cross_entropy(p, t, weight=w)"),
    "bcel": ({"x": X, "t": T}, "F.binary_cross_entropy_with_logits(x, t)"),
    "bcel_weight_pos_weight": ({"x": X, "t": ("const", T), "w": ("const", [0.5, 1.0, 2.0]),
                                "pw": ("const", [1.0, 3.0, 0.5])},
                               "F.binary_cross_entropy_with_logits(x, t, w, pos_weight=pw, reduction='sum')"),
}

ERROR_CASES = {
    "prod_tuple_dim": ({"x": X}, "x.prod((0, 1))"),
    "prod_dim_out_of_range": ({"x": X}, "x.prod(2)"),
    "prod_grad_to_long": ({"x": X}, "x.prod(1, dtype=torch.long)"),
    "bce_target_shape": ({"p": P, "t": T}, "F.binary_cross_entropy(p, t[0])"),
    "bce_input_range": ({"p": P, "t": T}, "F.binary_cross_entropy(p * 2, t)"),
    "bce_target_range": ({"p": P, "t": ("const", T)}, "F.binary_cross_entropy(p, t - 1)"),
    "bce_target_dtype": ({"p": P, "t": ("long", [[0, 1, 0], [1, 0, 1]])}, "F.binary_cross_entropy(p, t)"),
    "bce_target_double": ({"p": P, "t": ("const", T)}, "F.binary_cross_entropy(p, t.double())"),
    "bce_weight_shape": ({"p": P, "t": T, "w": ("const", [1.0, 2.0])}, "F.binary_cross_entropy(p, t, w)"),
    "bce_weight_requires_grad": ({"p": P, "t": T, "w": [1.0, 2.0, 3.0]}, "F.binary_cross_entropy(p, t, w)"),
    "bce_reduction": ({"p": P, "t": T}, "F.binary_cross_entropy(p, t, reduction='avg')"),
    "bce_long_input": ({"i": ("long", [[0, 1, 0], [1, 0, 1]])}, "F.binary_cross_entropy(i, i)"),
    "bcel_target_shape": ({"x": X, "t": T}, "F.binary_cross_entropy_with_logits(x, t[:, 0])"),
    "bcel_target_long": ({"x": X, "t": ("long", [[0, 1, 0], [1, 0, 1]])}, "F.binary_cross_entropy_with_logits(x, t)"),
    "bcel_pos_weight_shape": ({"x": X, "t": T, "pw": ("const", [1.0, 2.0])},
                              "F.binary_cross_entropy_with_logits(x, t, pos_weight=pw)"),
    "bcel_weight_shape": ({"x": X, "t": T, "w": ("const", [1.0, 2.0])},
                          "F.binary_cross_entropy_with_logits(x, t, weight=w)"),
    "bcel_weight_more_dims": ({"x": X, "t": T, "w": ("const", [[[1.0]], [[2.0]]])},
                              "F.binary_cross_entropy_with_logits(x, t, weight=w)"),
    "bcel_pos_weight_requires_grad": ({"x": X, "t": T, "pw": [1.0, 2.0, 3.0]},
                                      "F.binary_cross_entropy_with_logits(x, t, pos_weight=pw)"),
}


# ---- what PyTorch 2.13 printed for the tables above, by this script (saved as gen.py):
#   /path/to/torch/python gen.py tests/engine/test_ops_more.py
#   import ast, sys, torch, torch.nn.functional as F
#   src = open(sys.argv[1]).read()
#   consts, tables = {}, {}
#   for node in ast.parse(src).body:       # the module's literal constants, then the case tables over them
#       if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
#           name = node.targets[0].id
#           if name in ("VALUE_CASES", "GRAPH_CASES", "ERROR_CASES"):
#               tables[name] = eval(compile(ast.Expression(node.value), "cases", "eval"), {"__builtins__": {}}, consts)
#           else:
#               try:
#                   consts[name] = ast.literal_eval(node.value)
#               except ValueError:
#                   pass
#
#   def make(spec, dt):
#       ns = {"torch": torch, "F": F, "nn": torch.nn}
#       for k, v in spec.items():
#           kind, vals = v if isinstance(v, tuple) else ("grad", v)
#           ns[k] = (torch.tensor(vals) if kind == "long" else
#                    torch.tensor(vals, dtype=dt, requires_grad=(kind == "grad")))
#       return ns
#
#   def rnd(x):
#       return [rnd(v) for v in x] if isinstance(x, list) else round(x, 12)
#
#   expected = {}
#   for name, (spec, code) in tables["VALUE_CASES"].items():
#       ns = make(spec, torch.float64)
#       out = eval(code, ns)
#       w = torch.linspace(0.5, 1.5, out.numel(), dtype=torch.float64).reshape(out.shape)
#       grads = {}
#       if out.requires_grad:
#           leaves = [k for k, v in spec.items() if not isinstance(v, tuple)]
#           gs = torch.autograd.grad((out * w).sum(), [ns[k] for k in leaves], allow_unused=True)
#           grads = {k: rnd(g.tolist()) for k, g in zip(leaves, gs) if g is not None}
#       expected[name] = {"out": rnd(out.tolist()), "grads": grads}
#
#   def bfs(root):
#       nodes, seen, q = [], set(), [root]
#       while q:
#           n = q.pop(0)
#           if n is None or id(n) in seen:
#               continue
#           seen.add(id(n)); nodes.append(n); q.extend(f for f, _ in n.next_functions)
#       return nodes
#
#   graphs = {}
#   for name, (spec, code) in tables["GRAPH_CASES"].items():
#       ns = make(spec, torch.float32)
#       out = eval(code, ns)
#       named = {k: v for k, v in ns.items() if isinstance(v, torch.Tensor)}
#       named["out"] = out
#       desc = []
#       for n in bfs(out.grad_fn):
#           if n.name().endswith("AccumulateGrad"):
#               continue
#           saved = {}
#           for a in sorted(dir(n)):
#               if a.startswith("_saved_") and not a.endswith("_sym_sizes"):
#                   v = getattr(n, a)
#                   if isinstance(v, torch.Tensor):
#                       st = v.untyped_storage()
#                       saved[a] = [list(v.shape), str(v.dtype)[6:], st.nbytes(),
#                                   sorted(k for k, t in named.items() if t.untyped_storage().data_ptr() == st.data_ptr())]
#                   elif v is None:
#                       saved[a] = None
#           desc.append([n.name(), saved, [f.name().replace("torch::autograd::", "") if f else None
#                                           for f, _ in n.next_functions]])
#       graphs[name] = desc
#
#   errors = {}
#   for name, (spec, code) in tables["ERROR_CASES"].items():
#       ns = make(spec, torch.float32)
#       try:
#           eval(code, ns)
#           errors[name] = None
#       except Exception as e:
#           errors[name] = [type(e).__name__, str(e)]
#
#   import pprint
#   for title, d in (("EXPECTED", expected), ("GRAPHS", graphs), ("ERRORS", errors)):
#       print(f"{title} = " + pprint.pformat(d, width=116, compact=True))
# fmt: off
EXPECTED = {'bce_at_0_and_1': {'grads': {'p': [0.0, 0.0, 1166666671328.4368, -375000001498.426]},
                    'out': [0.0, -0.0, 100.0, 25.0]},
 'bce_mean': {'grads': {'p': [[0.104166666667, -0.119047619048, 0.066666666667],
                              [-0.092592592593, 0.092592592593, -0.164835164835]],
                        't': [[0.115524530093, -0.070608155032, -0.0],
                              [-0.183102048111, 0.183102048111, 0.051586600701]]},
              'out': 0.401616831658},
 'bce_module': {'grads': {'p': [[0.625, -0.357142857143, 0.8], [-0.555555555556, 0.277777777778, -1.978021978022]],
                          't': [[0.69314718056, -0.211824465097, -0.0],
                                [-1.098612288668, 0.549306144334, 0.619039208406]]},
                'out': 3.797844723525},
 'bce_none_weight': {'grads': {'p': [[0.3125, -1.0, 1.44], [-0.611111111111, 1.444444444444, -5.934065934066]],
                               't': [[0.34657359028, -0.593108502271, -0.0],
                                     [-1.208473517535, 2.856391950537, 1.857117625219]]},
                     'out': [[0.111571775657, 0.356674943939, 1.38629436112],
                             [0.052680257829, 0.105360515658, 1.852028565635]]},
 'bce_sum': {'grads': {'p': [[0.625, -0.714285714286, 0.4], [-0.555555555556, 0.555555555556, -0.989010989011]],
                       't': [[0.69314718056, -0.423648930194, -0.0],
                             [-1.098612288668, 1.098612288668, 0.309519604203]]},
             'out': 2.409700989946},
 'bce_weight_mean': {'grads': {'p': [[0.052083333333, -0.059523809524, 0.033333333333],
                                     [-0.185185185185, 0.185185185185, -0.32967032967]],
                               't': [[0.057762265047, -0.035304077516, -0.0],
                                     [-0.366204096223, 0.366204096223, 0.103173201401]]},
                     'out': 0.484992244362},
 'bcel_both_sum': {'grads': {'t': [[-1.5, 6.253856022086, -0.73703849209],
                                   [-0.0625, -0.725706324213, 0.08584228906]],
                             'x': [[0.817574476194, -2.642391233934, 0.379090431522],
                                   [-0.109455874779, 0.238143531706, -0.059658786795]]},
                   'out': 19.776567387311},
 'bcel_extreme_logits': {'grads': {'x': [-1.0, 0.0, -1.0, 1.25, 0.0]},
                         'out': [200.0, 0.0, 1.38629436112, 30.0, 0.0]},
 'bcel_mean': {'grads': {'t': [[-0.125, 0.166666666667, -0.041666666667], [-0.020833333333, -0.25, 0.083333333333]],
                         'x': [[0.068131206349, -0.073399756498, 0.026871610933],
                               [-0.036485291593, 0.079381177235, -0.044254881553]]},
               'out': 1.565034455363},
 'bcel_module': {'grads': {'t': [[-0.108215560168, 0.166666666667, -0.061419874341],
                                 [0.027161618323, -0.25, 0.028614096353]],
                           'x': [[0.068131206349, -0.073399756498, 0.031590869293],
                                 [-0.072970583186, 0.079381177235, -0.019886262265]]},
                 'out': 1.561621654904},
 'bcel_none_weight': {'grads': {'t': [[-0.375, 1.4, -0.9], [-0.1375, -3.9, 3.0]],
                                'x': [[0.204393619048, -0.616557954585, 0.580426796163],
                                      [-0.240802924513, 1.238346364869, -1.59317573589]]},
                      'out': [[0.850706638991, 2.126928011043, 1.64815396836],
                              [0.287969709939, 3.048587351574, 2.226523375036]]},
 'bcel_pos_weight': {'grads': {'t': [[-0.125, 0.521154668507, -0.061419874341],
                                     [-0.020833333333, -0.241902108071, 0.028614096353]],
                               'x': [[0.068131206349, -0.220199269494, 0.031590869293],
                                     [-0.036485291593, 0.079381177235, -0.019886262265]]},
                     'out': 2.174607755271},
 'prod_0d': {'grads': {'x': 2.5}, 'out': 6.25},
 'prod_all': {'grads': {'x': [[0.375, -0.28125, 1.125], [2.25, 0.1875, -0.5625]]}, 'out': 1.125},
 'prod_all_one_zero': {'grads': {'x': [[-0.0, -0.28125, -0.0], [-0.0, -0.0, 0.0]]}, 'out': -0.0},
 'prod_all_two_zeros': {'grads': {'x': [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]}, 'out': -0.0},
 'prod_dim': {'grads': {'x': [[-0.5, 0.375, -1.5], [-4.5, -0.375, 1.125]]}, 'out': [-1.5, -0.75]},
 'prod_dim0_keepdim_zeros': {'grads': {'x': [[0.125, 0.0, -1.5], [0.0, 2.0, 0.0]]}, 'out': [[0.0, 0.0, -0.0]]},
 'prod_dim_negative_one_zero': {'grads': {'x': [[0.0, 0.375, 0.0], [-4.5, -0.375, 1.125]]},
                                'out': [[0.0], [-0.75]]},
 'prod_dim_zeros': {'grads': {'x': [[0.0, 0.0, 0.0], [-0.0, -0.375, 0.0]]}, 'out': [0.0, -0.0]},
 'prod_dtype': {'grads': {'x': [[0.125, 3.0, -1.5], [0.75, 0.0, 0.75]]}, 'out': [0.375, 0.0, -0.5]},
 'prod_long': {'grads': {}, 'out': [6, 120]},
 'prod_long_to_float': {'grads': {}, 'out': 720.0}}
GRAPHS = {'bce': [['BinaryCrossEntropyBackward0',
          {'_saved_self': [[2, 3], 'float32', 24, ['p']],
           '_saved_target': [[2, 3], 'float32', 24, ['t']],
           '_saved_weight': None},
          ['AccumulateGrad', 'AccumulateGrad']]],
 'bce_weight': [['BinaryCrossEntropyBackward0',
                 {'_saved_self': [[2, 3], 'float32', 24, ['p']],
                  '_saved_target': [[2, 3], 'float32', 24, ['t']],
                  '_saved_weight': [[2, 3], 'float32', 12, ['w']]},
                 ['AccumulateGrad', None]]],
 'bcel': [['BinaryCrossEntropyWithLogitsBackward0',
           {'_saved_pos_weight': None,
            '_saved_self': [[2, 3], 'float32', 24, ['x']],
            '_saved_target': [[2, 3], 'float32', 24, ['t']],
            '_saved_weight': None},
           ['AccumulateGrad', 'AccumulateGrad']]],
 'bcel_weight_pos_weight': [['BinaryCrossEntropyWithLogitsBackward0',
                             {'_saved_pos_weight': [[3], 'float32', 12, ['pw']],
                              '_saved_self': [[2, 3], 'float32', 24, ['x']],
                              '_saved_target': [[2, 3], 'float32', 24, ['t']],
                              '_saved_weight': [[3], 'float32', 12, ['w']]},
                             ['AccumulateGrad', None]]],
 'prod_all': [['ProdBackward0',
               {'_saved_result': [[], 'float32', 4, ['out']], '_saved_self': [[2, 3], 'float32', 24, ['x']]},
               ['AccumulateGrad']]],
 'prod_dim': [['ProdBackward1',
               {'_saved_result': [[2], 'float32', 8, ['out']], '_saved_self': [[2, 3], 'float32', 24, ['x']]},
               ['AccumulateGrad']]],
 'prod_dim_keepdim_dtype': [['ProdBackward1',
                             {'_saved_result': [[1, 3], 'float64', 24, ['out']],
                              '_saved_self': [[2, 3], 'float32', 24, ['x']]},
                             ['AccumulateGrad']]],
 'prod_of_intermediate': [['ProdBackward1',
                           {'_saved_result': [[2], 'float32', 8, ['out']],
                            '_saved_self': [[2, 3], 'float32', 24, []]},
                           ['MulBackward0']],
                          ['MulBackward0', {'_saved_other': [[], 'int64', 8, []], '_saved_self': None},
                           ['AccumulateGrad', None]]]}
ERRORS = {'bce_input_range': ['RuntimeError', 'all elements of input should be between 0 and 1'],
 'bce_long_input': ['NotImplementedError', '"binary_cross_entropy" not implemented for \'Long\''],
 'bce_reduction': ['ValueError', 'avg is not a valid value for reduction'],
 'bce_target_double': ['RuntimeError', 'Found dtype Double but expected Float'],
 'bce_target_dtype': ['RuntimeError', 'Found dtype Long but expected Float'],
 'bce_target_range': ['RuntimeError', 'all elements of target should be between 0 and 1'],
 'bce_target_shape': ['ValueError',
                      'Using a target size (torch.Size([3])) that is different to the input size (torch.Size([2, '
                      '3])) is deprecated. Please ensure they have the same size.'],
 'bce_weight_requires_grad': ['RuntimeError',
                              "The function 'binary_cross_entropy' is not differentiable with respect to argument "
                              "'weight'. This input cannot have requires_grad True."],
 'bce_weight_shape': ['RuntimeError',
                      'Attempting to broadcast a dimension of length 2 at -1! Mismatching argument at index 1 had '
                      'torch.Size([2]); but expected shape should be broadcastable to [2, 3]'],
 'bcel_pos_weight_requires_grad': ['RuntimeError',
                                   "The function 'binary_cross_entropy_with_logits' is not differentiable with "
                                   "respect to argument 'pos_weight'. This input cannot have requires_grad True."],
 'bcel_pos_weight_shape': ['RuntimeError',
                           'The size of tensor a (2) must match the size of tensor b (3) at non-singleton '
                           'dimension 1'],
 'bcel_target_long': ['RuntimeError', "result type Float can't be cast to the desired output type Long"],
 'bcel_target_shape': ['ValueError',
                       'Target size (torch.Size([2])) must be the same as input size (torch.Size([2, 3]))'],
 'bcel_weight_more_dims': ['RuntimeError', "output with shape [2, 3] doesn't match the broadcast shape [2, 2, 3]"],
 'bcel_weight_shape': ['RuntimeError',
                       'The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1'],
 'prod_dim_out_of_range': ['IndexError', 'Dimension out of range (expected to be in range of [-2, 1], but got 2)'],
 'prod_grad_to_long': ['RuntimeError', 'Autograd not support dtype: Long'],
 'prod_tuple_dim': ['TypeError',
                    'prod() received an invalid combination of arguments - got (tuple), but expected one of:\n'
                    ' * (*, torch.dtype dtype = None)\n'
                    ' * (int dim, bool keepdim = False, *, torch.dtype dtype = None)\n']}
# fmt: on


# ---- running a case -------------------------------------------------------------------------
def make(spec, dt):
    ns = {"torch": engine, "F": F, "nn": nn}
    for k, v in spec.items():
        kind, vals = v if isinstance(v, tuple) else ("grad", v)
        ns[k] = (engine.tensor(vals) if kind == "long" else
                 engine.tensor(vals, dtype=dt, requires_grad=(kind == "grad")))
    return ns


def leaves(spec):
    return [k for k, v in spec.items() if not isinstance(v, tuple)]


@pytest.mark.parametrize("name", sorted(VALUE_CASES))
def test_values_and_gradients_match_pytorch(name):
    spec, code = VALUE_CASES[name]
    ns = make(spec, D)
    out = eval(code, ns)
    want = EXPECTED[name]
    np.testing.assert_allclose(np.asarray(out.tolist(), dtype=np.float64), np.asarray(want["out"]),
                               rtol=1e-10, atol=1e-12)
    if not want["grads"]:
        assert not out.requires_grad
        return
    w = engine.linspace(0.5, 1.5, out.numel(), dtype=D).reshape(tuple(out.shape))
    names = leaves(spec)
    grads = engine.autograd.grad((out * w).sum(), [ns[k] for k in names], allow_unused=True)
    got = {k: g for k, g in zip(names, grads) if g is not None}
    assert sorted(got) == sorted(want["grads"])
    for k, g in got.items():
        np.testing.assert_allclose(g.numpy(), np.asarray(want["grads"][k]), rtol=1e-10, atol=1e-9,
                                   err_msg=f"gradient of {k}")


def bfs(root):
    nodes, seen, queue = [], set(), [root]
    while queue:
        n = queue.pop(0)
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        nodes.append(n)
        queue.extend(f for f, _ in n.next_functions)
    return nodes


@pytest.mark.parametrize("name", sorted(GRAPH_CASES))
def test_graph_and_saved_tensors_match_pytorch(name):
    spec, code = GRAPH_CASES[name]
    ns = make(spec, engine.float32)
    out = eval(code, ns)
    named = {k: v for k, v in ns.items() if isinstance(v, engine.Tensor)}
    named["out"] = out
    nodes = [n for n in bfs(out.grad_fn) if n.name() != "AccumulateGrad"]
    assert [n.name() for n in nodes] == [g[0] for g in GRAPHS[name]]
    for node, (_, saved, nexts) in zip(nodes, GRAPHS[name]):
        assert [f.name() if f else None for f, _ in node.next_functions] == nexts
        for attr, want in saved.items():
            if want is not None and want[:2] == [[], "int64"] and not want[3]:
                continue   # PyTorch wraps a Python number in a tensor; glassgrad keeps the number
            got = getattr(node, attr)
            if want is None:
                assert got is None, attr
                continue
            shares = sorted(k for k, t in named.items() if t._storage is got._storage)
            assert [list(got.shape), got.dtype.name, got._storage.nbytes, shares] == want, attr


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_errors_match_pytorch(name):
    spec, code = ERROR_CASES[name]
    ns = make(spec, engine.float32)
    kind, message = ERRORS[name]
    with pytest.raises(Exception) as info:
        eval(code, ns)
    assert type(info.value).__name__ == kind
    assert str(info.value) == message


# ---- finite differences (float64), first and second order ----------------------------------
def leaf(values, requires_grad=True):
    return engine.tensor(values, dtype=D, requires_grad=requires_grad)


def probs(*shape, seed=0):
    return leaf(np.random.default_rng(seed).uniform(0.05, 0.95, shape))


FINITE_DIFFERENCES = {
    "prod_all": (lambda x: x.prod(), lambda: [leaf(X)]),
    "prod_all_one_zero": (lambda x: x.prod(), lambda: [leaf(XZ1)]),
    "prod_all_two_zeros": (lambda x: x.prod(), lambda: [leaf(XZ2)]),
    "prod_dim_zeros": (lambda x: x.prod(1), lambda: [leaf(XZ2)]),
    "prod_dim0_keepdim": (lambda x: x.prod(0, keepdim=True), lambda: [leaf(XZ1)]),
    "prod_3d": (lambda x: x.prod(1), lambda: [f64(2, 3, 2)]),
    "bce": (lambda p, t: F.binary_cross_entropy(p, t), lambda: [probs(2, 3), probs(2, 3, seed=1)]),
    "bce_weight_none": (lambda p, t: F.binary_cross_entropy(p, t, leaf([0.5, 2.0, 1.0], False), reduction="none"),
                        lambda: [probs(2, 3), probs(2, 3, seed=1)]),
    "bcel_pos_weight": (lambda x, t: F.binary_cross_entropy_with_logits(
        x, t, leaf([[1.5], [0.5]], False), pos_weight=leaf([1.0, 3.0, 0.5], False), reduction="sum"),
        lambda: [f64(2, 3), probs(2, 3, seed=1)]),
}


@pytest.mark.parametrize("name", sorted(FINITE_DIFFERENCES))
def test_gradients_match_finite_differences(name):
    fn, inputs = FINITE_DIFFERENCES[name]
    gradcheck(fn, inputs())


@pytest.mark.parametrize("name", ["prod_all", "prod_all_one_zero", "prod_all_two_zeros", "prod_dim_zeros",
                                  "bce", "bcel_pos_weight"])
def test_second_derivatives_match_finite_differences(name):
    fn, inputs = FINITE_DIFFERENCES[name]
    gradgradcheck(fn, inputs())


def test_prod_gradient_with_zeros_is_the_product_of_the_others():
    x = leaf([[2.0, 0.0, 3.0, 4.0], [0.0, 5.0, 0.0, 1.0]])
    x.prod(1).sum().backward()
    assert x.grad.tolist() == [[0.0, 24.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]
    y = leaf([2.0, 0.0, 3.0])
    y.prod().backward()
    assert y.grad.tolist() == [0.0, 6.0, 0.0]


def test_prod_is_a_method_and_keeps_integer_dtypes():
    i = engine.tensor([[1, 2], [3, 4]])
    assert i.prod().dtype is engine.int64 and i.prod().item() == 24
    assert engine.tensor([True, False]).prod().dtype is engine.int64
    assert engine.prod(i, 0).tolist() == [3, 8]


# ---- array_api_strict: the same kernels and formulas off NumPy ------------------------------
xps = pytest.importorskip("array_api_strict")

STRICT = {
    "prod_all_one_zero": lambda a, b: a[0].relu().prod() * b[0, 0],
    "prod_dim": lambda a, b: a.prod(1) * b[:, 0],
    "prod_dim_zeros": lambda a, b: a.relu().prod(0),
    "bce": lambda a, b: F.binary_cross_entropy(a.sigmoid(), b.sigmoid(), reduction="none"),
    "bce_weight": lambda a, b: F.binary_cross_entropy(a.sigmoid(), b.sigmoid().detach(), b[0].detach().abs()),
    "bcel": lambda a, b: F.binary_cross_entropy_with_logits(a, b.sigmoid()),
    "bcel_weights": lambda a, b: F.binary_cross_entropy_with_logits(
        a, b.sigmoid(), b[0].detach().abs(), pos_weight=b[1].detach().abs(), reduction="sum"),
}


def _run(fn):
    rng = np.random.default_rng(0)
    a = engine.tensor(rng.standard_normal((3, 4)), dtype=D, requires_grad=True)
    b = engine.tensor(rng.standard_normal((3, 4)), dtype=D, requires_grad=True)
    out = fn(a, b)
    out.backward(engine.ones_like(out))
    return out, [t.grad for t in (a, b)]


@pytest.mark.parametrize("name", sorted(STRICT))
def test_array_api_strict_matches_numpy(name):
    ref_out, ref_grads = _run(STRICT[name])
    with cpu_namespace(xps):
        out, grads = _run(STRICT[name])
        assert type(out._data).__module__.startswith("array_api_strict")
    np.testing.assert_allclose(out.detach().numpy(), ref_out.detach().numpy(), rtol=1e-12, atol=1e-12)
    for g, r in zip(grads, ref_grads):
        assert (g is None) == (r is None)
        if g is not None:
            assert type(g._data).__module__.startswith("array_api_strict")
            np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-12, atol=1e-12)


def exercise_new_ops():
    """One call of every op this file adds to the table (test_ops_grad checks each op is exercised)."""
    for name in FINITE_DIFFERENCES:
        fn, inputs = FINITE_DIFFERENCES[name]
        out = fn(*inputs())
        out.sum().backward()
