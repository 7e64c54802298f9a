"""How torch.einsum runs one or two operands, as PyTorch's at::native::einsum does, so the graph shows
PyTorch's nodes (NOTE [ einsum's lowering ]). engine/functions/matmul.py parses the equation."""
from __future__ import annotations

from ..core.dispatch import apply
from ..core.operators import mul
from ..core.table import OPS as _O
from .build import diagonal
from .composite_reshape import _reshape
from .reductions import sum
from .shape import movedim
from .views import permute, unsqueeze

# NOTE [ einsum's lowering ]
# 1. Every label gets a position: the output's labels in output order, then the summed ones: the
#    dims ``...`` stands for (when the output has no ``...``), then the other labels alphabetically,
#    capitals first.
# 2. Each operand, label by label: an ``...`` covering fewer dims than the widest is unsqueezed there
#    (UnsqueezeBackward0 each); a repeated label takes the diagonal and moves it back in place
#    (DiagonalBackward0, PermuteBackward0); every label it lacks becomes a size-1 dim at the end
#    (UnsqueezeBackward0 each); then one permute puts its dims in the order of rule 1 (PermuteBackward0).
# 3. One operand: the summed dims are summed (SumBackward1).
# 4. Two operands with nothing to sum: their product (MulBackward0). Otherwise PyTorch's
#    sumproduct_pair: dims only one side has are summed first (SumBackward1); when no summed dim is
#    left on both sides, the product is viewed without the summed dims (ViewBackward0 over
#    MulBackward0); else the rest are sorted into batch (both sides), left-only, summed and
#    right-only dims, each side permuted and reshaped to 3-D, bmm'd (BmmBackward0), viewed back,
#    permuted to rule 1's order, and viewed without the summed dims (ViewBackward0 on top).
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def lower(operands, inputs, out, ell):
    """``operands`` (one or two tensors, none empty) with their label lists ``inputs`` (``"..."`` an item),
    the output labels ``out`` and the letters ``ell`` that stand for the ``...`` dims."""
    used = [c for term in inputs for c in term if c != "..."]
    summed = [e for e in ell if e not in out] + sorted({c for c in used if c not in out}, key=_LETTERS.index)
    pos = {c: i for i, c in enumerate(list(out) + summed)}
    permuted = [_align(x, term, pos, ell) for x, term in zip(operands, inputs)]
    n_out = len(out)
    sum_dims = list(range(n_out, len(pos)))
    if len(permuted) == 1:
        return sum(permuted[0], tuple(sum_dims)) if sum_dims else permuted[0]
    return _sumproduct_pair(permuted[0], permuted[1], sum_dims)


def _align(x, term, pos, ell):
    """Rule 2."""
    perm = [-1] * len(pos)
    seen = {}
    ndim0, j = x.ndim, 0
    for c in term:
        if c == "...":
            for _ in range(len(ell) - (ndim0 - (len(term) - 1))):
                x = unsqueeze(x, j)
            for e in ell:
                perm[pos[e]] = j
                j += 1
        elif c in seen:
            d = seen[c]
            x = movedim(diagonal(x, 0, d, j), -1, d)
        else:
            seen[c] = j
            perm[pos[c]] = j
            j += 1
    for k in range(len(perm)):
        if perm[k] == -1:
            x = unsqueeze(x, -1)
            perm[k] = j
            j += 1
    return permute(x, tuple(perm))


def _sumproduct_pair(left, right, sum_dims):
    """Rule 4."""
    if not sum_dims:
        return mul(left, right)
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(left.ndim):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in sum_dims:
            if sl and sr:
                sum_size *= left.shape[i]
            elif sl:
                left = sum(left, i, keepdim=True)
            elif sr:
                right = sum(right, i, keepdim=True)
        elif sl and sr:
            lro.append(i)
            lro_size *= left.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left.shape[i]
        else:
            ro.append(i)
            ro_size *= right.shape[i]
    if sum_size == 1 and not any(i in sum_dims and left.shape[i] != 1 and right.shape[i] != 1
                                 for i in range(left.ndim)):
        prod = mul(left, right)      # nothing left to sum across both: the product, viewed without those dims
        return apply(_O["view"], [prod], {"shape": tuple(n for i, n in enumerate(prod.shape) if i not in sum_dims)})
    out_size = ([left.shape[d] for d in lro] + [left.shape[d] for d in lo] + [1] * len(sum_dims)
                + [right.shape[d] for d in ro])
    operm = [0] * len(out_size)
    for i, d in enumerate(lro + lo + sum_dims + ro):
        operm[d] = i
    a = _reshape(permute(left, tuple(lro + lo + sum_dims + ro)), (lro_size, lo_size, sum_size))
    b = _reshape(permute(right, tuple(lro + sum_dims + ro + lo)), (lro_size, sum_size, ro_size))
    r = apply(_O["bmm"], [a, b])
    r = permute(apply(_O["view"], [r], {"shape": tuple(out_size)}), tuple(operm))
    keep = tuple(n for i, n in enumerate(r.shape) if i not in sum_dims)
    return apply(_O["view"], [r], {"shape": keep})
