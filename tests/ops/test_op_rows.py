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
from hypothesis import given, settings, strategies as st

import engine
import engine.nn as nn
import engine.nn.functional as F
from tests.checks import BACKENDS, assert_matches, f64, gradcheck, gradgradcheck, on_backend

D = engine.float64

X = [[1.5, -2.0, 0.5], [0.25, 3.0, -1.0]]
XZ1 = [[1.5, 0.0, 0.5], [0.25, 3.0, -1.0]]      # one zero
XZ2 = [[0.0, 2.0, 0.0], [0.25, 0.0, -1.0]]      # a row with two zeros, a row with one
P = [[0.2, 0.7, 0.5], [0.9, 0.1, 0.35]]         # probabilities
T = [[0.0, 1.0, 0.3], [1.0, 0.0, 0.8]]          # binary targets (soft ones too)
L = [[1.0, -0.5, 2.0, 0.3], [0.2, 0.1, -1.0, 1.5], [-2.0, 0.7, 0.0, 0.4]]   # logits: 3 samples, 4 classes
TI = ("long", [2, 0, 3])                         # class indices
TI_IGN = ("long", [2, -100, 3])                  # the second one ignored
CW = ("const", [0.5, 2.0, 1.0, 3.0])             # class weights
TP = [[0.1, 0.2, 0.6, 0.1], [0.7, 0.1, 0.1, 0.1], [0.0, 0.5, 0.0, 0.5]]   # class probabilities
M = [[0.5, -1.0, 2.0, 0.25], [1.5, 0.75, -0.5, 1.0], [-2.0, 0.3, 1.2, -0.6]]   # 3 x 4
S = [[1.0, 2.0, -0.5], [0.3, -1.5, 0.8], [2.2, 0.1, 0.9]]                    # 3 x 3
R12 = [-0.55, 0.45, -0.35, 1.25, -0.15, 0.05, 0.6, -1.05, 0.35, 0.45, -0.2, 0.65]   # reshaped in the code
R18 = [0.2, -0.3, 0.9, 0.1, -0.6, 1.1, 0.4, -0.8, 0.7, 0.05, -1.2, 0.3, 0.5, -0.45, 1.4, 0.15, -0.25, 0.85]
L3 = [[[1.0, -0.5], [2.0, 0.3], [0.2, 0.1]], [[-1.0, 1.5], [-2.0, 0.7], [0.0, 0.4]]]   # (N=2, C=3, d=2)

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
    "ce_weight_mean": ({"l": L, "t": TI, "w": CW}, "F.cross_entropy(l, t, weight=w)"),
    "ce_weight_sum_ignored": ({"l": L, "t": TI_IGN, "w": CW}, "F.cross_entropy(l, t, w, reduction='sum')"),
    "ce_weight_mean_ignored": ({"l": L, "t": TI_IGN, "w": CW}, "F.cross_entropy(l, t, w)"),
    "ce_weight_none_ignored": ({"l": L, "t": TI_IGN, "w": CW}, "F.cross_entropy(l, t, w, reduction='none')"),
    "nll_weight_mean_ignore_index": ({"l": L, "t": ("long", [2, 0, 0]), "w": CW},
                                     "F.nll_loss(F.log_softmax(l, 1), t, w, ignore_index=0)"),
    "ce_smoothing_mean": ({"l": L, "t": TI}, "F.cross_entropy(l, t, label_smoothing=0.1)"),
    "ce_smoothing_sum_ignored": ({"l": L, "t": TI_IGN}, "F.cross_entropy(l, t, label_smoothing=0.3, reduction='sum')"),
    "ce_smoothing_none_ignored": ({"l": L, "t": TI_IGN},
                                  "F.cross_entropy(l, t, label_smoothing=0.2, reduction='none')"),
    "ce_smoothing_weight_mean_ignored": ({"l": L, "t": TI_IGN, "w": CW},
                                         "F.cross_entropy(l, t, w, label_smoothing=0.25)"),
    "ce_smoothing_weight_none": ({"l": L, "t": TI, "w": CW},
                                 "F.cross_entropy(l, t, w, reduction='none', label_smoothing=0.25)"),
    "ce_smoothing_one": ({"l": L, "t": TI}, "F.cross_entropy(l, t, label_smoothing=1.0)"),
    "ce_1d_weight_smoothing": ({"l": L[0], "t": ("long", 2), "w": CW},
                               "F.cross_entropy(l, t, w, label_smoothing=0.1)"),
    "ce_kdim_weight_smoothing": ({"l": L3, "t": ("long", [[0, 2], [1, 1]]), "w": ("const", [1.0, 2.0, 0.5])},
                                 "F.cross_entropy(l, t, w, label_smoothing=0.1)"),
    "ce_kdim_none": ({"l": L3, "t": ("long", [[0, 2], [1, -100]])}, "F.cross_entropy(l, t, reduction='none')"),
    "ce_kdim_weight_smoothing_none": ({"l": L3, "t": ("long", [[0, 2], [1, -100]]),
                                       "w": ("const", [1.0, 2.0, 0.5])},
                                      "F.cross_entropy(l, t, w, label_smoothing=0.3, reduction='none')"),
    "nll_kdim_weight_mean": ({"l": L3, "t": ("long", [[0, 2], [1, -100]]), "w": ("const", [1.0, 2.0, 0.5])},
                             "F.nll_loss(l, t, w)"),
    "nll_kdim_none": ({"l": L3, "t": ("long", [[0, 2], [1, 1]])}, "F.nll_loss(l, t, reduction='none')"),
    "ce_probs_mean": ({"l": L, "p": ("const", TP)}, "F.cross_entropy(l, p)"),
    "ce_probs_none": ({"l": L, "p": ("const", TP)}, "F.cross_entropy(l, p, reduction='none')"),
    "ce_probs_weight_sum": ({"l": L, "p": ("const", TP), "w": CW}, "F.cross_entropy(l, p, w, reduction='sum')"),
    "ce_probs_weight_smoothing_mean": ({"l": L, "p": ("const", TP), "w": CW},
                                       "F.cross_entropy(l, p, w, label_smoothing=0.2)"),
    "ce_probs_target_grad": ({"l": L, "p": TP}, "F.cross_entropy(l, p, label_smoothing=0.1)"),
    "ce_probs_kdim": ({"l": L3, "p": ("const", [[[0.5, 0.0], [0.25, 1.0], [0.25, 0.0]],
                                                [[0.0, 0.3], [1.0, 0.3], [0.0, 0.4]]])},
                      "F.cross_entropy(l, p, reduction='none')"),
    "einsum_mm": ({"a": X, "b": M}, "torch.einsum('ij,jk->ik', a, b)"),
    "einsum_mm_implicit": ({"a": X, "b": M}, "torch.einsum('ij,jk', a, b)"),
    "einsum_list_form": ({"a": X, "b": M}, "torch.einsum('ij,jk', [a, b])"),
    "einsum_spaces_capitals": ({"a": X, "b": M}, "torch.einsum('Ab , bc -> Ac', a, b)"),
    "einsum_transpose": ({"a": X}, "torch.einsum('ij->ji', a)"),
    "einsum_implicit_transpose": ({"a": X}, "torch.einsum('ba', a)"),
    "einsum_sum_all": ({"a": X}, "torch.einsum('ij->', a)"),
    "einsum_column_sums": ({"a": X}, "torch.einsum('ij->j', a)"),
    "einsum_trace": ({"s": S}, "torch.einsum('ii', s)"),
    "einsum_diagonal": ({"s": S}, "torch.einsum('ii->i', s)"),
    "einsum_diagonal_kept_axis": ({"r": R12}, "torch.einsum('iji->j', r.reshape(2, 3, 2))"),
    "einsum_dot": ({"s": S}, "torch.einsum('i,i->', s[0], s[1])"),
    "einsum_outer": ({"a": X, "s": S}, "torch.einsum('i,j->ij', a[0], s[1])"),
    "einsum_hadamard_sum": ({"a": X, "b": M}, "torch.einsum('ij,ij->i', a, b[:2, :3])"),
    "einsum_bmm": ({"r": R12, "q": R18}, "torch.einsum('bij,bjk->bik', r.reshape(2, 2, 3), q[:12].reshape(2, 3, 2))"),
    "einsum_batch_contracted": ({"r": R12, "q": R18},
                                "torch.einsum('bij,bjk->ik', r.reshape(2, 2, 3), q[:12].reshape(2, 3, 2))"),
    "einsum_three_operands": ({"a": X, "b": M, "s": S}, "torch.einsum('ij,jk,li->lk', a, b, s[:, :2])"),
    "einsum_ellipsis_broadcast": ({"r": R12, "q": R18},
                                  "torch.einsum('...ij,...jk->...ik', r.reshape(2, 1, 2, 3), q.reshape(3, 3, 2))"),
    "einsum_ellipsis_implicit": ({"r": R12, "q": R18}, "torch.einsum('...ij,...jk', r.reshape(2, 2, 3), q[:6].reshape(3, 2))"),
    "einsum_ellipsis_summed": ({"r": R12, "b": M}, "torch.einsum('...j,jk->k', r.reshape(2, 2, 3), b)"),
    "einsum_size_one_broadcast": ({"a": X, "b": M}, "torch.einsum('ij,jk->ik', a, b[:1])"),
    "einsum_repeated_and_contracted": ({"q": R18, "b": M}, "torch.einsum('iij,jk->ik', q.reshape(3, 3, 2), b[:2])"),
    "einsum_label_only_in_one_operand": ({"a": X, "b": M}, "torch.einsum('ij,kl->ik', a, b)"),
    "einsum_long": ({"i": ("long", [[1, 2], [3, 4]]), "j": ("long", [[0, 1], [1, 1]])}, "torch.einsum('ij,jk', i, j)"),
    "einsum_scalar": ({"a": 2.5}, "torch.einsum('', a) * torch.einsum('->', a)"),
    "ce_module": ({"l": L, "t": TI}, "nn.CrossEntropyLoss(weight=torch.tensor([0.5, 2.0, 1.0, 3.0], "
                                     "dtype=torch.float64), label_smoothing=0.05)(l, t)"),
    "nll_module": ({"l": L, "t": TI_IGN}, "nn.NLLLoss(torch.tensor([0.5, 2.0, 1.0, 3.0], dtype=torch.float64), "
                                          "reduction='sum')(F.log_softmax(l, 1), t)"),
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
    "ce": ({"l": L, "t": TI}, "F.cross_entropy(l, t)"),
    "ce_weight": ({"l": L, "t": TI, "w": CW}, "F.cross_entropy(l, t, w)"),
    "nll_weight_none": ({"l": L, "t": TI, "w": CW}, "F.nll_loss(l, t, w, reduction='none')"),
    "ce_smoothing": ({"l": L, "t": TI}, "F.cross_entropy(l, t, label_smoothing=0.1)"),
    "ce_smoothing_weight": ({"l": L, "t": TI_IGN, "w": CW}, "F.cross_entropy(l, t, w, label_smoothing=0.1)"),
    "ce_smoothing_none": ({"l": L, "t": TI}, "F.cross_entropy(l, t, label_smoothing=0.1, reduction='none')"),
    "ce_smoothing_sum": ({"l": L, "t": TI}, "F.cross_entropy(l, t, label_smoothing=0.1, reduction='sum')"),
    "ce_probs": ({"l": L, "p": ("const", TP)}, "F.cross_entropy(l, p)"),
    "ce_probs_weight": ({"l": L, "p": ("const", TP), "w": CW}, "F.cross_entropy(l, p, w)"),
    "ce_probs_smoothing": ({"l": L, "p": ("const", TP)}, "F.cross_entropy(l, p, label_smoothing=0.2)"),
    "ce_probs_none": ({"l": L, "p": ("const", TP)}, "F.cross_entropy(l, p, reduction='none')"),
    "ce_probs_target_grad": ({"l": L, "p": TP}, "F.cross_entropy(l, p, reduction='sum')"),
    "einsum_transpose": ({"a": X}, "torch.einsum('ij->ji', a)"),
    "einsum_sum_all": ({"a": X}, "torch.einsum('ij->', a)"),
    "einsum_sum_middle": ({"r": R12}, "torch.einsum('ijk->j', r.reshape(2, 3, 2))"),
    "einsum_capitals_sum": ({"r": R12}, "torch.einsum('Bab->a', r.reshape(2, 3, 2))"),
    "einsum_identity": ({"a": X}, "torch.einsum('ij', a)"),
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
    "nll_weight_shape": ({"l": L, "t": TI}, "F.nll_loss(l, t, torch.ones(3))"),
    "nll_weight_2d": ({"l": L, "t": TI}, "F.nll_loss(l, t, torch.ones(4, 1))"),
    "ce_weight_double": ({"l": L, "t": TI}, "F.cross_entropy(l, t, torch.ones(4, dtype=torch.float64))"),
    "ce_weight_long": ({"l": L, "t": TI}, "F.cross_entropy(l, t, torch.ones(4, dtype=torch.long))"),
    "ce_weight_requires_grad": ({"l": L, "t": TI, "w": [1.0, 1.0, 1.0, 1.0]}, "F.cross_entropy(l, t, w)"),
    "ce_smoothing_too_large": ({"l": L, "t": TI}, "F.cross_entropy(l, t, label_smoothing=1.5)"),
    "ce_probs_smoothing_too_large": ({"l": L, "p": TP}, "F.cross_entropy(l, p, label_smoothing=2.0)"),
    "ce_probs_ignore_index": ({"l": L, "p": TP}, "F.cross_entropy(l, p, ignore_index=1)"),
    "ce_probs_weight_shape": ({"l": L, "p": TP}, "F.cross_entropy(l, p, torch.ones(3))"),
    "ce_float_target_of_other_shape": ({"l": L, "p": TP}, "F.cross_entropy(l, p[:, :2])"),
    "ce_float_indices": ({"l": L, "p": TP}, "F.cross_entropy(l, p[:, 0], label_smoothing=0.1)"),
    "ce_reduction": ({"l": L, "t": TI}, "F.cross_entropy(l, t, label_smoothing=0.1, reduction='avg')"),
    "nll_kdim_target_shape": ({"l": L3}, "F.nll_loss(l, torch.tensor([[0, 2, 1], [1, 1, 1]]))"),
    "einsum_fewer_operands": ({"a": X}, "torch.einsum('ij,jk->ik', a)"),
    "einsum_more_operands": ({"a": X}, "torch.einsum('ij->ij', a, a)"),
    "einsum_subscript_count": ({"a": X, "b": M}, "torch.einsum('ijk,jk->ik', a, b)"),
    "einsum_subscripts_over_ellipsis": ({"a": X, "b": M}, "torch.einsum('...ijk,jk->ik', a, b)"),
    "einsum_repeated_sizes": ({"a": X, "b": M}, "torch.einsum('ij,kk->ik', a, b)"),
    "einsum_size_mismatch": ({"a": X, "b": M}, "torch.einsum('ij,jk->ik', a, b.t())"),
    "einsum_ellipsis_mismatch": ({"r": R12, "q": R18},
                                 "torch.einsum('...ij,...jk->...ik', r.reshape(2, 2, 3), q.reshape(3, 3, 2))"),
    "einsum_invalid_subscript": ({"a": X, "b": M}, "torch.einsum('i2,jk->ik', a, b)"),
    "einsum_second_arrow": ({"a": X}, "torch.einsum('ij->j->i', a)"),
    "einsum_comma_in_output": ({"a": X, "b": M}, "torch.einsum('ij,jk->i,k', a, b)"),
    "einsum_unknown_output": ({"a": X, "b": M}, "torch.einsum('ij,jk->iz', a, b)"),
    "einsum_repeated_output": ({"a": X, "b": M}, "torch.einsum('ij,jk->ii', a, b)"),
    "einsum_lone_dot": ({"a": X, "b": M}, "torch.einsum('ij..,jk->ik', a, b)"),
    "einsum_lone_dot_output": ({"a": X, "b": M}, "torch.einsum('ij,jk->i..k', a, b)"),
    "einsum_two_ellipses": ({"a": X}, "torch.einsum('...i...->i', a)"),
    "einsum_dtypes": ({"a": X, "b": M}, "torch.einsum('ij,jk->ik', a, b.double())"),
    "einsum_number": ({"a": X}, "torch.einsum('ij,ij->ij', a, 2.0)"),
}


