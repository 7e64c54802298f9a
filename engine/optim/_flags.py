"""What the newer optimizers share: PyTorch's checks of ``lr`` and of the ``capturable`` and
``differentiable`` flags, and scalar state tensors.

NOTE [ Optimizer flags glassgrad accepts ]
1. ``foreach`` is accepted and changes nothing: glassgrad's one update per parameter gives
   the values PyTorch's single-tensor loop gives, which is what its foreach loop gives too.
2. ``capturable=True`` (CUDA graphs) needs the parameters on an accelerator; on the CPU
   PyTorch's step raises ``AssertionError("If capturable=True, ... must be on supported
   devices: [...]")`` and so does glassgrad's. On CUDA the update is the same formula.
3. ``differentiable=True`` asks for the step to join the autograd graph. PyTorch's step then
   writes into leaf parameters under grad mode and raises "a leaf Variable that requires
   grad is being used in an in-place operation."; glassgrad raises the same error (it
   optimizes only leaves and never builds a graph through a step).
4. A tensor ``lr`` must hold one element (PyTorch's "Tensor lr must be 1-element") and is
   read as a Python float at each step.
"""
from __future__ import annotations

from ..core.tensor import Tensor

#: PyTorch's ``_get_capturable_supported_devices()`` as its messages print it.
CAPTURABLE_DEVICES = "['cuda', 'xpu', 'hpu', 'privateuseone', 'xla']"


def check_lr(lr) -> None:
    """PyTorch's first two constructor checks (NOTE [ Optimizer flags glassgrad accepts ] 4)."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def check_adam_args(lr, eps, betas, weight_decay, check_learning_rate=True) -> None:
    """The Adam family's constructor checks, in PyTorch's order and words."""
    if check_learning_rate:
        check_lr(lr)
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def lr_value(group) -> float:
    lr = group["lr"]
    return float(lr.item()) if isinstance(lr, Tensor) else lr


def check_flags(group, params, what: str = "params and state_steps", devices: str = CAPTURABLE_DEVICES) -> None:
    """Raise what PyTorch raises for ``capturable``/``differentiable`` (NOTE [ Optimizer flags glassgrad
    accepts ] 2-3); ``params`` are the group's parameters that have a gradient."""
    if group.get("capturable") and any(p.device.type != "cuda" for p in params):
        raise AssertionError(f"If capturable=True, {what} must be on supported devices: {devices}.")
    if group.get("differentiable") and any(p.requires_grad for p in params):
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


def scalar_state(opt, p, value: float) -> Tensor:
    """A scalar state tensor like ``step`` (float32, float64 under a float64 default) holding ``value``."""
    t = opt._step_tensor(p)
    t._data[...] = value
    return t


def set_scalar(t: Tensor, value) -> float:
    """``t.copy_(value)`` for a scalar state tensor; returns the stored (rounded) value."""
    t._data[...] = value
    t._storage.version += 1
    return float(t._data)
