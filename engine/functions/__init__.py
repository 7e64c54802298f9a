"""torch.*'s functions, one family per module, paired by name with engine/ops/ (or the core's rows).

A function here checks its arguments the way PyTorch does (dims, keepdim, dtype arguments, PyTorch's
error messages), then runs rows of the op table through ``core.dispatch.apply`` or composes other
torch.* functions, as PyTorch's own C++ composes them.

The core's rows (engine/core/primitives.py) have theirs in five modules, each importing only those
before it: ``arithmetic.py`` (div, pow, comparisons, unary math, clamp, rounding), ``reductions.py``
(sum, mean, var/std, max/min, prod, softmax), ``views.py`` (reshape, permute, expand, cat/stack,
split, flip, tril/triu), ``indexing.py`` (``x[key]``, where, nonzero, narrow, gather, masked_fill),
``matmul.py`` (matmul, mm, bmm, dot, addmm, outer, einsum). The families above them:

- ``elementwise/``  unary, binary and integer-only math, the in-place ``_`` forms (``torch.abs_`` ...);
- ``reduce.py``     scans, nansum/nanmean, median/mode, quantile, cummax/cummin, var_mean/std_mean, renorm;
- ``stats.py``      cov/corrcoef, trapezoid, histogram, histc, bincount;
- ``shape.py``      views, in-place shape changes, the stack family, roll, rot90, tile, tensor_split;
- ``build.py``      diagonal, diag, diagflat, diag_embed, trace, block_diag, kron, meshgrid, cartesian_prod,
                    combinations, tril_indices, triu_indices, unravel_index;
- ``search.py``     sort, argsort, topk, argwhere, isin, searchsorted, bucketize, unique, unique_consecutive;
- ``index.py``      take, index_put, put, masked_scatter, scatter, *_scatter, index_reduce;
- ``index_dim.py``  scatter_add, scatter_reduce, index_add/fill/copy, fill_diagonal_;
- ``linalg.py``     torch.norm, tensordot, the add* products, cross, inner, ger, vdot, cdist, dist;
- ``special.py``    lgamma, digamma, polygamma, mvlgamma, erfinv, sgn;
- ``random.py``     normal, bernoulli, multinomial, poisson, the random in-place fills;
- ``factories.py``  tensor, zeros, arange, randn, ..., clone, asarray, scalar_tensor;
- ``windows.py``    hann, hamming, blackman, bartlett and kaiser windows;
- ``legacy.py``     torch.Tensor(...) and FloatTensor, DoubleTensor, ...;
- ``tensor_info.py`` allclose, equal, detach, numel, is_tensor, is_floating_point, is_nonzero, is_signed,
                    is_complex, is_inference, typename, get_device, data_ptr;
- ``methods.py``    THE table of Tensor methods these families give (one binding per name).

engine.functional gathers them into one namespace (``import engine as torch`` sees them there); the
files here import each other directly, never that face.
"""