# ---- what PyTorch 2.13 printed for the tables above, by this script (saved as gen.py):
#   /path/to/torch/python gen.py tests/ops/test_op_rows.py
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
 'ce_1d_weight_smoothing': {'grads': {'l': [0.113454895023, 0.001709772397, -0.137108359081, 0.02194369166]},
                            'out': 0.785840915316},
 'ce_kdim_none': {'grads': {'l': [[[-0.380027184666, 0.165093009056], [0.32611992383, 0.367421248663],
                                   [0.053907260836, -0.532514257719]],
                                  [[0.285516549564, 0.0], [-1.061630997968, 0.0], [0.776114448404, 0.0]]]},
                  'out': [[1.427342920191, 1.018924715852], [2.407605964444, 0.0]]},
 'ce_kdim_weight_smoothing': {'grads': {'l': [[[-0.062671691711, 0.00717544662], [0.054222167738, 0.016652707493],
                                               [0.008449523973, -0.023828154114]],
                                              [[0.039611779047, 0.094737859672], [-0.154009824372, -0.125766902426],
                                               [0.114398045324, 0.031029042755]]]},
                              'out': 1.663450398272},
 'ce_kdim_weight_smoothing_none': {'grads': {'l': [[[-0.2740285439, 0.032231773006],
                                                    [0.242425920022, 0.090528207397],
                                                    [0.031602623878, -0.122759980403]],
                                                   [[0.38298729507, 0.0], [-1.682854246444, 0.0],
                                                    [1.299866951374, 0.0]]]},
                                   'out': [[1.3387100662, 0.733247301096], [4.013310437778, 0.0]]},
 'ce_module': {'grads': {'l': [[0.025124258404, 0.002983153524, -0.036761933658, 0.008654521731],
                               [-0.042952715494, 0.006740665529, 0.00177952565, 0.034432524315],
                               [0.008803245525, 0.138545300968, 0.068790075103, -0.216138621596]]},
               'out': 1.09577031107},
 'ce_probs_kdim': {'grads': {'l': [[[-0.130027184666, 0.165093009056], [0.20111992383, -0.465912084671],
                                    [-0.071092739164, 0.300819075614]],
                                   [[0.285516549564, 0.391656357174], [-1.061630997968, -0.071819420888],
                                    [0.776114448404, -0.319836936286]]]},
                   'out': [[1.377342920191, 0.818924715852], [2.407605964444, 1.257848583026]]},
 'ce_probs_mean': {'grads': {'l': [[0.020887810203, -0.024953796895, 0.002083652053, 0.001982334639],
                                   [-0.088299457512, 0.009001045621, -0.008122627461, 0.087421039352],
                                   [0.004860225144, -0.011014487067, 0.035912476243, -0.02975821432]]},
                   'out': 1.338625400097},
 'ce_probs_none': {'grads': {'l': [[0.06266343061, -0.074861390685, 0.006250956159, 0.005947003916],
                                   [-0.529796745075, 0.054006273728, -0.048735764768, 0.524526236115],
                                   [0.043742026297, -0.099130383601, 0.323212286188, -0.267823928884]]},
                   'out': [1.260203214415, 1.770761938906, 0.98491104697]},
 'ce_probs_target_grad': {'grads': {'l': [[0.018387810203, -0.025787130228, 0.007916985386, -0.000517665361],
                                          [-0.080799457512, 0.006501045621, -0.010622627461, 0.084921039352],
                                          [0.000693558477, -0.0068478204, 0.031745809576, -0.025591547654]],
                                    'p': [[0.223530482162, 0.448530482162, 0.073530482162, 0.328530482162],
                                          [0.265614290836, 0.280614290836, 0.445614290836, 0.070614290836],
                                          [0.530236657046, 0.125236657046, 0.230236657046, 0.170236657046]]},
                          'out': 1.382125400097},
 'ce_probs_weight_smoothing_mean': {'grads': {'l': [[0.041930706669, -0.058226751304, 0.055094197801,
                                                     -0.038798153166],
                                                    [-0.020054911401, -0.015483865501, -0.012396384129,
                                                     0.047935161031],
                                                    [0.007133356793, 0.01814131757, 0.075163173932,
                                                     -0.100437848295]]},
                                    'out': 2.170560134724},
 'ce_probs_weight_sum': {'grads': {'l': [[0.127095631324, -0.166062877425, 0.113438790815, -0.074471544714],
                                         [-0.094153453911, -0.026847019979, -0.025649488265, 0.146649962155],
                                         [0.036451688581, 0.042391346999, 0.269343571823, -0.348186607403]]},
                         'out': 6.191275798847},
 'ce_smoothing_mean': {'grads': {'l': [[0.033387810203, 0.004212869772, -0.052083014614, 0.014482334639],
                                       [-0.125799457512, 0.021501045621, 0.004377372539, 0.099921039352],
                                       [0.000693558477, 0.0681521796, 0.031745809576, -0.100591547654]]},
                       'out': 1.196125400097},
 'ce_smoothing_none_ignored': {'grads': {'l': [[0.08766343061, 0.000138609315, -0.118749043841, 0.030947003916],
                                               [0.0, 0.0, 0.0, 0.0],
                                               [-0.031257973703, 0.575869616399, 0.248212286188, -0.792823928884]]},
                               'out': [0.750203214415, 0.0, 1.25991104697]},
 'ce_smoothing_one': {'grads': {'l': [[-0.004112189797, -0.033287130228, 0.060416985386, -0.023017665361],
                                      [-0.013299457512, -0.015998954379, -0.033122627461, 0.062421039352],
                                      [-0.036806441523, 0.0306521796, -0.005754190424, 0.011908452346]]},
                      'out': 1.773625400097},
 'ce_smoothing_sum_ignored': {'grads': {'l': [[0.07516343061, -0.012361390685, -0.081249043841, 0.018447003916],
                                              [0.0, 0.0, 0.0, 0.0],
                                              [-0.022919324568, 0.1794565388, 0.070237428729, -0.226774642961]]},
                              'out': 2.202614261386},
 'ce_smoothing_weight_mean_ignored': {'grads': {'l': [[0.028660522911, -0.008358370745, -0.013036832985,
                                                       -0.007265319181],
                                                      [0.0, 0.0, 0.0, 0.0],
                                                      [0.005776229779, 0.128447701547, 0.063731886266,
                                                       -0.197955817591]]},
                                      'out': 1.076601233796},
 'ce_smoothing_weight_none': {'grads': {'l': [[0.114642091643, -0.03343348298, -0.052147331941, -0.029061276722],
                                              [-0.27327870709, -0.00468259865, -0.022449816225, 0.300411121965],
                                              [0.069314757351, 1.541372418559, 0.764782635187, -2.375469811097]]},
                              'out': [1.229297466668, 1.22715776477, 3.077107468515]},
 'ce_weight_mean': {'grads': {'l': [[0.025036317913, 0.005586357626, -0.043055343076, 0.012432667537],
                                    [-0.046099819171, 0.008555904096, 0.002848013068, 0.034695902006],
                                    [0.009720450288, 0.144637692533, 0.071824952486, -0.226183095307]]},
                    'out': 1.06229273884},
 'ce_weight_mean_ignored': {'grads': {'l': [[0.028165857653, 0.006284652329, -0.04843726096, 0.013986750979],
                                            [0.0, 0.0, 0.0, 0.0],
                                            [0.010935506574, 0.1627174041, 0.080803071547, -0.254455982221]]},
                            'out': 0.973734088832},
 'ce_weight_none_ignored': {'grads': {'l': [[0.11266343061, 0.025138609315, -0.193749043841, 0.055947003916],
                                            [0.0, 0.0, 0.0, 0.0],
                                            [0.13122607889, 1.952608849196, 0.969636858564, -3.053471786651]]},
                            'out': [0.490203214415, 0.0, 3.404733140911]},
 'ce_weight_sum_ignored': {'grads': {'l': [[0.11266343061, 0.025138609315, -0.193749043841, 0.055947003916],
                                           [0.0, 0.0, 0.0, 0.0],
                                           [0.043742026297, 0.650869616399, 0.323212286188, -1.017823928884]]},
                           'out': 3.894936355326},
 'einsum_batch_contracted': {'grads': {'q': [1.183333333333, 1.416666666667, 0.05, 0.15, -0.116666666667,
                                             -0.216666666667, 0.825, 1.175, -0.758333333333, -1.175, 0.933333333333,
                                             1.266666666667, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                                       'r': [-0.15, 0.533333333333, 0.616666666667, -0.216666666667, 1.2, 0.95,
                                             -0.466666666667, 0.391666666667, -0.35, -0.733333333333,
                                             0.891666666667, -0.95]},
                             'out': [[-0.41, -0.6025], [-0.655, -0.51]]},
 'einsum_bmm': {'grads': {'q': [0.707142857143, 0.807142857143, 0.107142857143, 0.15, -0.135714285714,
                                -0.178571428571, 1.253571428571, 1.403571428571, -1.396428571429, -1.575,
                                1.257142857143, 1.4, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                          'r': [-0.092857142857, 0.514285714286, 0.407142857143, -0.121428571429, 0.8, 0.55,
                                -0.542857142857, 0.810714285714, -0.921428571429, -0.657142857143, 1.025,
                                -1.178571428571]},
                'out': [[[0.505, -0.175], [0.085, -0.335]], [[-0.915, -0.4275], [-0.74, -0.175]]]},
 'einsum_column_sums': {'grads': {'a': [[0.5, 1.0, 1.5], [0.5, 1.0, 1.5]]}, 'out': [1.75, 1.0, -0.5]},
 'einsum_diagonal': {'grads': {'s': [[0.5, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.5]]}, 'out': [1.0, -1.5, 0.9]},
 'einsum_diagonal_kept_axis': {'grads': {'r': [0.5, 0.0, 1.0, 0.0, 1.5, 0.0, 0.0, 0.5, 0.0, 1.0, 0.0, 1.5]},
                               'out': [-1.6, 0.1, 0.5]},
 'einsum_dot': {'grads': {'s': [[0.15, -0.75, 0.4], [0.5, 1.0, -0.25], [0.0, 0.0, 0.0]]}, 'out': -3.1},
 'einsum_ellipsis_broadcast': {'grads': {'q': [1.570652173913, 1.646739130435, -1.157608695652, -1.198913043478,
                                               0.932608695652, 0.963043478261, 1.875, 1.951086956522,
                                               -1.322826086957, -1.364130434783, 1.054347826087, 1.084782608696,
                                               2.179347826087, 2.255434782609, -1.488043478261, -1.529347826087,
                                               1.176086956522, 1.20652173913],
                                         'r': [-0.344565217391, 2.332608695652, 0.25, -0.383695652174,
                                               2.619565217391, 0.267391304348, -0.579347826087, 4.054347826087,
                                               0.354347826087, -0.61847826087, 4.341304347826, 0.371739130435]},
                               'out': [[[[0.505, -0.175], [0.085, -0.335]], [[0.515, 0.3575], [0.335, -0.9925]],
                                        [[0.4425, 0.0175], [0.4025, -0.5425]]],
                                       [[[-1.035, 0.1], [-0.48, 0.56]], [[-0.915, -0.4275], [-0.74, -0.175]],
                                        [[-1.2575, -0.13], [-0.2175, 0.32]]]]},
 'einsum_ellipsis_implicit': {'grads': {'q': [1.960714285714, 2.210714285714, -1.289285714286, -1.425,
                                              1.121428571429, 1.221428571429, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                                              0.0, 0.0, 0.0, 0.0, 0.0],
                                        'r': [-0.092857142857, 0.514285714286, 0.407142857143, -0.121428571429, 0.8,
                                              0.55, -0.15, 1.085714285714, 0.692857142857, -0.178571428571,
                                              1.371428571429, 0.835714285714]},
                              'out': [[[0.505, -0.175], [0.085, -0.335]], [[-1.035, 0.1], [-0.48, 0.56]]]},
 'einsum_ellipsis_summed': {'grads': {'b': [[0.875, 1.458333333333, 2.041666666667, 2.625],
                                            [-0.475, -0.791666666667, -1.108333333333, -1.425],
                                            [0.35, 0.583333333333, 0.816666666667, 1.05]],
                                      'r': [2.125, 2.291666666667, -0.25, 2.125, 2.291666666667, -0.25, 2.125,
                                            2.291666666667, -0.25, 2.125, 2.291666666667, -0.25]},
                            'out': [-1.95, -2.2525, 4.815, -0.9325]},
 'einsum_hadamard_sum': {'grads': {'a': [[0.25, -0.5, 1.0], [2.25, 1.125, -0.75]],
                                   'b': [[0.75, -1.0, 0.25, 0.0], [0.375, 4.5, -1.5, 0.0], [0.0, 0.0, 0.0, 0.0]]},
                         'out': [3.75, 3.125]},
 'einsum_implicit_transpose': {'grads': {'a': [[0.5, 0.9, 1.3], [0.7, 1.1, 1.5]]},
                               'out': [[1.5, 0.25], [-2.0, 3.0], [0.5, -1.0]]},
 'einsum_label_only_in_one_operand': {'grads': {'a': [[1.81, 1.81, 1.81], [3.85, 3.85, 3.85]],
                                                'b': [[2.475, 2.475, 2.475, 2.475], [2.925, 2.925, 2.925, 2.925],
                                                      [3.375, 3.375, 3.375, 3.375]]},
                                      'out': [[0.0, 0.0, -0.0], [3.9375, 6.1875, -2.475]]},
 'einsum_list_form': {'grads': {'a': [[1.410714285714, 1.767857142857, -0.421428571429],
                                      [2.410714285714, 3.339285714286, -1.05]],
                                'b': [[1.017857142857, 1.267857142857, 1.517857142857, 1.767857142857],
                                      [2.214285714286, 2.357142857143, 2.5, 2.642857142857],
                                      [-0.821428571429, -0.892857142857, -0.964285714286, -1.035714285714]]},
                      'out': [[-3.25, -2.85, 4.6, -1.925], [6.625, 1.7, -2.2, 3.6625]]},
 'einsum_long': {'grads': {}, 'out': [[2, 3], [4, 7]]},
 'einsum_mm': {'grads': {'a': [[1.410714285714, 1.767857142857, -0.421428571429],
                               [2.410714285714, 3.339285714286, -1.05]],
                         'b': [[1.017857142857, 1.267857142857, 1.517857142857, 1.767857142857],
                               [2.214285714286, 2.357142857143, 2.5, 2.642857142857],
                               [-0.821428571429, -0.892857142857, -0.964285714286, -1.035714285714]]},
               'out': [[-3.25, -2.85, 4.6, -1.925], [6.625, 1.7, -2.2, 3.6625]]},
 'einsum_mm_implicit': {'grads': {'a': [[1.410714285714, 1.767857142857, -0.421428571429],
                                        [2.410714285714, 3.339285714286, -1.05]],
                                  'b': [[1.017857142857, 1.267857142857, 1.517857142857, 1.767857142857],
                                        [2.214285714286, 2.357142857143, 2.5, 2.642857142857],
                                        [-0.821428571429, -0.892857142857, -0.964285714286, -1.035714285714]]},
                        'out': [[-3.25, -2.85, 4.6, -1.925], [6.625, 1.7, -2.2, 3.6625]]},
 'einsum_outer': {'grads': {'a': [[-0.1875, -0.3375, -0.4875], [0.0, 0.0, 0.0]],
                            's': [[0.0, 0.0, 0.0], [-0.375, -0.375, -0.375], [0.0, 0.0, 0.0]]},
                  'out': [[0.45, -2.25, 1.2], [-0.6, 3.0, -1.6], [0.15, -0.75, 0.4]]},
 'einsum_repeated_and_contracted': {'grads': {'b': [[0.397727272727, 0.456818181818, 0.515909090909, 0.575],
                                                    [0.936363636364, 0.990909090909, 1.045454545455, 1.1],
                                                    [0.0, 0.0, 0.0, 0.0]],
                                              'q': [1.215909090909, 1.625, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                                                    1.852272727273, 2.625, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                                                    2.488636363636, 3.625]},
                                    'out': [[-0.35, -0.425, 0.55, -0.25], [0.425, -0.6625, 1.375, 0.225],
                                            [1.15, 0.8875, -0.925, 0.7875]]},
 'einsum_scalar': {'grads': {'a': 2.5}, 'out': 6.25},
 'einsum_size_one_broadcast': {'grads': {'a': [[1.410714285714, 1.410714285714, 1.410714285714],
                                               [2.410714285714, 2.410714285714, 2.410714285714]],
                                         'b': [[2.410714285714, 2.732142857143, 3.053571428571, 3.375],
                                               [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]},
                               'out': [[0.0, -0.0, 0.0, 0.0], [1.125, -2.25, 4.5, 0.5625]]},
 'einsum_spaces_capitals': {'grads': {'a': [[1.410714285714, 1.767857142857, -0.421428571429],
                                            [2.410714285714, 3.339285714286, -1.05]],
                                      'b': [[1.017857142857, 1.267857142857, 1.517857142857, 1.767857142857],
                                            [2.214285714286, 2.357142857143, 2.5, 2.642857142857],
                                            [-0.821428571429, -0.892857142857, -0.964285714286, -1.035714285714]]},
                            'out': [[-3.25, -2.85, 4.6, -1.925], [6.625, 1.7, -2.2, 3.6625]]},
 'einsum_sum_all': {'grads': {'a': [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]]}, 'out': 2.25},
 'einsum_three_operands': {'grads': {'a': [[7.246590909091, 10.3875, -3.518636363636],
                                           [-0.097727272727, -0.325, 0.239090909091]],
                                     'b': [[5.145454545455, 5.636363636364, 6.127272727273, 6.618181818182],
                                           [-7.436363636364, -7.909090909091, -8.381818181818, -8.854545454545],
                                           [1.902272727273, 2.006818181818, 2.111363636364, 2.215909090909]],
                                     's': [[-1.660227272727, 5.647159090909, 0.0], [-2.905681818182, 9.20625, 0.0],
                                           [-4.151136363636, 12.765340909091, 0.0]]},
                           'out': [[10.0, 0.55, 0.2, 5.4], [-10.9125, -3.405, 4.68, -6.07125],
                                   [-6.4875, -6.1, 9.9, -3.86875]]},
 'einsum_trace': {'grads': {'s': [[0.5, 0.0, 0.0], [0.0, 0.5, 0.0], [0.0, 0.0, 0.5]]}, 'out': 0.4},
 'einsum_transpose': {'grads': {'a': [[0.5, 0.9, 1.3], [0.7, 1.1, 1.5]]},
                      'out': [[1.5, 0.25], [-2.0, 3.0], [0.5, -1.0]]},
 'nll_kdim_none': {'grads': {'l': [[[-0.5, 0.0], [0.0, 0.0], [0.0, -0.833333333333]],
                                   [[0.0, 0.0], [-1.166666666667, -1.5], [0.0, 0.0]]]},
                   'out': [[-1.0, -0.1], [2.0, -0.7]]},
 'nll_kdim_weight_mean': {'grads': {'l': [[[-0.142857142857, 0.0], [0.0, 0.0], [0.0, -0.071428571429]],
                                          [[0.0, 0.0], [-0.285714285714, 0.0], [0.0, 0.0]]]},
                          'out': 0.842857142857},
 'nll_module': {'grads': {'l': [[0.11266343061, 0.025138609315, -0.193749043841, 0.055947003916],
                                [0.0, 0.0, 0.0, 0.0],
                                [0.043742026297, 0.650869616399, 0.323212286188, -1.017823928884]]},
                'out': 3.894936355326},
 'nll_weight_mean_ignore_index': {'grads': {'l': [[0.11266343061, 0.025138609315, -0.193749043841, 0.055947003916],
                                                  [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]},
                                  'out': 0.490203214415},
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
 'ce': [['NllLossBackward0',
         {'_saved_self': [[3, 4], 'float32', 48, []],
          '_saved_target': [[3], 'int64', 24, ['t']],
          '_saved_total_weight': [[], 'float32', 4, []],
          '_saved_weight': None},
         ['LogSoftmaxBackward0']],
        ['LogSoftmaxBackward0', {'_saved_result': [[3, 4], 'float32', 48, []]}, ['AccumulateGrad']]],
 'ce_probs': [['DivBackward1', {}, ['NegBackward0']], ['NegBackward0', {}, ['SumBackward0']],
              ['SumBackward0', {}, ['MulBackward0']],
              ['MulBackward0', {'_saved_other': [[3, 4], 'float32', 48, ['p']], '_saved_self': None},
               ['LogSoftmaxBackward0', None]],
              ['LogSoftmaxBackward0', {'_saved_result': [[3, 4], 'float32', 48, []]}, ['AccumulateGrad']]],
 'ce_probs_none': [['NegBackward0', {}, ['SumBackward1']], ['SumBackward1', {}, ['MulBackward0']],
                   ['MulBackward0', {'_saved_other': [[3, 4], 'float32', 48, ['p']], '_saved_self': None},
                    ['LogSoftmaxBackward0', None]],
                   ['LogSoftmaxBackward0', {'_saved_result': [[3, 4], 'float32', 48, []]}, ['AccumulateGrad']]],
 'ce_probs_smoothing': [['DivBackward1', {}, ['NegBackward0']], ['NegBackward0', {}, ['SumBackward0']],
                        ['SumBackward0', {}, ['MulBackward0']],
                        ['MulBackward0', {'_saved_other': [[3, 4], 'float32', 48, []], '_saved_self': None},
                         ['LogSoftmaxBackward0', None]],
                        ['LogSoftmaxBackward0', {'_saved_result': [[3, 4], 'float32', 48, []]},
                         ['AccumulateGrad']]],
 'ce_probs_target_grad': [['NegBackward0', {}, ['SumBackward0']], ['SumBackward0', {}, ['MulBackward0']],
                          ['MulBackward0',
                           {'_saved_other': [[3, 4], 'float32', 48, ['p']],
                            '_saved_self': [[3, 4], 'float32', 48, []]},
                           ['LogSoftmaxBackward0', 'AccumulateGrad']],
                          ['LogSoftmaxBackward0', {'_saved_result': [[3, 4], 'float32', 48, []]},
                           ['AccumulateGrad']]],
 'ce_probs_weight': [['DivBackward1', {}, ['NegBackward0']], ['NegBackward0', {}, ['SumBackward0']],
                     ['SumBackward0', {}, ['MulBackward0']],
                     ['MulBackward0', {'_saved_other': [[1, 4], 'float32', 16, ['w']], '_saved_self': None},
                      ['MulBackward0', None]],
                     ['MulBackward0', {'_saved_other': [[3, 4], 'float32', 48, ['p']], '_saved_self': None},
                      ['LogSoftmaxBackward0', None]],
                     ['LogSoftmaxBackward0', {'_saved_result': [[3, 4], 'float32', 48, []]}, ['AccumulateGrad']]],
 'ce_smoothing': [['AddBackward0', {}, ['MulBackward1', 'MulBackward1']],
                  ['MulBackward1', {}, ['NllLossBackward0']], ['MulBackward1', {}, ['DivBackward0']],
                  ['NllLossBackward0',
                   {'_saved_self': [[3, 4], 'float32', 48, []],
                    '_saved_target': [[3], 'int64', 24, ['t']],
                    '_saved_total_weight': [[], 'float32', 4, []],
                    '_saved_weight': None},
                   ['LogSoftmaxBackward0']],
                  ['DivBackward0', {'_saved_other': [[], 'int64', 8, []], '_saved_self': None},
                   ['SumBackward0', None]],
                  ['LogSoftmaxBackward0', {'_saved_result': [[3, 4], 'float32', 48, []]}, ['AccumulateGrad']],
                  ['SumBackward0', {}, ['MaskedFillBackward0']],
                  ['MaskedFillBackward0', {'_saved_mask': [[3], 'bool', 3, []]}, ['NegBackward0']],
                  ['NegBackward0', {}, ['SumBackward1']], ['SumBackward1', {}, ['LogSoftmaxBackward0']]],
 'ce_smoothing_none': [['AddBackward0', {}, ['MulBackward1', 'MulBackward1']],
                       ['MulBackward1', {}, ['NllLossBackward0']], ['MulBackward1', {}, ['MaskedFillBackward0']],
                       ['NllLossBackward0',
                        {'_saved_self': [[3, 4], 'float32', 48, []],
                         '_saved_target': [[3], 'int64', 24, ['t']],
                         '_saved_total_weight': [[], 'float32', 4, []],
                         '_saved_weight': None},
                        ['LogSoftmaxBackward0']],
                       ['MaskedFillBackward0', {'_saved_mask': [[3], 'bool', 3, []]}, ['NegBackward0']],
                       ['LogSoftmaxBackward0', {'_saved_result': [[3, 4], 'float32', 48, []]}, ['AccumulateGrad']],
                       ['NegBackward0', {}, ['SumBackward1']], ['SumBackward1', {}, ['LogSoftmaxBackward0']]],
 'ce_smoothing_sum': [['AddBackward0', {}, ['MulBackward1', 'MulBackward1']],
                      ['MulBackward1', {}, ['NllLossBackward0']], ['MulBackward1', {}, ['SumBackward0']],
                      ['NllLossBackward0',
                       {'_saved_self': [[3, 4], 'float32', 48, []],
                        '_saved_target': [[3], 'int64', 24, ['t']],
                        '_saved_total_weight': [[], 'float32', 4, []],
                        '_saved_weight': None},
                       ['LogSoftmaxBackward0']],
                      ['SumBackward0', {}, ['MaskedFillBackward0']],
                      ['LogSoftmaxBackward0', {'_saved_result': [[3, 4], 'float32', 48, []]}, ['AccumulateGrad']],
                      ['MaskedFillBackward0', {'_saved_mask': [[3], 'bool', 3, []]}, ['NegBackward0']],
                      ['NegBackward0', {}, ['SumBackward1']], ['SumBackward1', {}, ['LogSoftmaxBackward0']]],
 'ce_smoothing_weight': [['AddBackward0', {}, ['MulBackward1', 'MulBackward1']],
                         ['MulBackward1', {}, ['NllLossBackward0']], ['MulBackward1', {}, ['DivBackward0']],
                         ['NllLossBackward0',
                          {'_saved_self': [[3, 4], 'float32', 48, []],
                           '_saved_target': [[3], 'int64', 24, ['t']],
                           '_saved_total_weight': [[], 'float32', 4, []],
                           '_saved_weight': [[4], 'float32', 16, ['w']]},
                          ['LogSoftmaxBackward0']],
                         ['DivBackward0', {'_saved_other': [[], 'float32', 4, []], '_saved_self': None},
                          ['SumBackward0', None]],
                         ['LogSoftmaxBackward0', {'_saved_result': [[3, 4], 'float32', 48, []]},
                          ['AccumulateGrad']],
                         ['SumBackward0', {}, ['MaskedFillBackward0']],
                         ['MaskedFillBackward0', {'_saved_mask': [[3], 'bool', 3, []]}, ['NegBackward0']],
                         ['NegBackward0', {}, ['SumBackward1']], ['SumBackward1', {}, ['MulBackward0']],
                         ['MulBackward0', {'_saved_other': [[1, 4], 'float32', 16, ['w']], '_saved_self': None},
                          ['LogSoftmaxBackward0', None]]],
 'ce_weight': [['NllLossBackward0',
                {'_saved_self': [[3, 4], 'float32', 48, []],
                 '_saved_target': [[3], 'int64', 24, ['t']],
                 '_saved_total_weight': [[], 'float32', 4, []],
                 '_saved_weight': [[4], 'float32', 16, ['w']]},
                ['LogSoftmaxBackward0']],
               ['LogSoftmaxBackward0', {'_saved_result': [[3, 4], 'float32', 48, []]}, ['AccumulateGrad']]],
 'einsum_capitals_sum': [['SumBackward1', {}, ['PermuteBackward0']], ['PermuteBackward0', {}, ['ViewBackward0']],
                         ['ViewBackward0', {}, ['AccumulateGrad']]],
 'einsum_identity': [['PermuteBackward0', {}, ['AccumulateGrad']]],
 'einsum_sum_all': [['SumBackward1', {}, ['PermuteBackward0']], ['PermuteBackward0', {}, ['AccumulateGrad']]],
 'einsum_sum_middle': [['SumBackward1', {}, ['PermuteBackward0']], ['PermuteBackward0', {}, ['ViewBackward0']],
                       ['ViewBackward0', {}, ['AccumulateGrad']]],
 'einsum_transpose': [['PermuteBackward0', {}, ['AccumulateGrad']]],
 'nll_weight_none': [['NllLossBackward0',
                      {'_saved_self': [[3, 4], 'float32', 48, ['l']],
                       '_saved_target': [[3], 'int64', 24, ['t']],
                       '_saved_total_weight': [[], 'float32', 4, []],
                       '_saved_weight': [[4], 'float32', 16, ['w']]},
                      ['AccumulateGrad']]],
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
 'ce_float_indices': ['RuntimeError', 'expected target dtype to be Long or Byte, but got Float'],
 'ce_float_target_of_other_shape': ['RuntimeError', '0D or 1D target tensor expected, multi-target not supported'],
 'ce_probs_ignore_index': ['RuntimeError', 'ignore_index is not supported for floating point target'],
 'ce_probs_smoothing_too_large': ['RuntimeError', 'label_smoothing must be between 0.0 and 1.0. Got: 2'],
 'ce_probs_weight_shape': ['RuntimeError',
                           'cross_entropy: weight tensor should be defined either for all 4 classes or no classes '
                           'but got weight tensor of shape: [3]'],
 'ce_reduction': ['ValueError', 'avg is not a valid value for reduction'],
 'ce_smoothing_too_large': ['RuntimeError', 'label_smoothing must be between 0.0 and 1.0. Got: 1.5'],
 'ce_weight_double': ['RuntimeError', 'expected scalar type Float but found Double'],
 'ce_weight_long': ['RuntimeError', 'expected scalar type Float but found Long'],
 'ce_weight_requires_grad': ['RuntimeError',
                             "The function 'nll_loss_forward' is not differentiable with respect to argument "
                             "'weight'. This input cannot have requires_grad True."],
 'einsum_comma_in_output': ['RuntimeError',
                            'einsum(): invalid subscript given at index 8 in the equation string, subscripts must '
                            'be in [a-zA-Z]'],
 'einsum_dtypes': ['RuntimeError', 'expected scalar type Float but found Double'],
 'einsum_ellipsis_mismatch': ['RuntimeError',
                              'einsum(): dimension 0 covered by ellipsis in operand 1has size 3 which does not '
                              'broadcast with previously seen ellipsis with size 2 for the respective dimension'],
 'einsum_fewer_operands': ['RuntimeError', 'einsum(): fewer operands were provided than specified in the equation'],
 'einsum_invalid_subscript': ['RuntimeError',
                              'einsum(): invalid subscript given at index 1 in the equation string, subscripts '
                              'must be in [a-zA-Z]'],
 'einsum_lone_dot': ['RuntimeError', "einsum(): found '.' for operand 0 that is not part of any ellipsis"],
 'einsum_lone_dot_output': ['RuntimeError',
                            "einsum(): found '.' for output that is not part of any ellipsis (...)"],
 'einsum_more_operands': ['RuntimeError', 'einsum(): more operands were provided than specified in the equation'],
 'einsum_number': ['TypeError', 'expected Tensor as element 1 in argument 1, but got float'],
 'einsum_repeated_output': ['RuntimeError', 'einsum(): output subscript i appears more than once in the output'],
 'einsum_repeated_sizes': ['RuntimeError',
                           "einsum(): subscript k is repeated for operand 1 but the sizes don't match, 4 != 3"],
 'einsum_second_arrow': ['RuntimeError',
                         'einsum(): invalid subscript given at index 5 in the equation string, subscripts must be '
                         'in [a-zA-Z]'],
 'einsum_size_mismatch': ['RuntimeError',
                          'einsum(): subscript j has size 4 for operand 1 which does not broadcast with previously '
                          'seen size 3'],
 'einsum_subscript_count': ['RuntimeError',
                            'einsum(): the number of subscripts in the equation (3) does not match the number of '
                            'dimensions (2) for operand 0 and no ellipsis was given'],
 'einsum_subscripts_over_ellipsis': ['RuntimeError',
                                     'einsum(): the number of subscripts in the equation (3) is more than the '
                                     'number of dimensions (2) for operand 0'],
 'einsum_two_ellipses': ['RuntimeError',
                         "einsum(): found '.' for operand 0 for which an ellipsis was already found"],
 'einsum_unknown_output': ['RuntimeError',
                           'einsum(): output subscript z does not appear in the equation for any input operand'],
 'nll_kdim_target_shape': ['RuntimeError', 'Expected target size [2, 2], got [2, 3]'],
 'nll_weight_2d': ['RuntimeError',
                   'weight tensor should be defined either for all 4 classes or no classes but got weight tensor '
                   'of shape: [4, 1]'],
 'nll_weight_shape': ['RuntimeError',
                      'weight tensor should be defined either for all 4 classes or no classes but got weight '
                      'tensor of shape: [3]'],
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


@pytest.mark.filterwarnings("ignore:divide by zero encountered in log")   # bce at 0 and 1: log(0), clamped
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
    nodes = [n for n in bfs(out.grad_fn) if n.name() != "torch::autograd::AccumulateGrad"]
    assert [n.name() for n in nodes] == [g[0] for g in GRAPHS[name]]
    for node, (_, saved, nexts) in zip(nodes, GRAPHS[name]):
        assert [f.name().replace("torch::autograd::", "") if f else None for f, _ in node.next_functions] == nexts
        for attr, want in saved.items():
            if want is not None and want[:2] == [[], "int64"] and not want[3]:
                continue   # PyTorch wraps a Python number in a tensor; glassgrad keeps the number
            if want is None:
                # glassgrad's unweighted NllLossBackward0 has no weight slot at all (PyTorch's reads None)
                assert getattr(node, attr, None) is None, attr
                continue
            got = getattr(node, attr)
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
    "ce_weight": (lambda x: F.cross_entropy(x, engine.tensor([2, -100, 0, 1]), leaf([0.5, 2.0, 1.5], False)),
                  lambda: [f64(4, 3)]),
    "nll_weight_none": (lambda x: F.nll_loss(x, engine.tensor([2, 1, 0, 1]), leaf([0.5, 2.0, 1.5], False),
                                             reduction="none"), lambda: [f64(4, 3)]),
    "ce_smoothing_weight": (lambda x: F.cross_entropy(x, engine.tensor([2, -100, 0, 1]), leaf([0.5, 2.0, 1.5], False),
                                                      label_smoothing=0.3), lambda: [f64(4, 3)]),
    "ce_smoothing_kdim_sum": (lambda x: F.cross_entropy(x, engine.tensor([[0, 2], [1, 1]]), label_smoothing=0.2,
                                                        reduction="sum"), lambda: [f64(2, 3, 2)]),
    "ce_probs": (lambda x, p: F.cross_entropy(x, p, leaf([0.5, 2.0, 1.5], False), label_smoothing=0.1),
                 lambda: [f64(4, 3), probs(4, 3, seed=2)]),
    "ce_probs_kdim_none": (lambda x, p: F.cross_entropy(x, p, reduction="none"),
                           lambda: [f64(2, 3, 2), probs(2, 3, 2, seed=2)]),
    "einsum_mm": (lambda a, b: engine.einsum("ij,jk->ik", a, b), lambda: [f64(2, 3), f64(3, 4)]),
    "einsum_bmm_implicit": (lambda a, b: engine.einsum("bij,bjk", a, b), lambda: [f64(2, 2, 3), f64(2, 3, 2)]),
    "einsum_trace": (lambda s: engine.einsum("ii", s), lambda: [f64(3, 3)]),
    "einsum_diagonal_kept_axis": (lambda r: engine.einsum("iji->ji", r), lambda: [f64(2, 3, 2)]),
    "einsum_repeated_and_contracted": (lambda q, b: engine.einsum("iij,jk->ki", q, b),
                                       lambda: [f64(3, 3, 2), f64(2, 4)]),
    "einsum_three": (lambda a, b, c: engine.einsum("ij,jk,li->lk", a, b, c),
                     lambda: [f64(2, 3), f64(3, 4), f64(3, 2)]),
    "einsum_ellipsis_broadcast": (lambda a, b: engine.einsum("...ij,...jk->...ik", a, b),
                                  lambda: [f64(2, 1, 2, 3), f64(3, 3, 2)]),
    "einsum_size_one_and_lone_label": (lambda a, b: engine.einsum("ij,jk,l->ikl", a, b[:1], b[0]),
                                       lambda: [f64(2, 3), f64(3, 4)]),
    "einsum_sum_and_transpose": (lambda r: engine.einsum("ijk->kj", r), lambda: [f64(2, 3, 2)]),
}


@pytest.mark.parametrize("name", sorted(FINITE_DIFFERENCES))
def test_gradients_match_finite_differences(name):
    fn, inputs = FINITE_DIFFERENCES[name]
    gradcheck(fn, inputs())


@pytest.mark.parametrize("name", ["prod_all", "prod_all_one_zero", "prod_all_two_zeros", "prod_dim_zeros",
                                  "bce", "bcel_pos_weight", "ce_weight", "ce_smoothing_weight", "ce_probs",
                                  "einsum_mm", "einsum_repeated_and_contracted", "einsum_three",
                                  "einsum_ellipsis_broadcast"])
def test_second_derivatives_match_finite_differences(name):
    fn, inputs = FINITE_DIFFERENCES[name]
    gradgradcheck(fn, inputs())


@st.composite
def einsum_cases(draw):
    """An equation over the labels ijkl with 1-3 operands (repeated labels allowed), an
    explicit or implicit output, sizes 1-3 per label, and now and then a size-1 dim that
    broadcasts against the label's size elsewhere."""
    sizes = {c: draw(st.integers(1, 3)) for c in "ijkl"}
    terms = [draw(st.text("ijkl", min_size=0 if n == 0 else 1, max_size=3)) for n in range(draw(st.integers(1, 3)))]
    used = sorted(set("".join(terms)))
    explicit = draw(st.booleans())
    out = "".join(draw(st.permutations(used))[:draw(st.integers(0, len(used)))]) if explicit else None
    shapes = [tuple(1 if draw(st.integers(0, 5)) == 0 else sizes[c] for c in t) for t in terms]
    for t, sh in zip(terms, shapes):     # a repeated label takes one size within its operand
        for c in set(t):
            if len({sh[p] for p, x in enumerate(t) if x == c}) > 1:
                return draw(einsum_cases())
    eq = ",".join(terms) + ("->" + out if explicit else "")
    return eq, shapes, sizes


@settings(max_examples=25, deadline=None, derandomize=True)
@given(case=einsum_cases(), seed=st.integers(0, 2**16))
def test_einsum_matches_numpy_and_finite_differences(case, seed):
    eq, shapes, sizes = case
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(sh) for sh in shapes]
    lhs = eq.split("->")[0].split(",")
    size = {c: max(sh[p] for t, sh in zip(lhs, shapes) for p, x in enumerate(t) if x == c) for c in set("".join(lhs))}
    full = [np.broadcast_to(a, tuple(size[c] for c in t)) for a, t in zip(arrays, lhs)]   # NumPy broadcasts no labels
    want = np.einsum(eq, *full)
    xs = [leaf(a) for a in arrays]
    got = engine.einsum(eq, *xs)
    np.testing.assert_allclose(got.detach().numpy(), want, rtol=1e-12, atol=1e-12)
    gradcheck(lambda *t: engine.einsum(eq, *t), xs)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(shape=st.lists(st.integers(1, 4), min_size=0, max_size=3), seed=st.integers(0, 2**16),
       zeros=st.integers(0, 3), which=st.integers(-1, 2), keepdim=st.booleans())
def test_prod_gradient_is_the_product_of_the_others(shape, seed, zeros, which, keepdim):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)
    a.reshape(-1)[rng.integers(0, a.size, zeros)] = 0.0            # none, one or several zeros
    x = leaf(a)
    dim = None if which < 0 or not shape else which % len(shape)
    y = x.prod() if dim is None else x.prod(dim, keepdim=keepdim)
    np.testing.assert_allclose(y.detach().numpy(), np.prod(a, axis=dim, keepdims=keepdim and dim is not None),
                               rtol=1e-12)
    y.sum().backward()
    axes = range(a.ndim) if dim is None else [dim]
    want = np.empty_like(a)
    for idx in np.ndindex(a.shape):       # the product over the reduced slice with this element left out
        part = np.array(a[tuple(slice(None) if k in axes else i for k, i in enumerate(idx))])
        part[tuple(i for k, i in enumerate(idx) if k in axes)] = 1.0
        want[idx] = np.prod(part)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12, atol=1e-15)


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

