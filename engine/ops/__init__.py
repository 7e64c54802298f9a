"""The op table's rows beyond the core, by family; importing this package registers them all.

``engine/core/table.py`` is the schema and ``engine/core/primitives.py`` the rows the core needs; every
other row lives here, beside its kernel, one family per module (paired by name with
``engine/functions/``):

- ``elementwise/``  more unary and binary math, rounding, modulo, comparisons in place, bitwise;
- ``special/``      erfinv, the gamma family, erfc/i0/i1/ndtri/log_ndtr/xlog1py;
- ``reduce/``       prod, nansum, median/mode, var_mean/std_mean, scans, norms and distances;
- ``shape/``        views and copies, index reads and writes, index along a dim, einsum;
- ``linalg.py``     torch.linalg's rows; ``blas.py`` the add* products, vdot and cross;
- ``random.py``     the draws that keep a graph (normal, bernoulli, poisson);
- ``nn/``           convolution, pooling, normalisation, activations, losses, padding, upsampling,
                    sampling, embeddings, dropout, ctc, pdist, shuffles, bilinear, weight norm, packing.

This is the one registry: the families are imported here, in this fixed order, and nowhere else needs
to import a family for its rows to exist. A row imports only the core, the backend and the memory
layer (never engine/functions/ or anything above it).
"""
from __future__ import annotations

from ..core import primitives  # noqa: F401  (the core's rows come first)
from . import elementwise, special, reduce, shape, linalg, blas, random, nn  # noqa: F401
from . import complex  # noqa: F401  (after the rows it gives complex gradients and errors)
from . import layout  # noqa: F401  (last: it sets the layout rule of rows above; NOTE [ Output layout ])
from ..core.dispatch import OP_TYPES
from ..core.table import OPS

for _row in OPS.values():     # every row's node class made now, not inside the first op that needs it
    if _row.node:              # (NOTE [ Node types ] 1 in engine/core/graph.py)
        OP_TYPES[_row.node]
