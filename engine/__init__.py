"""glassgrad's engine: PyTorch's API on NumPy (CPU) and CuPy (CUDA), recording as it runs.

``import engine as torch`` runs small PyTorch programs unchanged.
"""
from __future__ import annotations

import warnings as _warnings

# NumPy reports inf/nan arithmetic (log(0), x/0) as RuntimeWarnings from the engine's kernels and
# formulas; PyTorch computes the same inf/nan silently, and so does glassgrad.
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"engine\.")

from .memory import malloc as _malloc
_malloc.tune()  # NOTE [ Host allocator tuning ]
from .backend import dtypes as _dtype
from .backend.device import device, get_default_device, set_default_device
from .backend.dtypes import dtype, get_default_dtype, promote_types, set_default_dtype
from .backend.size import Size
from .backend.layout import channels_last, channels_last_3d, contiguous_format, memory_format, preserve_format
from .core.tensor import Tensor
from . import printing as _printing  # noqa: F401  (binds repr and deepcopy on Tensor)
from .functions.legacy import BFloat16Tensor, BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor, IntTensor, LongTensor, ShortTensor  # noqa: F401
from .backend.print_options import set_printoptions
from .backend.dtype_info import can_cast, finfo, iinfo, result_type
from . import ops as _ops  # noqa: F401  (the op table's rows, every family: OPS is full from here on)
from . import _tensor_methods  # noqa: F401  (binds methods and operators)
from .functional import *  # noqa: F401,F403
from .functional import (abs, all, any, bool, double, float, float32, float64, int64, long, max,  # noqa: A004
                         min, pow, round, sum)
from . import autograd
from .autograd import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
                       set_grad_enabled)
from . import random
from .random import Generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state
from . import linalg
from .linalg import det, inverse, logdet, pinverse  # noqa: F401
from .linalg import torch_slogdet as slogdet  # noqa: F401
from . import nn
from .nn.functional.activation import (celu, celu_, clamp_max_, clamp_min_, hardshrink, prelu,  # noqa: F401
                                       relu_, rrelu, rrelu_, selu, selu_, threshold, threshold_)
from .nn.utils.weight_norm import _weight_norm, _weight_norm_interface, norm_except_dim  # noqa: F401
from .nn.functional import pdist  # noqa: F401  (torch.pdist is F.pdist)
from . import optim
from . import cuda
from .memory.oom import OutOfMemoryError  # noqa: F401  (torch.OutOfMemoryError is torch.cuda.OutOfMemoryError)
from . import accelerator
from . import utils
from . import memory
from . import backends
from . import special
from . import sparse
from .sparse import layout, sparse_coo, strided  # noqa: F401  (torch.layout and its values)
from .sparse.ops import sparse_coo_tensor, spmm  # noqa: F401
from .special import erfc, exp2, i0  # noqa: F401  (torch.erfc, torch.exp2, torch.i0)
from . import amp, cpu  # noqa: F401
from .amp.autocast_mode import (autocast, autocast_decrement_nesting, autocast_increment_nesting,  # noqa: F401
                                clear_autocast_cache, get_autocast_cpu_dtype, get_autocast_dtype,
                                get_autocast_gpu_dtype, is_autocast_available, is_autocast_cache_enabled,
                                is_autocast_cpu_enabled, is_autocast_enabled, set_autocast_cache_enabled,
                                set_autocast_dtype, set_autocast_enabled)
from .backend.settings import are_deterministic_algorithms_enabled, get_float32_matmul_precision, get_num_threads, is_deterministic_algorithms_warn_only_enabled, set_float32_matmul_precision, set_num_threads, use_deterministic_algorithms

from . import out_args as _out_args
for _name in _out_args.NAMES:                        # NOTE [ out= arguments ]: only the torch.* face
    if _name in globals():
        globals()[_name] = _out_args.with_out(globals()[_name], _name)
del _name

__version__ = "0.1.0"

from .backend.dtypes import LACKING as _dtype_lacking, missing_dtype as _missing_dtype  # noqa: E402


def _lazy(name):
    import importlib
    return importlib.import_module(f"engine.{name}")


def __getattr__(name):
    # heavier subsystems load on first use: engine.record/Trace, engine.save/load, engine.hub, engine.compile
    if name in ("record", "Trace"):
        return getattr(_lazy("trace"), name)
    if name == "trace":
        return _lazy("trace")   # the module, callable as torch.trace (NOTE [ engine.trace is also torch.trace ])
    if name in ("save", "load"):
        return getattr(_lazy("serialization"), name)
    if name == "hub":
        return _lazy("hub")
    if name in ("distributions", "distributed", "onnx", "serialization"):
        return _lazy(name)
    if name == "compile":
        return _lazy("compiler").compile
    if name in _dtype_lacking:
        raise _missing_dtype(name)
    from .missing import missing
    raise missing("torch", name)   # NOTE [ Missing names ] in engine/missing.py