STRICT = {
    "prod_all_one_zero": lambda a, b: a[0].relu().prod() * b[0, 0],
    "prod_dim": lambda a, b: a.prod(1) * b[:, 0],
    "prod_dim_zeros": lambda a, b: a.relu().prod(0),
    "bce": lambda a, b: F.binary_cross_entropy(a.sigmoid(), b.sigmoid(), reduction="none"),
    "bce_weight": lambda a, b: F.binary_cross_entropy(a.sigmoid(), b.sigmoid().detach(), b[0].detach().abs()),
    "bcel": lambda a, b: F.binary_cross_entropy_with_logits(a, b.sigmoid()),
    "bcel_weights": lambda a, b: F.binary_cross_entropy_with_logits(
        a, b.sigmoid(), b[0].detach().abs(), pos_weight=b[1].detach().abs(), reduction="sum"),
    "ce_weight": lambda a, b: F.cross_entropy(a, engine.tensor([0, 3, -100]), b[0].detach().abs()),
    "ce_smoothing_weight_none": lambda a, b: F.cross_entropy(a, engine.tensor([0, 3, 1]), b[0].detach().abs(),
                                                             reduction="none", label_smoothing=0.2),
    "ce_smoothing_mean": lambda a, b: F.cross_entropy(a, engine.tensor([0, -100, 1]), label_smoothing=0.2),
    "ce_probs": lambda a, b: F.cross_entropy(a, F.softmax(b, 1), label_smoothing=0.1),
    "einsum_mm": lambda a, b: engine.einsum("ij,kj->ik", a, b),
    "einsum_diagonal": lambda a, b: engine.einsum("ii->i", a[:, :3]) * b[0, :3],
    "einsum_ellipsis_broadcast": lambda a, b: engine.einsum("...i,...i->...", a.reshape(3, 1, 4), b),
    "einsum_lone_label": lambda a, b: engine.einsum("ij,k->ik", a, b[0]),
}


