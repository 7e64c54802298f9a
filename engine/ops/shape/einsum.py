"""The einsum rows (EinsumBackward0): any number of operands, two, or one (NOTE [ einsum's gradient ]).

The torch.* function is in engine/functions/linalg.py.
"""
from __future__ import annotations

from ...core.table import op


def _full(F, x, term, sizes):
    """``x`` broadcast from its own shape (size-1 dims) to its labels' sizes."""
    shape = tuple(sizes[c] for c in term)
    return x if F.shape(x) == shape else F.broadcast_to(x, shape)


def _einsum_fwd(xp, *arrays, terms, out, sizes):
    from ...backend.gaps import einsum
    sizes = dict(sizes)
    arrays = [a if tuple(a.shape) == tuple(sizes[c] for c in t) else xp.broadcast_to(a, tuple(sizes[c] for c in t))
              for a, t in zip(arrays, terms)]
    return einsum(xp, ",".join(terms) + "->" + out, *arrays)


def _einsum_bwd(F, g, s):
    """NOTE [ einsum's gradient ]
    1. The gradient for operand k is itself an einsum: the incoming gradient (labelled as
       the output) contracted with every other operand, onto operand k's labels.
    2. A label of operand k that appears nowhere else was summed away in the forward, so
       its gradient is the same along it: the einsum leaves it out and the result is
       broadcast along it.
    3. A label repeated within operand k (a diagonal, as in ``ii->i``) gets the gradient on
       the diagonal only: the result is laid out over the full shape and masked to where
       the repeated indices are equal.
    4. Size-1 dims broadcast against other operands (and ``...``) come back summed, by the
       dispatcher, as for any broadcasting op.
    5. So each operand's gradient reads every other operand: with two, ``self`` is kept
       only when ``other`` needs a gradient and the reverse (as mm keeps its operands);
       with three or more, all of them are kept; one operand keeps nothing.
    """
    terms, out, sizes = s.terms, s.out, dict(s.sizes)
    if len(terms) > 2:
        ops = s.operands
        operand = ops.__getitem__
    else:   # two operands keep each other only as needed (rule 5); one keeps nothing
        operand = lambda j: getattr(s, ("self", "other")[j])  # noqa: E731
    grads = []
    for k, term in enumerate(terms):
        if not s.needs[k]:
            grads.append(None)
            continue
        others = [(out, g)] + [(t, _full(F, operand(j), t, sizes)) for j, t in enumerate(terms) if j != k]
        seen = "".join(t for t, _ in others)
        unique = "".join(dict.fromkeys(term))
        kept = "".join(c for c in unique if c in seen)
        gk = F.einsum(",".join(t for t, _ in others) + "->" + kept, *(x for _, x in others))
        if kept != unique:                                            # rule 2
            gk = F.reshape(gk, tuple(sizes[c] if c in kept else 1 for c in unique))
            gk = F.broadcast_to(gk, tuple(sizes[c] for c in unique))
        if unique != term:                                            # rule 3
            first = {}
            for p, c in enumerate(term):
                first.setdefault(c, p)
            nd = len(term)
            gk = F.reshape(gk, tuple(sizes[c] if first[c] == p else 1 for p, c in enumerate(term)))
            gk = F.broadcast_to(gk, tuple(sizes[c] for c in term))
            mask = None
            for p, c in enumerate(term):
                if first[c] != p:
                    m = F.eq(F.iota(sizes[c], first[c], nd, g), F.iota(sizes[c], p, nd, g))
                    mask = m if mask is None else F.logical_and(mask, m)
            gk = F.where(mask, gk, 0.0)
        grads.append(gk)
    return tuple(grads)


op("einsum", "EinsumBackward0", ("*operands",), _einsum_fwd, _einsum_bwd, save={"operands": ()}, promote=False)
op("einsum_two", "EinsumBackward0", ("self", "other"), _einsum_fwd, _einsum_bwd,
   save={"other": ("self",), "self": ("other",)}, promote=False)
# one operand (a diagonal or a broadcast ``...``): the gradient needs no operand values, so none are kept
op("einsum_one", "EinsumBackward0", ("self",), _einsum_fwd, _einsum_bwd, promote=False)
