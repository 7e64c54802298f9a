"""Graph nodes (``grad_fn``), saved tensors and saved-tensor hooks.

NOTE [ Saved tensors ]
1. A node saves a tensor through :class:`SavedTensor`. An input is kept by reference
   (its history stays reachable for create_graph); an output of the node itself is
   kept as its storage and array only, so no cycle node -> output -> node forms.
2. Saving bumps the storage's saved count (its bytes count as "activation") and
   remembers the storage version; unpacking checks the version and raises PyTorch's
   "modified by an inplace operation" error when it moved.
3. With ``saved_tensors_hooks`` active, pack runs at save time and only its result is
   kept; unpack runs at each access. A packed result that is a tensor is counted.
4. ``release()`` (after the node ran, unless retain_graph) drops everything; later
   access raises "Trying to backward through the graph a second time".
5. A graph dropped without a backward frees its saved tensors with it: a SavedTensor
   that dies unreleased gives its storage's saved count back (the storage stops
   counting as "activation" if nothing else keeps it saved).
6. As PyTorch's SavedVariable, a tensor coming back from an unpack hook gets the saved
   tensor's place in the graph (its grad_fn and output number, the node itself for an
   output, the leaf's AccumulateGrad for a leaf), unless the hook returned a tensor that
   requires grad. So a pack hook may return ``x.detach()`` and double backward through
   the unpacked tensor still works (non-reentrant checkpointing relies on it).
7. A Python number where PyTorch's op takes a Tensor (``x * 0.5``) is kept as the number; its
   ``_saved_other`` reads as PyTorch's wrapped number, a 0-d CPU tensor (float64, int64 or bool)
   that no pack hook sees and no device memory counts (``_WRAPPED`` lists those nodes).
"""
from __future__ import annotations

import contextlib
import itertools
import re
import threading
import types
import weakref

import numpy as np

from .. import events as _events
from .tensor import Tensor, _Handle, tensor_info


class _HookState(threading.local):
    stack = None      # per thread: the saved_tensors_hooks in force (a list once one was entered)
    saving = None     # (node, saved name) while a pack hook runs


_hook_state = _HookState()
_WRAPPED = {"MulBackward0": "other", "DivBackward0": "other", "DivBackward2": "other"}  # NOTE [ Saved tensors ] 7
_NO_ENTRIES = types.MappingProxyType({})

_BACKWARD_TWICE = ("Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if"
    " you need to access saved tensors after calling backward.")


def _hook_stack() -> list:
    s = getattr(_hook_state, "stack", None)
    if s is None:
        s = _hook_state.stack = []
    return s


