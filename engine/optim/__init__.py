"""``engine.optim``: optimizers and learning-rate schedules, as ``torch.optim``."""
from . import lr_scheduler, swa_utils  # noqa: F401
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "NAdam", "RAdam", "Adamax", "Adadelta",
           "ASGD", "Rprop", "Adafactor", "LBFGS", "lr_scheduler", "swa_utils"]
