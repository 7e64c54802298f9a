"""Weight normalization: ``norm_except_dim``, ``_weight_norm`` (NOTE [ Weight norm ] in
engine/ops/nn/weight_norm.py) and the legacy hook form ``weight_norm``/``remove_weight_norm``, as
``torch.nn.utils.weight_norm`` (deprecated there in favour of ``parametrizations.weight_norm``)."""
from __future__ import annotations

import warnings

from ... import functional as E
from ...core.dispatch import apply
from ...core.table import OPS
from ..parameter import Parameter, UninitializedParameter


def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm of ``v`` over every dim but ``dim``, shaped 1 everywhere but ``dim``
    (``dim=-1``: the norm of the whole tensor)."""
    if dim == -1:
        return _norm(v, pow, None, "NormBackward0")
    nd = v.ndim
    if dim == 0:
        return _norm(v.contiguous().view(v.shape[0], -1), pow, 1).view(v.shape[0], *([1] * (nd - 1)))
    if dim == nd - 1:
        return _norm(v.contiguous().view(-1, v.shape[-1]), pow, 0).view(*([1] * (nd - 1)), v.shape[-1])
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def _norm(x, p, dim, node="NormBackward1"):
    """``x.norm(p, dim)`` as the Tensor method records it (NormBackward0/1, not LinalgVectorNormBackward0)."""
    if p not in (2, 2.0):
        return E.norm(x, p, dim)
    return apply(OPS["norm"], [x], {"dim": None if dim is None else (dim,), "keepdim": False}, node_name=node)


def _weight_norm_interface(v, g, dim=0):
    """``(v * g / ||v||, ||v||)`` with the norm over every dim but ``dim`` (the fused kernel)."""
    d = dim + v.ndim if dim < 0 else dim
    w, aux = apply(OPS["weight_norm_interface"], [v.contiguous(), g.contiguous()], {"dim": d}, return_aux=True)
    return w, aux["result1"]


def _weight_norm(v, g, dim=0):
    """``v * (g / norm_except_dim(v, 2, dim))``: fused when ``dim`` is the first or last dim, as PyTorch."""
    if v.device != g.device:
        raise RuntimeError(f"weight_norm: expected v_in and g_in to be on the same device, but v_in is on "
                           f"{v.device} and g_in is on {g.device}")
    if dim == 0 or dim == v.ndim - 1:
        return _weight_norm_interface(v, g, dim)[0]
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_g`` and ``<name>_v``."""

    def __init__(self, name: str, dim: int):
        if dim is None:
            dim = -1
        self.name = name
        self.dim = dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name: str, dim: int):
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        if dim is None:
            dim = -1
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `WeightNorm` can't have uninitialized parameters. Make sure to "
                             "run the dummy forward before applying weight normalization")
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, dim).detach().clone()))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name: str = "weight", dim: int = 0):
    """Replace ``module.<name>`` by ``g * v / ||v||`` with new parameters ``<name>_g`` (the norms,
    over every dim but ``dim``) and ``<name>_v``, recomputed by a forward pre-hook. Deprecated:
    warns ``FutureWarning`` as PyTorch does."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name: str = "weight"):
    """Fold ``<name>_g`` and ``<name>_v`` back into one parameter ``<name>``."""
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")


__all__ = ["norm_except_dim", "weight_norm", "remove_weight_norm", "WeightNorm"]