class saved_tensors_hooks:
    """Context manager: run ``pack_hook(tensor)`` when autograd saves a tensor and
    ``unpack_hook(packed)`` when backward needs it back."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _hook_stack().append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        _hook_stack().pop()


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message="saved tensors hooks are disabled"):
    stack = _hook_stack()
    saved = list(stack)
    stack.clear()
    try:
        yield
    finally:
        stack.extend(saved)


def current_saving():
    """``(node, saved_name)`` of the tensor a pack hook is packing right now, else None."""
    return getattr(_hook_state, "saving", None)


class SavedTensor:
    """One tensor kept by a node for its backward (see NOTE [ Saved tensors ])."""

    # packed, unpack_hook and history are set only under saved_tensors_hooks (class defaults otherwise)
    __slots__ = ("name", "node_id", "tensor", "array", "storage", "meta", "version", "vc", "is_output", "released",
                 "counted", "__dict__")
    packed = unpack_hook = history = None

    def __init__(self, tensor, name: str, node, is_output: bool):
        self.name = name
        self.node_id = node.id
        self.released = False
        self.is_output = is_output
        st = tensor._storage
        self.vc = vc = tensor._vc      # NOTE [ Version counters ] (engine/core/tensor.py): None = the storage's
        self.version = (vc if vc is not None else st).version
        self.meta = (tensor.dtype, tuple(tensor._data.shape), tensor._requires_grad or tensor._grad_fn is not None,
                     tensor._output_nr)
        hooks = _hook_state.stack
        if hooks:    # the innermost saved_tensors_hooks
            self.tensor = self.array = self.storage = None
            self.counted = self._pack(tensor, node, name, *hooks[-1])
        else:
            self.tensor, self.array = (None, tensor._data) if is_output else (tensor, None)
            self.storage = self.counted = st
        if self.counted is not None:
            self.counted.add_saved(1)
        if _events.active:
            c = self.counted
            _events.emit("pack", node=self.node_id, name=name, storage=c.id if c is not None else None,
                         bytes=c.nbytes if c is not None else 0, hooked=bool(hooks))

    def _pack(self, tensor, node, name, pack, unpack):
        """NOTE 3 and 6: keep ``pack(tensor)``; returns the storage it counts (None if it holds no tensor)."""
        prev = getattr(_hook_state, "saving", None)
        _hook_state.saving = (node, name)  # read by pack hooks through current_saving()
        try:
            self.packed = pack(tensor)
        finally:
            _hook_state.saving = prev
        self.unpack_hook = unpack
        if tensor.requires_grad and not self.is_output:   # NOTE 6: where the tensor sits in the graph
            self.history = tensor.grad_fn if tensor.grad_fn is not None else weakref.ref(tensor)
        inner = _first_tensor(self.packed)
        return inner._storage if inner is not None else None

    @property
    def nbytes(self) -> int:
        return self.counted.nbytes if self.counted is not None else 0

    def unpack(self, node):
        if self.released:
            raise RuntimeError(_BACKWARD_TWICE)
        if self.unpack_hook is not None:
            out = self.unpack_hook(self.packed)
            if not isinstance(out, Tensor):
                raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                                f"result of type {type(out).__name__}")
            if _events.active:
                _events.emit("unpack", node=self.node_id, name=self.name, storage=out._storage.id)
            return self._with_history(out, node)
        st = self.storage
        now = (self.vc or st).version
        if now != self.version:
            dt, shape, _, out_nr = self.meta
            owner = (f", which is output {out_nr} of {_short_name(node)}," if self.is_output else
                     (f", which is output {self.tensor._output_nr} of {_short_name(self.tensor.grad_fn)},"
                      if self.tensor is not None and self.tensor.grad_fn is not None else ""))
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [{_type_name(dt)} [{', '.join(map(str, shape))}]]{owner} is at "
                f"version {now}; expected version {self.version} instead. Hint: enable anomaly "
                "detection to find the operation that failed to compute its gradient, with "
                "torch.autograd.set_detect_anomaly(True, check_nan=False).")
        if _events.active:
            _events.emit("unpack", node=self.node_id, name=self.name, storage=st.id)
        if self.tensor is not None:
            return self.tensor
        dt, shape, rg, out_nr = self.meta
        t = Tensor._wrap(self.array, st)
        if rg:
            t.grad_fn = node
            t._output_nr = out_nr
        return t

    def unpack_data(self, node):
        """``unpack(node)._data`` without the tensor in between when no hook is involved (the
        array-currency backward's path): the same checks and the same ``unpack`` event."""
        if self.unpack_hook is not None or self.released:
            return self.unpack(node)._data
        st = self.storage
        if (self.vc or st).version != self.version:
            return self.unpack(node)._data    # raises the version error
        if _events.active:
            _events.emit("unpack", node=self.node_id, name=self.name, storage=st.id)
        return self.tensor._data if self.tensor is not None else self.array

    def __del__(self):
        counted = self.counted
        if counted is not None and not self.released:  # NOTE [ Saved tensors ] 5
            self.counted = None
            try:
                counted.add_saved(-1)
            except Exception:  # noqa: BLE001 - interpreter shutdown
                pass

    def _with_history(self, out, node):
        """NOTE 6: the hook's tensor, placed where the saved tensor was in the graph."""
        if not self.meta[2] or out.requires_grad:
            return out
        if self.is_output:
            grad_fn = node
        elif isinstance(self.history, Node):
            grad_fn = self.history
        else:
            leaf = self.history() if self.history is not None else None
            if leaf is None:
                return out
            edge_of(leaf)   # the saving node needs the leaf's gradient, so it keeps this AccumulateGrad alive
            t = Tensor._wrap(out._data, out._storage, base_tensor=out._base)
            t._requires_grad = True
            t._accum = leaf._accum             # gradients reach the leaf's .grad
            return t
        t = Tensor._wrap(out._data, out._storage, base_tensor=out._base)
        t.grad_fn = grad_fn
        t._output_nr = self.meta[3]
        return t

    def release(self):
        if self.released:
            return
        self.released = True
        counted, self.counted = self.counted, None
        if _events.active and counted is not None:
            _events.emit("release", node=self.node_id, name=self.name, storage=counted.id,
                         bytes=counted.nbytes)
        self.tensor = self.array = self.storage = self.vc = None
        if self.unpack_hook is not None:
            self.packed = self.unpack_hook = self.history = None
        if counted is not None:
            counted.add_saved(-1)


# NOTE [ Node death ]
# A node made while recording emits ``node_free`` (node, name) when the object is destroyed:
# its last reference died (``del q``, the loss going out of scope, a checkpoint's recompute
# graph dropped after its use), and with it every saved tensor it still held (NOTE [ Saved
# tensors ] 5). A backward without retain_graph frees the saved tensors earlier (``release``
# events) but not the node: it lives while a tensor's ``grad_fn`` names it. A finalizer, not
# ``__del__``, so a node made while nothing records costs nothing; one that dies after
# recording stopped emits nothing.
def watch_death(node) -> None:
    """Emit ``node_free`` when ``node`` is destroyed (call only while recording)."""
    weakref.finalize(node, _node_died, node.id)


def _node_died(nid):
    if _events.active:
        try:
            _events.emit("node_free", node=nid)
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


def _short_name(node) -> str:
    """PyTorch's error messages name a node without its Backward suffix ("Relu")."""
    return re.sub(r"Backward\d*$", "", node.name())


def _first_tensor(obj):
    if isinstance(obj, Tensor):
        return obj
    if isinstance(obj, (tuple, list)):
        for o in obj:
            t = _first_tensor(o)
            if t is not None:
                return t
    return None


def _type_name(dt) -> str:
    return {"float32": "torch.FloatTensor", "float64": "torch.DoubleTensor", "int64": "torch.LongTensor", "bool": "torch.BoolTensor"}[dt.name]


# NOTE [ Node types ]
# 1. A node's Python type has PyTorch's name: ``type(y.grad_fn)`` prints ``<class 'MulBackward0'>``.
#    ``NodeTypes(base)[name]`` is that subclass of ``base``, made once (module ``builtins``, as PyTorch's
#    C++ classes; its ``_name`` a class attribute), so making a node costs one dict lookup more.
# 2. ``name()`` is PyTorch's: the C++-only nodes (``_QUALIFIED``) say it with their namespace
#    (``torch::autograd::CopySlices``); traces, pictures and a printed tensor show the bare name.
_QUALIFIED = {n: "torch::autograd::" + n for n in ("AccumulateGrad", "CopySlices", "CopyBackwards", "NotImplemented")}


class NodeTypes(dict):
    """name -> the subclass of ``base`` that nodes of that name are made as (NOTE [ Node types ] 1)."""

    def __init__(self, base: type):
        self.base = base

    def __missing__(self, name: str) -> type:
        t = self[name] = type(name, (self.base,), {"__slots__": (), "__module__": "builtins", "__qualname__": name,
                                                   "_name": name})
        return t


class Node:
    """A backward function in the graph (what ``tensor.grad_fn`` returns)."""

    # edges before saved tensors: a dying node drops them in this order; anything else a node
    # carries (hooks, metadata, a custom Function's state) goes to its __dict__
    __slots__ = ("id", "next_functions", "_saved", "num_outputs", "__dict__", "__weakref__")  # noqa: RUF023

    _name = "Node"
    takes_tensors = False   # a custom Function's node says True (the engine hands it tensors)

    # Hook containers stay these shared empty (read-only) ones until a hook arrives: a node
    # then gets its own through _own_list / _own_dict (most nodes never have a hook).
    _pre_hooks = ()                    # fn(grad_outputs) -> grad_outputs | None
    _post_hooks = ()                   # fn(grad_inputs, grad_outputs) -> grad_inputs | None
    _tensor_pre_hooks = _NO_ENTRIES    # output_nr -> [fn(grad) -> grad | None]
    _retain_grad = _NO_ENTRIES         # output_nr -> weakref to tensor

    def __init__(self):
        self.id = _events.new_id()
        self.next_functions: tuple = ()
        self._saved: dict = {}
        self.num_outputs = 1
        if _events.active:     # NOTE [ Node death ]: nothing more when not recording
            watch_death(self)

    def _own_list(self, attr: str) -> list:
        lst = self.__dict__.get(attr)
        if lst is None:
            lst = self.__dict__[attr] = []
        return lst

    def _own_dict(self, attr: str) -> dict:
        d = self.__dict__.get(attr)
        if d is None:
            d = self.__dict__[attr] = {}
        return d

    @property
    def metadata(self) -> dict:
        d = self.__dict__.get("_metadata")
        if d is None:
            d = self.__dict__["_metadata"] = {}
        return d

    def name(self) -> str:
        return _QUALIFIED.get(self._name, self._name)     # NOTE [ Node types ] 2

    def __repr__(self):    # PyTorch's repr shows the class name: <AccumulateGrad object at ...>
        return f"<{self.name().rpartition('::')[2]} object at {hex(id(self))}>"

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after this node; may return new grad_inputs."""
        lst = self._own_list("_post_hooks")
        lst.append(fn)
        return _Handle(lst, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before this node; may return new grad_outputs."""
        lst = self._own_list("_pre_hooks")
        lst.append(fn)
        return _Handle(lst, fn)

    def save(self, name: str, tensor, is_output: bool = False):
        self._saved[name] = SavedTensor(tensor, name, self, is_output)

    def saved(self, name: str):
        return self._saved[name].unpack(self)

    @property
    def saved_tensors_info(self) -> list:
        """[(name, SavedTensor)] for inspection (bytes, storage id, released)."""
        return list(self._saved.items())

    def release_saved(self):
        for s in self._saved.values():
            s.release()

    def __getattr__(self, item):
        if item.startswith("_saved_"):
            key = item[len("_saved_"):]
            saved = getattr(self, "_saved", None) or {}
            if key in saved:
                return saved[key].unpack(self)
            attrs = getattr(self, "_attrs", None) or {}
            if key in attrs:    # a number where PyTorch's op takes a Tensor reads as its 0-d wrapped number
                v = attrs[key]
                return Tensor._wrap(np.asarray(v)) if _WRAPPED.get(self.name()) == key and not isinstance(v, Tensor) else v
            if key + "#n" in attrs:     # a variadic argument (index's indices): a tuple, as PyTorch's
                return tuple(saved[f"{key}#{k}"].unpack(self) if f"{key}#{k}" in saved else None
                             for k in range(attrs[key + "#n"]))
        raise AttributeError(f"'{self.name()}' object has no attribute '{item}'")


# ---- leaves and edges ---------------------------------------------------------------------------
class AccumulateGrad(Node):
    """Sink node of a leaf tensor that requires grad; holds the leaf."""

    _name = "AccumulateGrad"     # what traces and pictures show; name() is PyTorch's qualified one
    __module__ = "builtins"      # NOTE [ Node types ] 1: <class 'AccumulateGrad'>

    def __init__(self, variable):
        self.id = _events.new_id()    # Node.__init__, inlined: a leaf op makes one per leaf operand
        self.next_functions = ()
        self._saved = {}
        self.num_outputs = 1
        if _events.active:
            watch_death(self)
        self.variable = variable

    def apply(self, grads, F=None):
        return []


def edge_of(t):
    """(node, input_nr) through which a gradient for ``t`` flows."""
    fn = t._grad_fn if t._base is None else t.grad_fn     # the property only rebuilds a view's
    if fn is not None:
        return (fn, t._output_nr)
    if not t.requires_grad:
        return (None, 0)
    acc = t._accum() if t._accum is not None else None
    if acc is None:
        acc = AccumulateGrad(t)
        t._accum = weakref.ref(acc)
        if _events.active:
            _events.emit("leaf", node=acc.id, name="AccumulateGrad", tensor=tensor_info(t))
    return (acc, 0)


# ---- the backward pass running now (per thread) --------------------------------------------------
_task = threading.local()
_task_ids = itertools.count(1)


def current_graph_task_id():
    """Id of the innermost backward/grad call running on this thread, else None."""
    ids = getattr(_task, "ids", None)
    return ids[-1][0] if ids else None


def current_graph_task_retains_graph() -> bool:
    """Whether the innermost running backward/grad call keeps the graph (retain_graph)."""
    ids = getattr(_task, "ids", None)
    return bool(ids) and ids[-1][1]


def will_execute(node) -> bool:
    """Whether the innermost running backward/grad call on this thread will run ``node``
    (PyTorch's ``_will_engine_execute_node``); False outside backward."""
    plans = getattr(_task, "plans", None)
    if not plans:
        return False
    seen, needed = plans[-1]
    return node in seen and (needed is None or node in needed)


def current_task_has_inputs() -> bool:
    """True while running autograd.grad or backward(inputs=...) (reentrant checkpoint refuses)."""
    stack = getattr(_task, "stack", None)
    return bool(stack and stack[-1])


# ---- the event payload of a node -----------------------------------------------------------------
def _attr(v):
    if isinstance(v, (int, float, str, bool)) or v is None:
        return v
    if isinstance(v, (tuple, list)):
        return [_attr(x) for x in v]
    return repr(v)


def node_info(node) -> dict:
    """The JSON-ready description of ``node`` that events carry."""
    saved = []
    for name, s in node._saved.items():
        st = s.counted
        saved.append({"name": name, "storage": st.id if st is not None else None,
                      "bytes": st.nbytes if st is not None else 0,
                      "shape": list(s.meta[1]), "dtype": s.meta[0].name,
                      "is_output": s.is_output, "packed": s.unpack_hook is not None})
    return {"id": node.id, "name": node.name().rpartition("::")[2],   # without C++'s namespace
            "next": [[n.id if n is not None else None, nr, n.name().rpartition("::")[2] if n is not None else None]
                     for n, nr in node.next_functions],
            "saved": saved,
            "attrs": {k: _attr(v) for k, v in getattr(node, "_attrs", {}).items() if "#" not in k}}
