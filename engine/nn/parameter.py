"""``Parameter``: a tensor that a Module registers as one of its learnable weights; ``Buffer``; and
``UninitializedParameter`` and ``UninitializedBuffer``: placeholders of unknown shape that the Lazy
modules hold until their first forward, as ``torch.nn.parameter``'s.

NOTE [ Uninitialized tensors ]
1. One holds an empty tensor (its device and dtype are the ones ``materialize`` will use) and reads
   ``<UninitializedParameter>`` in a repr.
2. ``materialize(shape)`` gives it fresh uninitialized memory of that shape and turns it, in place,
   into the class it stands for (``Parameter`` or ``Tensor``): an optimizer made beforehand holds the
   very object that is trained.
3. Until then any op on it raises PyTorch's ValueError, and ``.shape`` PyTorch's RuntimeError:
   reading its array (the ``_data`` slot) or its shape is what every op does, so those reads raise,
   naming the engine function the user called (``.shape`` read from user code or ``load_state_dict``
   gives the RuntimeError). ``size()``, ``dtype``, ``device``, ``requires_grad``, ``data``,
   ``to``/``cuda``/``cpu``/``float``/``double`` (a buffer's give a placeholder, a parameter's an empty
   Tensor, as PyTorch's), ``detach`` (itself, so ``state_dict`` shows it) and
   ``copy.deepcopy`` work, as in PyTorch.
"""
from __future__ import annotations

import os
import sys

from ..backend.size import Size
from .. import functional as E
from ..core.grad_mode import no_grad
from ..core.tensor import CANNOT_REQUIRE_GRAD, Tensor


class Parameter(Tensor):
    """A leaf tensor that requires grad (by default) and whose storage counts as ``parameter``.

    As in PyTorch, ``Parameter(t)`` shares ``t``'s memory; the storage's category
    becomes ``parameter`` (an event when recording).
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
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


# ---- placeholders of unknown shape (NOTE [ Uninitialized tensors ]) -------------------------------
_RAW = Tensor.__dict__["_data"]          # the slot descriptor the placeholder guards
_ENGINE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_MODULE_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "modules",   # load_state_dict's reads
                          "_state_dict.py")


def _called_function() -> str:
    """The outermost engine function on the stack: the one the user's code called."""
    f = sys._getframe(2)
    name = "an engine function"
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(_ENGINE_DIR):
        if not f.f_code.co_name.startswith("<"):     # an operator's lambda: name the function it calls
            name = f.f_code.co_name
        f = f.f_back
    return name


class UninitializedTensorMixin:
    __slots__ = ()
    cls_to_become: type = Tensor

    def _get_data(self):
        raise self._use_error()

    def _use_error(self):
        return ValueError(f"Attempted to use an uninitialized parameter in {_called_function()}. This error "
                          "happens when you are using a `LazyModule` or explicitly manipulating "
                          f"`torch.nn.parameter.{type(self).__name__}` objects. When using LazyModules Call "
                          "`forward` with a dummy batch to initialize the parameters before calling torch functions")

    _data = property(_get_data, _RAW.__set__)

    def _plain(self):
        t = Tensor._wrap(_RAW.__get__(self), self._storage)
        return t

    @property
    def data(self):
        return self._plain()

    @data.setter
    def data(self, value):
        if isinstance(value, UninitializedTensorMixin):          # Module.to: placeholder into placeholder
            value = value._plain()
        Tensor.data.fset(self, value)

    def _like(self, plain):
        """A placeholder of this class on ``plain``'s device and dtype: what ``to``/``cuda``... give."""
        return type(self)(self.requires_grad, plain.device, plain.dtype)

    def materialize(self, shape, device=None, dtype=None) -> None:
        """NOTE [ Uninitialized tensors ] 2: new memory of ``shape`` and the class it stands for."""
        device = self.device if device is None else device
        dtype = self.dtype if dtype is None else dtype
        self.data = E.empty(tuple(shape) if not isinstance(shape, int) else (shape,), device=device, dtype=dtype)
        is_param = self._is_param
        self.__class__ = self.cls_to_become
        if is_param:
            self._storage.set_base("parameter")

    @property
    def shape(self):
        caller = os.path.abspath(sys._getframe(1).f_code.co_filename)
        if caller.startswith(_ENGINE_DIR) and caller != _MODULE_PY:   # an op reading its input: rule 3
            raise self._use_error()
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually "
                           "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
                           "initialized one. Call `forward` to initialize the parameters before accessing their "
                           "attributes.")

    def size(self, dim=None):
        s = Size(_RAW.__get__(self).shape)
        return s if dim is None else s[dim]

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
                           "initialize the parameters before calling `module.share_memory()`.")

    def detach(self):
        return self

    def to(self, *args, **kwargs):
        return self._like(self._plain().to(*args, **kwargs))

    def cuda(self, *args, **kwargs):
        return self._like(self._plain().cuda(*args, **kwargs))

    def cpu(self):
        return self._like(self._plain().cpu())

    def float(self):
        return self._like(self._plain().float())

    def double(self):
        return self._like(self._plain().double())

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def __repr__(self):
        return f"<{type(self).__name__}>"

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        new = type(self)(self.requires_grad, self.device, self.dtype)
        memo[id(self)] = new
        return new

    def __reduce_ex__(self, proto):
        return (type(self), (self.requires_grad,))


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A ``Parameter`` whose shape is not known yet (a Lazy module's weight before its first forward)."""

    cls_to_become = Parameter

    def _like(self, plain):
        return plain                # PyTorch gives a plain (empty) Tensor here; Module.to sets it as .data

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return Parameter.__new__(cls, E.empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet (a Lazy norm's running statistics before its first forward)."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None):
        data = E.empty(0, device=device, dtype=dtype)
        t = cls._wrap(_RAW.__get__(data), data._storage)
        t.requires_grad = requires_grad
        return t

    def __init__(self, requires_grad=False, device=None, dtype=None):
        pass


def is_lazy(t) -> bool:
    """Whether ``t`` is an uninitialized parameter or buffer."""
    return isinstance(t, UninitializedTensorMixin)
