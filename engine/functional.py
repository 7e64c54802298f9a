"""The ``torch.*`` function namespace: one face over engine/functions/, where each function is written.

Nothing is defined here but the dtype names; ``import engine as torch`` and ``engine.functional.X``
read the functions through this module, and backward formulas with ``create_graph=True`` call them
through it (``TensorFns``, NOTE rule 5 in engine/core/fns.py). The functions themselves import each
other directly, never this face (docs/architecture.md, "ops/ and functions/").
"""
from __future__ import annotations

import builtins  # noqa: F401
import collections  # noqa: F401
import sys

import numpy as np  # noqa: F401

from . import return_types  # noqa: F401
from .backend import gaps as _backend, dtypes as _dtype  # noqa: F401
from .backend.size import Size  # noqa: F401
from .core import fns as _fns
from .core.dispatch import apply, broadcast_mismatch  # noqa: F401
from .core.inplace import bump_version  # noqa: F401
from .core.operators import _binary, _broadcast_check, _is_bool, _scalar_ok, _shape_str, _t, add, mul, sub  # noqa: F401
from .core.table import OPS, SLOT as _SLOT  # noqa: F401
from .core.tensor import Tensor, _wrap_dim  # noqa: F401
from .ops.nn.conv import Geom  # noqa: F401
# the core's rows (engine/core/primitives.py), then the families (engine/ops/<family>), then factories
from .functions.arithmetic import *  # noqa: F401,F403
from .functions.arithmetic import (_abs, _bound_promote, _bound_type, _cmp, _inplace, _inplace_bound_check,  # noqa: F401
                                   _int_div, _neg, _nondiff, _relu, _rounding, _short, _to_dtype, _type_short,
                                   _unary)
from .functions.reductions import *  # noqa: F401,F403
from .functions.reductions import _all_any, _dims, _grad_enabled, _maxmin, _spread, _spread_attrs  # noqa: F401
from .functions.views import *  # noqa: F401,F403
from .functions.views import _T_DIMS, _infer_shape, _tri  # noqa: F401
from .functions.indexing import *  # noqa: F401,F403
from .functions.indexing import (_check_bounds, _col2im, _coordinate_key, _getitem, _im2col,  # noqa: F401
                                 _index_fill_new, _index_put_add_new, _mask_check, _normalize_index, _setitem,
                                 _setitem_shape_check, _split_basic)
from .functions.matmul import *  # noqa: F401,F403
from .functions.matmul import (_LETTERS, _cname, _dtype_check, _einsum_labels, _einsum_parse,  # noqa: F401
                               _einsum_where)
from .functions.factories import (arange, as_tensor, clone, empty, empty_like, eye, from_numpy, full,  # noqa: F401
                                  full_like, linspace, logspace, ones, ones_like, rand, rand_like, randint, randn,
                                  randn_like, randperm, tensor, zeros, zeros_like)
# the families beyond the core (engine/functions/<family>.py, paired by name with engine/ops/)
from .functions.elementwise import *  # noqa: F401,F403
from .functions.reduce import *  # noqa: F401,F403
from .functions.stats import *  # noqa: F401,F403
from .functions.shape import *  # noqa: F401,F403
from .functions.build import *  # noqa: F401,F403
from .functions.search import *  # noqa: F401,F403
from .functions.index import *  # noqa: F401,F403
from .functions.index_dim import *  # noqa: F401,F403
from .functions.linalg import *  # noqa: F401,F403
from .functions.special import *  # noqa: F401,F403
from .functions.random import *  # noqa: F401,F403
from .functions.tensor_info import *  # noqa: F401,F403
from .functions.complex import *  # noqa: F401,F403  (complex-aware conj, real, imag, angle)
from .functions.windows import *  # noqa: F401,F403
from .functions.factories import asarray, scalar_tensor  # noqa: F401

bool = _dtype.bool_  # noqa: A001
int64 = long = _dtype.int64
int32 = int = _dtype.int32  # noqa: A001
float32 = _dtype.float32
float64 = double = _dtype.float64
float = _dtype.float32  # noqa: A001
uint8 = _dtype.uint8
int8 = _dtype.int8
int16 = short = _dtype.int16
float16 = half = _dtype.float16
bfloat16 = _dtype.bfloat16
complex64 = cfloat = _dtype.complex64
complex128 = cdouble = _dtype.complex128

_O = OPS
_fns.set_tensor_namespace(sys.modules[__name__])   # TensorFns calls these functions (core/fns.py rule 5)

__all__ = [n for n in dir() if not n.startswith("_")]