def _run(fn):
    rng = np.random.default_rng(0)
    a = engine.tensor(rng.standard_normal((3, 4)), dtype=D, requires_grad=True)
    b = engine.tensor(rng.standard_normal((3, 4)), dtype=D, requires_grad=True)
    out = fn(a, b)
    out.backward(engine.ones_like(out))
    return out, [t.grad for t in (a, b)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(STRICT))
def test_other_backends_match_numpy(name, backend):
    ref_out, ref_grads = _run(STRICT[name])
    with on_backend(backend):
        out, grads = _run(STRICT[name])
    assert_matches(backend, [out, *grads], [ref_out, *ref_grads])


def test_einsum_keeps_what_each_gradient_reads():
    """One or two operands are lowered as PyTorch's (tests/functions/test_matmul_graphs.py); three or
    more, or an empty operand, are one EinsumBackward0 row that keeps what each gradient reads."""
    a = engine.randn(4, 5, requires_grad=True)
    b = engine.randn(5, 3, requires_grad=True)
    e = engine.zeros(0, 5, requires_grad=True)
    node = engine.einsum("ij,jk->ik", e, b).grad_fn
    assert node.name() == "EinsumBackward0"
    assert [f.variable for f, _ in node.next_functions] == [e, b]
    assert node._saved_self is e and node._saved_other is b
    only_e = engine.einsum("ij,jk->ik", e, b.detach()).grad_fn     # e's gradient reads b only
    assert only_e._saved_self is None and only_e._saved_other is not None
    c = engine.randn(3, 2, requires_grad=True)
    three = engine.einsum("ij,jk,kl->il", a, b, c).grad_fn
    kept = dict(three.saved_tensors_info)
    assert sorted(kept) == ["operands#0", "operands#1", "operands#2"]
    assert [kept[f"operands#{k}"].unpack(three) for k in range(3)] == [a, b, c]
    with engine.no_grad():
        assert not engine.einsum("ij,jk->ik", a, b).requires_grad
    d = engine.einsum("ii->i", engine.zeros(0, 0, requires_grad=True))
    assert d.grad_fn.name() == "EinsumBackward0" and d.grad_fn.saved_tensors_info == []
    # one operand, no repeated label: PyTorch's permute then sum
    t = engine.einsum("ijk->kj", engine.randn(2, 3, 4, requires_grad=True))
    assert t.grad_fn.name() == "SumBackward1" and t.grad_fn.next_functions[0][0].name() == "PermuteBackward0"


