"""torch.* for the core's linear algebra rows: matmul, mm, bmm, dot, mv, addmm, outer and einsum (rows in
engine/core/primitives.py, engine/ops/blas.py and engine/ops/shape/einsum.py; NOTE [ matmul's lowering ] below,
and engine/functions/einsum_lowering.py for how einsum runs)."""
from __future__ import annotations

import builtins
import collections

from ..backend import dtypes as _dtype
from ..backend import gaps as _backend
from ..backend.layout import contiguous_format
from ..backend.low_precision import autocast_slot
from ..core.dispatch import apply
from ..core.operators import mul
from ..core.table import OPS as _O
from ..core.tensor import Tensor
from .arithmetic import _short
from .composite_reshape import _numel, _reshape
from .einsum_lowering import lower
from .factories import clone
from .views import squeeze, transpose, unsqueeze
from .views import t as _t


def outer(input, vec2):
    """``input.reshape(-1, 1) * vec2``, as PyTorch composes it (MulBackward0 over ViewBackward0)."""
    for name, v in (("self", input), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v.ndim}-D")
    return mul(_reshape(input, (input.shape[0], 1)), vec2)


def _dtype_check(a, b):
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_cname(a.dtype)} != "
                           f"{_cname(b.dtype)}")


def _cname(dt):
    return {"float32": "float", "float64": "double", "int64": "long int", "int32": "int", "bool": "bool"}.get(
        dt.name, dt.name)


# NOTE [ matmul's lowering ]
# torch.matmul is no op of its own: it reads its operands' ranks and calls mm, mv, dot or bmm, so the
# graph a learner sees is the graph of those calls (PyTorch's _matmul_impl, step for step):
# 1. 1-D @ 1-D is dot, 2-D @ 1-D is mv, 2-D @ 2-D is mm, and 1-D @ 2-D is
#    ``a.unsqueeze(0).mm(b).squeeze_(0)`` (SqueezeBackward4 over MmBackward0).
# 2. Fold: when one operand has 3 or more dims and the other 1 or 2, and the smaller one requires
#    grad (or the larger one's batch dims flatten without a copy, and the smaller is not a matrix on
#    the left), the larger is flattened to a matrix (``t1.reshape(-1, k)``), multiplied with mm or mv,
#    and read back with ``_unsafe_view`` (UnsafeViewBackward0). With the larger operand on the right
#    (2-D @ 3-D) the roles swap through ``mT``, and the result is transposed back and made contiguous
#    (CloneBackward0 over TransposeBackward0, or TransposeBackward0 alone when already contiguous).
# 3. Otherwise both operands are expanded to the broadcast batch shape, reshaped to 3-D, multiplied
#    with bmm and read back with ``_unsafe_view``; a 1-D right operand is unsqueezed first and the
#    product squeezed (SqueezeBackward1) before the view.
# 4. reshape is PyTorch's (engine/functions/composite_reshape.py): a contiguous input gives ViewBackward0,
#    one that views without a copy ReshapeAliasBackward0, any other is cloned and viewed (UnsafeViewBackward0
#    over CloneBackward0).
def _unsafe_view(x, shape):
    return apply(_O["unsafe_view"], [x], {"shape": tuple(shape)})


def _mT(x):
    return transpose(x, -2, -1)


def _mm(a, b):
    sa, sb = tuple(a.shape), tuple(b.shape)
    if sa[1] != sb[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({sa[0]}x{sa[1]} and {sb[0]}x{sb[1]})")
    _dtype_check(a, b)
    if a.dtype is _dtype.bool_:
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    return apply(_O["mm"], [a, b])


def _mv(m, v):
    sm, sv = tuple(m.shape), tuple(v.shape)
    if sm[1] != sv[0]:
        raise RuntimeError(f"size mismatch, got input ({sm[0]}), mat ({sm[0]}x{sm[1]}), vec ({sv[0]})")
    if m.dtype is not v.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_short(v.dtype)}, "
                           f"{_short(m.dtype)}, and {_short(v.dtype)}")
    if m.dtype is _dtype.bool_:
        raise NotImplementedError("\"addmv_impl_cpu\" not implemented for 'Bool'")
    return apply(_O["mv"], [m, v])


def _dot(a, b):
    if a.dtype is not b.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {_short(a.dtype)} and "
                           f"{_short(b.dtype)}")
    if a.dtype is _dtype.bool_:
        raise NotImplementedError("\"dot\" not implemented for 'Bool'")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to have "
                           f"the same number of elements, but got {a.shape[0]} and {b.shape[0]} elements respectively")
    return apply(_O["dot"], [a, b])


