"""``engine.optim.swa_utils``: weight averaging (SWA and EMA) of a model, as ``torch.optim.swa_utils``.

NOTE [ Averaged models ]
1. ``AveragedModel(model)`` keeps a deep copy of ``model`` in ``.module`` and a step count
   ``n_averaged`` (an int64 buffer). ``update_parameters(model)`` first copies the model's
   parameters in (``n_averaged == 0``), then on later calls folds them into the average.
2. How it folds, as PyTorch: with ``multi_avg_fn`` that function gets lists of tensors
   grouped by (device, dtype); with ``avg_fn`` each averaged tensor is replaced by
   ``avg_fn(averaged, current, n_averaged)``; with neither, CUDA tensors take the
   grouped SWA update (``lerp`` by ``1 / (n + 1)``, a float32 weight under the float32
   default dtype) and CPU tensors the per-tensor form ``a + (c - a) / (n + 1)``. The two
   round differently; both are PyTorch's.
3. Buffers (batch-norm statistics) are copied from the model unless ``use_buffers=True``,
   which averages them with the parameters. Integer buffers then follow PyTorch's tensor
   arithmetic (an SWA average of ``num_batches_tracked`` truncates; the grouped SWA update
   of an integer tensor raises PyTorch's addcdiv error).
4. Every update is an engine op under ``no_grad`` (``lerp_``, ``copy_``...), so a recording
   shows it; the averaged copy's memory is its own parameters and buffers.
"""
from __future__ import annotations

import itertools
import math
import warnings
from copy import deepcopy

from .. import functional as E
from ..core.tensor import Tensor
from ..core.grad_mode import no_grad
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from .lr_scheduler.scheduler import LRScheduler, _format_param

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn",
           "get_swa_avg_fn"]

_ADDCDIV_INT = ("Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform "
                "a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + "
                "value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * "
                "tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: "
                "(input + value * tensor1 / tensor2), for all dtypes.")


def _check_decay(decay) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def _is_float(t: Tensor) -> bool:
    return t.dtype.is_floating_point or t.dtype.is_complex


def get_ema_multi_avg_fn(decay=0.999):
    """``ema = lerp(ema, current, 1 - decay)`` in place over lists of tensors."""
    _check_decay(decay)

    def ema_update(ema_param_list, current_param_list, _):
        with no_grad():
            if _is_float(ema_param_list[0]):
                for a, c in zip(ema_param_list, current_param_list):
                    a.lerp_(c, 1 - decay)
            else:
                for a, c in zip(ema_param_list, current_param_list, strict=True):
                    a.copy_(a * decay + c * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """``avg = lerp(avg, current, 1 / (n + 1))`` in place over lists of tensors (a running mean)."""

    def swa_update(averaged_param_list, current_param_list, num_averaged):
        with no_grad():
            if _is_float(averaged_param_list[0]):
                w = 1 / (num_averaged + 1)          # a Tensor n gives a default-dtype (float32) weight
                w = w.item() if isinstance(w, Tensor) else w
                for a, c in zip(averaged_param_list, current_param_list):
                    a.lerp_(c, w)
            else:
                diffs = [c - a for a, c in zip(averaged_param_list, current_param_list)]
                if isinstance(num_averaged, Tensor):
                    raise RuntimeError(_ADDCDIV_INT)
                for a, df in zip(averaged_param_list, diffs):
                    a.add_(df, alpha=1.0 / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """``decay * ema + (1 - decay) * current``, one tensor at a time (returns the new value)."""
    _check_decay(decay)

    def ema_update(ema_param, current_param, num_averaged):
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """``avg + (current - avg) / (n + 1)``, one tensor at a time (returns the new value)."""

    def swa_update(averaged_param, current_param, num_averaged):
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


def _group_by_device_and_dtype(pairs):
    groups = {}
    for a, c in pairs:
        key = (str(a.device), a.dtype)
        groups.setdefault(key, ([], []))
        groups[key][0].append(a)
        groups[key][1].append(c)
    return groups


class AveragedModel(Module):
    """A running average (SWA by default, or EMA) of a model's weights (NOTE [ Averaged models ])."""

    def __init__(self, model: Module, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", E.tensor(0, dtype=E.long, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current weights into the average (NOTE [ Averaged models ] 1-3)."""
        if self.use_buffers:
            mine = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs = itertools.chain(model.parameters(), model.buffers())
        else:
            mine, theirs = self.parameters(), model.parameters()
        with no_grad():
            pairs = []
            first = bool(self.n_averaged == 0)
            for a, c in zip(mine, theirs):
                c = c.detach().to(a.device)
                pairs.append((a.detach(), c))
                if first:
                    a.detach().copy_(c)
            if self.n_averaged > 0:
                if self.multi_avg_fn is not None or self.avg_fn is None:
                    for (device, _), (avgs, currents) in _group_by_device_and_dtype(pairs).items():
                        n = self.n_averaged.to(device)
                        if self.multi_avg_fn is not None:
                            self.multi_avg_fn(avgs, currents, n)
                        elif device.startswith("cuda"):
                            get_swa_multi_avg_fn()(avgs, currents, n)
                        else:
                            fn = get_swa_avg_fn()
                            for a, c in zip(avgs, currents):
                                a.copy_(fn(a, c, n))
                else:
                    for a, c in pairs:
                        a.copy_(self.avg_fn(a, c, self.n_averaged.to(a.device)))
            if not self.use_buffers:
                for b_avg, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                    b_avg.detach().copy_(b_model.detach().to(b_avg.device))
            self.n_averaged += 1


def update_bn(loader, model: Module, device=None) -> None:
    """Recompute every batch-norm layer's running statistics with one pass over ``loader``
    (cumulative averages: ``momentum=None`` during the pass, restored after); a batch that is
    a list or tuple contributes its first item."""
    with no_grad():
        momenta = {}
        for module in model.modules():
            if isinstance(module, _BatchNorm):
                module.reset_running_stats()
                momenta[module] = module.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
        for module, momentum in momenta.items():
            module.momentum = momentum
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's lr to ``swa_lr`` over ``anneal_epochs`` steps (cosine or linear), then hold it.

    PyTorch's recursive form: each step recovers the lr the schedule started from out of the current
    lr and the previous anneal fraction, then blends it with ``swa_lr`` by the new fraction.
    """

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def _set_anneal_func(self, anneal_strategy) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def get_lr(self):
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                          UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(self.optimizer.param_groups, prev_lrs)]

    def state_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