def test_einsum_of_a_diagonal_is_a_view_as_in_pytorch():
    """PyTorch 2.13: einsum("ii->i", s) is a view of s (a write through it changes s), and a product's
    result is contiguous."""
    s = engine.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    d = engine.einsum("ii->i", s)
    assert d._base is s
    with engine.no_grad():
        d.mul_(10.0)
    assert s.tolist() == [[10.0, 2.0], [3.0, 40.0]] and d.tolist() == [10.0, 40.0]
    y = engine.einsum("ij,jk->ik", engine.randn(5, 6), engine.randn(6, 7))
    assert y.is_contiguous() and tuple(y.stride()) == (7, 1)


def test_einsum_records_one_op_event_with_its_labels():
    a, b, c = engine.randn(2, 3, requires_grad=True), engine.randn(3, 4), engine.randn(4, 1)
    with engine.record() as tr:
        engine.einsum("ij,jk,kl", a, b, c)
    (ev,) = [e for e in tr.of_kind("op") if e["op"] == "einsum"]
    assert ev["node"]["name"] == "EinsumBackward0"
    assert ev["node"]["attrs"]["terms"] == ["ij", "jk", "kl"] and ev["node"]["attrs"]["out"] == "il"
    assert [(s["name"], s["bytes"]) for s in ev["node"]["saved"]] == [("operands#0", 24), ("operands#1", 48),
                                                                     ("operands#2", 16)]