def _bmm(a, b):
    sa, sb = tuple(a.shape), tuple(b.shape)
    if sb[0] != sa[0] or sb[1] != sa[2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{sa[0]}, {sa[2]}] but "
                           f"got: [{sb[0]}, {sb[1]}].")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected scalar type {_short(a.dtype)} but found {_short(b.dtype)}")
    if a.dtype is _dtype.bool_:
        raise NotImplementedError("\"bmm\" not implemented for 'Bool'")
    return apply(_O["bmm"], [a, b])


def _should_fold(t1, t2):
    """NOTE [ matmul's lowering ] 2: whether ``t1 @ t2`` folds the larger operand into a matrix."""
    larger_first = t1.ndim >= t2.ndim
    big_shape = tuple(t1.shape) if larger_first else tuple(t2.shape[:-2]) + (t2.shape[-1], t2.shape[-2])
    small = t2 if larger_first else t1
    if not (len(big_shape) >= 3 and small.ndim <= 2):
        return False
    if small.requires_grad:
        return True
    if t1.ndim == 2:
        return False
    if _numel(big_shape) == 0:
        return True
    st = t1.stride() if larger_first else _swap_last(t2.stride())
    return all(st[i] == st[i + 1] * big_shape[i + 1] for i in range(len(big_shape) - 2))


def _swap_last(st):
    st = list(st)
    st[-1], st[-2] = st[-2], st[-1]
    return tuple(st)


def matmul(input, other):
    """Matrix product with PyTorch's rules for 1-D, 2-D and batched operands (NOTE [ matmul's lowering ])."""
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        raise TypeError("matmul(): argument 'other' (position 2) must be Tensor")
    if input.is_sparse:       # a COO tensor: engine.sparse's product (NOTE [ A sparse COO tensor ] 5)
        return input.mm(other)
    if input.device != other.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                           f"{input.device} and {other.device}!")
    a, b = input.ndim, other.ndim
    if a == 0 or b == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {a}D and {b}D")
    if autocast_slot.cast is not None:      # NOTE [ Mixed precision ] 4 (engine/amp)
        input, other = autocast_slot.cast("matmul", [input, other])
    if a == 1 and b == 1:
        return _dot(input, other)
    if a == 2 and b == 1:
        return _mv(input, other)
    if a == 1 and b == 2:
        out = _mm(unsqueeze(input, 0), other)
        return apply(_O["squeeze"], [out], {"shape": (out.shape[1],)}, node_name="SqueezeBackward4")
    if a == 2 and b == 2:
        return _mm(input, other)
    if _should_fold(input, other):
        swap = b > a
        t1 = _mT(other) if swap else input
        t2 = (_t(input) if a == 2 else input) if swap else other
        out_shape = tuple(t1.shape[:-1])
        folded = _reshape(t1, (_numel(out_shape), t1.shape[-1]))
        if t2.ndim == 2:
            out = _unsafe_view(_mm(folded, t2), out_shape + (t2.shape[1],))
            if not swap:
                return out
            out = _mT(out)
            return out if out.is_contiguous() else clone(out, memory_format=contiguous_format)
        return _unsafe_view(_mv(folded, t2), out_shape)
    return _batched(input, other)


def _batched(input, other):
    """NOTE [ matmul's lowering ] 3."""
    a, b = input.ndim, other.ndim
    sa, sb = tuple(input.shape), tuple(other.shape)
    n = sa[-2] if a > 1 else 1
    m1 = sa[-1]
    m2 = sb[-2] if b > 1 else sb[0]
    p = sb[-1] if b > 1 else 1
    batch = _broadcast_batch(sa[:max(a - 2, 0)], sb[:max(b - 2, 0)])
    nb = _numel(batch)
    x = unsqueeze(input, 0) if a == 1 else input
    y = unsqueeze(other, -1) if b == 1 else other
    x = _reshape(_expand(x, batch + (n, m1)), (nb, n, m1))
    y = _reshape(_expand(y, batch + (m2, p)), (nb, m2, p))
    out = _bmm(x, y)
    if b == 1:
        out = squeeze(out, -1)
    return _unsafe_view(out, batch + ((n,) if a > 1 else ()) + ((p,) if b > 1 else ()))


def _expand(x, shape):
    return apply(_O["expand"], [x], {"shape": tuple(shape)})


