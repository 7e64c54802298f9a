"""``engine.nn``: modules, parameters and initializers, as ``torch.nn``.

    modules/        the module classes, one family per file (Module, Linear, Conv2d, LSTM, ...)
    functional/     the functions they call, one family per file (``import engine.nn.functional as F``)
    parameter.py    Parameter, Buffer, and the Lazy modules' uninitialized placeholders
    init.py         the initializers (``nn.init.kaiming_uniform_`` ...)
    utils/          clip_grad, parametrizations, rnn packing, stateless, fusion, ...
"""
from . import functional
from . import init
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter
from . import modules
from .modules import *  # noqa: F403  (every module class; engine/nn/modules/__init__.py lists them)
from . import utils
from .functional.teaching import teaching_view  # NOTE [ Teaching view ]
from . import parallel
from .parallel import DataParallel

__all__ = ["Buffer", "Parameter", "UninitializedBuffer", "UninitializedParameter", "functional", "init", "utils",
           "teaching_view", "parallel", "DataParallel",
           *modules.__all__]


def __getattr__(name):
    from ..missing import missing
    raise missing("torch.nn", name)   # NOTE [ Missing names ] in engine/missing.py