# ---- engine.compile: the formulas trace into a joint graph like every table op's ---------------
IDX = engine.tensor([0, 3, -100])
COMPILED = {
    "prod_with_zeros": lambda x, w, t: (x * t).prod(1).sum() + x.prod(),
    "einsum": lambda x, w, t: engine.einsum("ij,kj->ik", x, w).sum() + engine.einsum("ii", x[:, :3]),
    "bcel_weights": lambda x, w, t: F.binary_cross_entropy_with_logits(x, t, w[0], pos_weight=w[1]),
    "bce": lambda x, w, t: F.binary_cross_entropy(x.sigmoid(), t, reduction="sum"),
    "ce_smoothing_weight": lambda x, w, t: F.cross_entropy(x, IDX, w[0], label_smoothing=0.2),
    "ce_probs": lambda x, w, t: F.cross_entropy(x, t, w[0], label_smoothing=0.1),
}


@pytest.mark.parametrize("name", sorted(COMPILED))
def test_compiled_matches_eager(name):
    import warnings
    rng = np.random.default_rng(4)
    t = engine.tensor((rng.random((3, 4)) > 0.3).astype(np.float64), dtype=D)    # zeros for prod
    w = engine.tensor(rng.uniform(0.5, 2.0, (2, 4)), dtype=D)
    fn = COMPILED[name]
    results = []
    for run in (fn, engine.compile(fn)):
        x = engine.tensor(rng.standard_normal((3, 4)) if not results else results[0][2], dtype=D, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")         # a graph break would warn: the compiled run must compile
            out = run(x, w, t)
        assert (out.grad_fn.name() == "CompiledFunctionBackward") == bool(results)
        out.backward()
        results.append((out.item(), x.grad.numpy(), x.detach().numpy()))
    (eager, g_eager, _), (compiled, g_compiled, _) = results
    np.testing.assert_allclose(compiled, eager, rtol=1e-12)
    np.testing.assert_allclose(g_compiled, g_eager, rtol=1e-12, atol=1e-14)


def exercise_new_ops():
    """One call of every op this file adds to the table (test_ops_grad checks each op is exercised)."""
    for name in FINITE_DIFFERENCES:
        fn, inputs = FINITE_DIFFERENCES[name]
        out = fn(*inputs())
        out.sum().backward()