def _broadcast_batch(sa, sb):
    """The broadcast batch shape, with PyTorch's message when the batch dims do not broadcast."""
    nd = max(len(sa), len(sb))
    pa, pb = (1,) * (nd - len(sa)) + tuple(sa), (1,) * (nd - len(sb)) + tuple(sb)
    for i in reversed(range(nd)):
        if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1:
            raise RuntimeError(f"The size of tensor a ({pa[i]}) must match the size of tensor b ({pb[i]}) at "
                               f"non-singleton dimension {i}")
    return tuple(max(x, y) for x, y in zip(pa, pb))


def mm(input, mat2):
    if input.is_sparse:       # a COO tensor: engine.sparse's product (NOTE [ A sparse COO tensor ] 5)
        return input.mm(mat2)
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError("self must be a matrix" if input.ndim != 2 else "mat2 must be a matrix")
    return _mm(input, mat2)


def bmm(input, mat2):
    """Batched mm of two 3-D tensors with one batch size: no broadcasting, as PyTorch."""
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if input.ndim != 3 else "batch2 must be a 3D tensor")
    return _bmm(input, mat2)


def dot(input, other):
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    return _dot(input, other)


def mv(input, vec):
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    return _mv(input, vec)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)``: one AddmmBackward0 node, as PyTorch's."""
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if m.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {m.ndim}-D tensor")
    if mat1.dtype is not mat2.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_short(mat1.dtype)} and "
                           f"{_short(mat2.dtype)}")
    if input.dtype is not mat2.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_short(input.dtype)} and "
                           f"{_short(mat2.dtype)}")
    if mat1._data.shape[1] != mat2._data.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    _expand_check(input, (mat1.shape[0], mat2.shape[1]))
    if mat1.dtype is _dtype.bool_:
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    if beta != 1 or alpha != 1:
        return apply(_O["addmm_scaled"], [input, mat1, mat2], {"beta": beta, "alpha": alpha})
    # the backward forms mat2's gradient in mat2's layout (see _mm_mat2_grad in engine/core/primitives.py)
    attrs = {"mat2_layout": "F"} if _backend.is_column_major(mat2._storage.xp, mat2._data) else None
    return apply(_O["addmm"], [input, mat1, mat2], attrs)


def _expand_check(input, target):
    """PyTorch's expand errors when ``input`` does not broadcast to ``target``."""
    shape = tuple(input.shape)
    if len(shape) > len(target):
        raise RuntimeError(f"expand({input.type()}{{{list(shape)}}}, size={list(target)}): the number of sizes "
                           f"provided ({len(target)}) must be greater or equal to the number of dimensions in the "
                           f"tensor ({len(shape)})")
    lead = len(target) - len(shape)
    for k, s in enumerate(shape):
        if s != 1 and s != target[k + lead]:
            raise RuntimeError(f"The expanded size of the tensor ({target[k + lead]}) must match the existing size "
                               f"({s}) at non-singleton dimension {k + lead}.  Target sizes: {list(target)}.  "
                               f"Tensor sizes: {list(shape)}")


