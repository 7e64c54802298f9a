"""``parameters_to_vector`` and ``vector_to_parameters``."""
from __future__ import annotations

from ... import functional as E
from ...core.tensor import Tensor
from ..modules.module import _typename
from ..parameter import Parameter


def _check_device(param, first) -> object:
    if first is None:
        return param.device
    if param.device != first:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return first


def parameters_to_vector(parameters) -> Tensor:
    """One 1-D tensor: every parameter flattened, concatenated in order (a copy, in the graph)."""
    device, flat = None, []
    for p in parameters:
        device = _check_device(p, device)
        flat.append(p.view(-1))
    return E.cat(flat)


def vector_to_parameters(vec, parameters) -> None:
    """Point each parameter's ``.data`` at its slice of ``vec``, as PyTorch does: afterwards the
    parameters share ``vec``'s memory, whose storage is then counted as ``parameter``."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    device, start, any_param = None, 0, False
    for p in parameters:
        device = _check_device(p, device)
        n = p.numel()
        p.data = vec[start:start + n].view_as(p).data
        start += n
        any_param = any_param or isinstance(p, Parameter)
    if any_param:
        vec._storage.set_base("parameter")
