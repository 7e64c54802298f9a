"""torch.* for the core's linear algebra rows: matmul, mm, bmm, dot, mv, addmm, outer and einsum
(rows in engine/core/primitives.py and engine/ops/shape/einsum.py)."""
from __future__ import annotations

import builtins
import collections
import numpy as np

from ..backend import dtypes as _dtype, gaps as _backend
from ..core.dispatch import apply
from ..core.operators import add, mul
from ..core.table import OPS as _O
from ..core.tensor import Tensor
from .arithmetic import _short
from .reductions import sum
from .views import permute, squeeze, unsqueeze


def outer(a, b):
    return mul(unsqueeze(a, 1), unsqueeze(b, 0))


def _dtype_check(a, b):
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_cname(a.dtype)} != {_cname(b.dtype)}")


def _cname(dt):
    return {"float32": "float", "float64": "double", "int64": "long int", "bool": "bool"}[dt.name]


def matmul(input, other):
    """Matrix product with PyTorch's rules for 1-D, 2-D and batched operands."""
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        raise TypeError("matmul(): argument 'other' (position 2) must be Tensor")
    if input.device != other.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                           f"{input.device} and {other.device}!")
    _dtype_check(input, other)
    a, b = input.ndim, other.ndim
    if a == 0 or b == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {a}D and {b}D")
    sa, sb = tuple(input.shape), tuple(other.shape)
    if a == 1 and b == 1:
        if sa[0] != sb[0]:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{sa[0]}] and src [{sb[0]}] to have the "
                               f"same number of elements, but got {sa[0]} and {sb[0]} elements respectively")
        return apply(_O["dot"], [input, other])
    if a == 2 and b == 2:
        if sa[1] != sb[0]:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({sa[0]}x{sa[1]} and {sb[0]}x{sb[1]})")
        return apply(_O["mm"], [input, other])
    if a == 2 and b == 1:
        if sa[1] != sb[0]:
            raise RuntimeError(f"size mismatch, got input ({sa[0]}), mat ({sa[0]}x{sa[1]}), vec ({sb[0]})")
        return apply(_O["mv"], [input, other])
    if a == 1:
        out = matmul(unsqueeze(input, 0), other)
        shape = tuple(out.shape[:-2]) + (out.shape[-1],)
        # vector @ matrix: PyTorch's graph reads SqueezeBackward4 -> MmBackward0 -> UnsqueezeBackward0
        return apply(_O["squeeze"], [out], {"shape": shape}, node_name="SqueezeBackward4" if b == 2 else None)
    if b == 1:
        return squeeze(matmul(input, unsqueeze(other, -1)), -1)
    if sa[-1] != sb[-2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{sb[0] if b > 2 else 1}, {sa[-1]}] but got: [{sb[0] if b > 2 else 1}, {sb[-2]}].")
    try:
        np.broadcast_shapes(sa[:-2], sb[:-2])
    except ValueError:
        raise RuntimeError(f"The size of tensor a ({sa[-3]}) must match the size of tensor b ({sb[-3]}) at "
                           "non-singleton dimension 0") from None
    return apply(_O["bmm"], [input, other])


def mm(input, mat2):
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"self must be a matrix" if input.ndim != 2 else "mat2 must be a matrix")
    return matmul(input, mat2)


def bmm(input, mat2):
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if input.ndim != 3 else "batch2 must be a 3D tensor")
    return matmul(input, mat2)


def dot(input, other):
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    return matmul(input, other)


def mv(input, vec):
    return matmul(input, vec)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    _dtype_check(mat1, mat2)
    if mat1._data.shape[1] != mat2._data.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    if beta != 1 or alpha != 1:
        return add(mul(input, beta), mul(mm(mat1, mat2), alpha))
    # the backward forms mat2's gradient in mat2's layout (see _mm_mat2_grad in engine/core/primitives.py)
    attrs = {"mat2_layout": "F"} if _backend.is_column_major(mat2._storage.xp, mat2._data) else None
    return apply(_O["addmm"], [input, mat1, mat2], attrs)


_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def einsum(equation, *operands):
    """Einstein summation, as torch.einsum (``einsum("ij,jk->ik", a, b)`` or with a list of operands).

    Labels left out of an explicit output are summed; without ``->`` the output is ``...``
    then the labels that appear once, in alphabetical order (capitals first). Size-1 dims
    broadcast, ``...`` stands for the dims no label names, and a label repeated in one
    operand takes its diagonal. A single operand without repeats or ``...`` is a permute and
    a sum, as PyTorch's graph shows it; anything else is one EinsumBackward0 node (PyTorch
    shows a chain of permute, view and bmm nodes: see docs/saved-tensors.md).
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
    attrs = {"terms": tuple(terms), "out": out, "sizes": tuple(sizes.items())}
    if len(operands) == 1:
        term = terms[0]
        if len(set(term)) == len(term):
            # PyTorch's order: the output labels, then the summed ones alphabetically (capitals first)
            summed = sorted((c for c in term if c not in out), key=_LETTERS.index)
            perm = tuple(term.index(c) for c in list(out) + summed)
            res = permute(operands[0], perm)
            return sum(res, tuple(range(len(out), len(term)))) if summed else res
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
    terms, sizes, ell_sizes = [], {}, {}
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