_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def einsum(equation, *operands):
    """Einstein summation, as torch.einsum (``einsum("ij,jk->ik", a, b)`` or with a list of operands).

    Labels left out of an explicit output are summed; without ``->`` the output is ``...``
    then the labels that appear once, in alphabetical order (capitals first). Size-1 dims
    broadcast, ``...`` stands for the dims no label names, and a label repeated in one
    operand takes its diagonal. One or two non-empty operands run as PyTorch runs them, so the
    graph shows PyTorch's permute, view, bmm, mul and sum nodes (NOTE [ einsum's lowering ]);
    three or more, or an empty operand, are one EinsumBackward0 node (see docs/saved-tensors.md).
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    for k, t in enumerate(operands):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {k} in argument 1, but got {type(t).__name__}")
    inputs, output = _einsum_parse(equation, len(operands))
    terms, out, sizes = _einsum_labels(inputs, output, operands)
    if len(operands) > 1:
        for t in operands[1:]:
            if t.dtype is not operands[0].dtype:
                raise RuntimeError(f"expected scalar type {_short(operands[0].dtype)} but found {_short(t.dtype)}")
        if operands[0].dtype is _dtype.bool_:
            raise NotImplementedError("\"bmm\" not implemented for 'Bool'")
    if len(operands) <= 2 and all(t.numel() for t in operands):
        labels = {c for t in inputs for c in t}
        ell = sorted({c for t in terms for c in t if c not in labels}, key=_LETTERS.index)
        return lower(operands, inputs, out, ell)      # NOTE [ einsum's lowering ]
    attrs = {"terms": tuple(terms), "out": out, "sizes": tuple(sizes.items())}
    if len(operands) == 1:
        return apply(_O["einsum_one"], [operands[0]], attrs)
    return apply(_O["einsum_two" if len(operands) == 2 else "einsum"], list(operands), attrs)


def _einsum_parse(equation, n_operands):
    """Split ``equation`` into per-operand label lists and the output's (None when implicit);
    ``...`` becomes the item ``"..."``. PyTorch's errors for malformed equations."""
    arrow = equation.find("->")
    lhs, rhs = (equation, None) if arrow < 0 else (equation[:arrow], equation[arrow + 2:])

    def scan(text, offset, is_output):
        terms, cur, i = [], [], 0
        while i < len(text):
            ch = text[i]
            if ch == ".":
                if "..." in cur:
                    raise RuntimeError(f"einsum(): found '.' for {_einsum_where(is_output, len(terms))} for which an "
                                       "ellipsis was already found")
                if text[i:i + 3] != "...":
                    raise RuntimeError(f"einsum(): found '.' for {_einsum_where(is_output, len(terms))} that is not "
                                       "part of any ellipsis" + (" (...)" if is_output else ""))
                cur.append("...")
                i += 3
                continue
            if ch == "," and not is_output:
                terms.append(cur)
                cur = []
            elif ch.isascii() and ch.isalpha():
                cur.append(ch)
            elif ch != " ":
                raise RuntimeError(f"einsum(): invalid subscript given at index {offset + i} in the equation string, "
                                   "subscripts must be in [a-zA-Z]")
            i += 1
        terms.append(cur)
        return terms

    inputs = scan(lhs, 0, False)
    output = scan(rhs, arrow + 2, True)[0] if rhs is not None else None
    if len(inputs) > n_operands:
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(inputs) < n_operands:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    return inputs, output


def _einsum_where(is_output, k):
    return "output" if is_output else f"operand {k}"


def _einsum_labels(inputs, output, operands):
    """Explicit one-letter labels for every dim (``...`` becomes unused letters, right-aligned),
    the output's labels, and each label's size after broadcasting size-1 dims."""
    used = {c for t in inputs for c in t if c != "..."}
    ell_dims = 0
    for k, (t, x) in enumerate(zip(inputs, operands)):
        n = len(t) - ("..." in t)
        if "..." not in t and n != x.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) does not match the number "
                               f"of dimensions ({x.ndim}) for operand {k} and no ellipsis was given")
        if "..." in t and n > x.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) is more than the number "
                               f"of dimensions ({x.ndim}) for operand {k}")
        if "..." in t:
            ell_dims = builtins.max(ell_dims, x.ndim - n)
    spare = [c for c in _LETTERS if c not in used]
    if ell_dims > len(spare):
        raise RuntimeError("einsum(): too many dimensions for the letters left to label them")
    ell = spare[:ell_dims]
    terms, sizes = [], {}
    for k, (t, x) in enumerate(zip(inputs, operands)):
        labels = []
        for c in t:
            labels.extend(ell[ell_dims - (x.ndim - (len(t) - 1)):] if c == "..." else [c])
        seen_here = {}
        for c, size in zip(labels, x.shape):
            if c in seen_here:
                if size != seen_here[c]:
                    raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {k} but the sizes don't "
                                       f"match, {size} != {seen_here[c]}")
                continue
            seen_here[c] = size
            prev = sizes.get(c)
            if prev is None or prev == 1:
                sizes[c] = size
            elif size != 1 and size != prev:
                if c in ell:
                    raise RuntimeError(f"einsum(): dimension {ell.index(c)} covered by ellipsis in operand {k}has "
                                       f"size {size} which does not broadcast with previously seen ellipsis with "
                                       f"size {prev} for the respective dimension")
                raise RuntimeError(f"einsum(): subscript {c} has size {size} for operand {k} which does not "
                                   f"broadcast with previously seen size {prev}")
        terms.append("".join(labels))
    if output is None:
        counts = collections.Counter(c for t in inputs for c in t if c != "...")
        out = "".join(ell) + "".join(sorted((c for c, n in counts.items() if n == 1), key=_LETTERS.index))
    else:
        out_labels = []
        for c in output:
            if c == "...":
                out_labels.extend(ell)
                continue
            if c in out_labels:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the output")
            if c not in used:
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any input "
                                   "operand")
            out_labels.append(c)
        out = "".join(out_labels)
    return terms, out, sizes


__all__ = ["outer", "matmul", "mm", "bmm", "dot", "mv", "addmm", "einsum"]
