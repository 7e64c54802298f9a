"""``Parameter``: a tensor that a Module registers as one of its learnable weights."""
from __future__ import annotations

from ..core.tensor import CANNOT_REQUIRE_GRAD, Tensor


class Parameter(Tensor):
    """A leaf tensor that requires grad (by default) and whose storage counts as ``parameter``.

    As in PyTorch, ``Parameter(t)`` shares ``t``'s memory; the storage's category
    becomes ``parameter`` (an event when recording).
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from .. import functional as E
            data = E.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): expected a Tensor as data, but got {type(data).__name__}")
        if requires_grad and not data.dtype.is_floating_point:
            raise RuntimeError(CANNOT_REQUIRE_GRAD)
        p = cls._wrap(data._data, data._storage)
        p._is_param = True
        p._storage.set_base("parameter")
        if requires_grad:
            p.requires_grad = True
        return p

    def __init__(self, data=None, requires_grad=True):
        pass  # everything happens in __new__ (Tensor.__init__ refuses direct construction)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        from ..core.grad_mode import no_grad
        with no_grad():
            data = self.detach().clone()
        p = Parameter(data, self._requires_grad)
        memo[id(self)] = p
        return p

    def __reduce_ex__(self, proto):
        raise TypeError("pickling glassgrad parameters is not supported; save model.state_dict() with engine.save")


class Buffer:
    """``nn.Buffer(t)``: marks a tensor to be registered as a buffer when assigned to a Module."""

    def __init__(self, data, persistent=True):
        self.data = data
        self.persistent = persistent


from .uninitialized import (UninitializedBuffer, UninitializedParameter, UninitializedTensorMixin,  # noqa: E402
                            is_lazy)
