"""``engine.optim.lr_scheduler``: learning-rate schedules, as ``torch.optim.lr_scheduler``.

    scheduler.py    LRScheduler, the base (NOTE [ Chainable learning-rate schedules ])
    decay.py        LambdaLR, MultiplicativeLR, StepLR, MultiStepLR, ConstantLR, LinearLR, ExponentialLR,
                    PolynomialLR
    annealing.py    CosineAnnealingLR, CosineAnnealingWarmRestarts, OneCycleLR
    sequential.py   SequentialLR
    plateau.py      ReduceLROnPlateau
"""
from __future__ import annotations

from ..optimizer import Optimizer  # noqa: F401  (as torch.optim.lr_scheduler.Optimizer)
from .scheduler import (EPOCH_DEPRECATION_WARNING, LRScheduler, _format_param, _LRScheduler, _lrs,  # noqa: F401
                        _ORDER_WARNING)
from .decay import (ConstantLR, ExponentialLR, LambdaLR, LinearLR, MultiplicativeLR, MultiStepLR, PolynomialLR,  # noqa: F401
                    StepLR, _lambdas)
from .annealing import CosineAnnealingLR, CosineAnnealingWarmRestarts, OneCycleLR
from .sequential import SequentialLR
from .plateau import ReduceLROnPlateau

__all__ = ["LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
           "ExponentialLR", "PolynomialLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts", "SequentialLR",
           "ReduceLROnPlateau", "OneCycleLR"]
