"""Op-table rows for ``split``/``chunk`` (SplitBackward0), ``split`` with a list of sizes
(SplitWithSizesBackward0) and ``unbind`` (UnbindBackward0): one node with one view output per
part, run by ``apply_multi(..., views=True)`` (NOTE [ Several outputs ] 4 in core/dispatch.py).
The nodes keep no tensor, only PyTorch's attributes (``_saved_dim``, ``_saved_split_size``,
``_saved_split_sizes``, ``_saved_self_sym_sizes``); backward concatenates the parts' gradients,
zeros standing in for a part that got none.
"""
from __future__ import annotations

from ..derivatives import op


def split_sizes(n: int, split_size: int) -> list:
    """The part lengths ``split(split_size)`` gives along a dim of length ``n``."""
    sizes = [split_size] * (n // split_size) if split_size else []
    if not sizes or n % split_size:
        sizes.append(n - sum(sizes))
    return sizes


def _parts(xp, a, dim, sizes):
    out, start = [], 0
    lead = (slice(None),) * dim
    for n in sizes:
        out.append(a[lead + (slice(start, start + n), Ellipsis)])
        start += n
    return tuple(out)


def _cat_parts(F, g, shape, dim, sizes, squeezed=False):
    """The input's gradient: each part's gradient (zeros where none came) joined along ``dim``."""
    like = next(x for x in g if x is not None)
    parts = []
    for k, n in enumerate(sizes):
        gk = g[k]
        if gk is None:
            sh = list(shape)
            sh[dim] = n
            gk = F.zeros(sh, like)
        elif squeezed:
            gk = F.expand_dims(gk, axis=dim)
        parts.append(gk)
    return (F.concat(parts, dim),)


op("split", "SplitBackward0", ("self",),
   lambda xp, a, split_size, dim, self_sym_sizes: _parts(xp, a, dim, split_sizes(self_sym_sizes[dim], split_size)),
   lambda F, g, s: _cat_parts(F, g, s.self_sym_sizes, s.dim, split_sizes(s.self_sym_sizes[s.dim], s.split_size)),
   promote=False, aux=("multi",))
op("split_with_sizes", "SplitWithSizesBackward0", ("self",),
   lambda xp, a, split_sizes, dim, self_sym_sizes: _parts(xp, a, dim, split_sizes),
   lambda F, g, s: _cat_parts(F, g, s.self_sym_sizes, s.dim, s.split_sizes),
   promote=False, aux=("multi",))
op("unbind", "UnbindBackward0", ("self",),
   lambda xp, a, dim: tuple(a[(slice(None),) * dim + (i, Ellipsis)] for i in range(a.shape[dim])),
   lambda F, g, s: _cat_parts(F, g, s.shapes[0], s.dim, [1] * s.shapes[0][s.dim], squeezed=True),
   promote=False, aux=("multi",))
