"""``engine.optim``: optimizers and learning-rate schedules, as ``torch.optim``."""
from . import lr_scheduler  # noqa: F401
from .adam import Adam
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "lr_scheduler"]
