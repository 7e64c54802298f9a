"""Graph capture: run the function once with an op hook that writes down every table op.

NOTE [ Graph capture ]
1. ``capture(fn, args)`` runs ``fn`` for real on the example inputs with a hook on this
   thread's op-hook stack (NOTE [ Op hooks ] in engine/core/hooks.py). Every op the table
   runs becomes a ``call_op`` node whose inputs are the nodes of the tensors it read.
2. Tensor arguments become placeholders named after the function's parameters. A tensor
   that existed before the call but is not an argument (a module's parameter, a tensor
   from an enclosing scope) is lifted to a placeholder too, named after its parameter
   name (``self_fc1_weight``) or ``const_k``; each call reads its current value.
3. Where the dispatcher would cast an argument to the op's promoted dtype, the graph
   gets an explicit ``to_dtype`` node, so the kernels see the same arrays as in eager.
4. An op with extra outputs (layer_norm's mean and rstd) is one node whose value is a
   tuple, followed by ``getitem`` nodes.
5. The eager run's nodes are read too: which values each op saved for backward, and their
   storages, give eager's saved bytes to compare with the partitioner's choice.
6. What the graph cannot express stops the capture with ``GraphBreak`` naming the op and
   the user's line: in-place ops, reading a tensor's values in Python (``item()``,
   ``bool(t)``, ``tolist()``, ``numpy()``: data-dependent control flow), and tensors made
   inside the function outside the op table (``torch.zeros``/``randn``, ``detach()``,
   ``.to(device)``, the indices of ``max(dim)``).
"""
from __future__ import annotations

import inspect
import linecache
import os
import threading

from ..core import hooks as _hooks
from ..backend import dtypes as _dtype
from .. import events as _events
from ..core.table import OPS
from ..core.tensor import Tensor
from .graph import Graph, Node

_ENGINE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class GraphBreak(Exception):
    """Something ``fn`` did that a graph cannot hold (NOTE [ Graph capture ] 6)."""

    def __init__(self, what, where=None):
        f, line = where or _events.user_frame()
        self.what = what
        self.where = f"{os.path.basename(f)}:{line}" if f else "?"
        super().__init__(f"{what} at {self.where}")


class Captured:
    """The result of one capture: the graph, its inputs and what eager saved."""

    def __init__(self):
        self.graph = Graph("forward")
        self.arg_nodes: list = []        # placeholder (or None) per positional argument
        self.lifted: list = []           # (placeholder, tensor) for lifted tensors
        self.output_kind = "single"     # or "tuple" / "list": how fn returned its tensors
        self.eager_saved: list = []      # (op node, saved name, value node | None, storage id, bytes)
        self.input_storages: set = set()


class _Tracer:
    """The op hook (NOTE [ Op hooks ]): ``after`` adds each op to the graph."""

    def __init__(self, cap: Captured, start_id: int, names: dict):
        self.cap = cap
        self.g = cap.graph
        self.start_id = start_id
        self.names = names              # id(tensor) -> parameter name, for lifting
        self.values: dict = {}          # id(tensor) -> node
        self.keep: list = []            # tensors held so that their ids stay unique
        self.nconst = 0

    def multi_output(self, opdef):
        """An op with several outputs ends the capture (NOTE [ Op hooks ] 4 in engine/core/hooks.py)."""
        raise GraphBreak(f"linalg op '{opdef.name}' keeps its outputs under their own names (a node "
                         "a compiled graph does not hold)")

    def bind(self, t: Tensor, node: Node):
        self.values[id(t)] = node
        self.keep.append(t)

    def value(self, t: Tensor) -> Node:
        node = self.values.get(id(t))
        if node is not None:
            return node
        if t._id > self.start_id:
            raise GraphBreak("a tensor made inside the function outside the op table (a factory such as "
                             "torch.zeros or torch.randn, detach(), .to(device), dropout's mask or the indices "
                             "of max(dim)); make it outside and pass it in")
        name = self.names.get(id(t))
        if name is None:
            name, self.nconst = f"const_{self.nconst}", self.nconst + 1
        else:
            name = "self_" + name.replace(".", "_")
        node = self.g.placeholder(name, shape=tuple(t.shape), dtype=t.dtype, phase="forward",
                                  requires_grad=t.requires_grad)
        self.cap.lifted.append((node, t))
        self.cap.input_storages.add(t._storage.id)
        self.bind(t, node)
        return node

    def before(self, op, inputs, attrs, inplace):
        if OPS.get(op.name) is not op:     # NOTE [ A 0-d tensor's one dim ] 4 (engine/functions/dims.py)
            raise GraphBreak(f"op '{op.name}' along the one dim of a 0-d tensor: a compiled graph replays "
                             "table rows only")
        if inplace is not None:
            what = "an assignment into a tensor (setitem)" if op.name == "setitem" else f"in-place op '{op.name}_'"
            raise GraphBreak(f"{what}: a compiled graph holds no in-place ops")
        return None

    def after(self, op, inputs, attrs, result):
        line = _source_line()
        args = []
        target = None
        if op.promote:
            target = _dtype.result_type(inputs)
            if op.float_op and not target.is_floating_point:
                target = _dtype.get_default_dtype()
        for x in inputs:
            if not isinstance(x, Tensor):
                args.append(x)
                continue
            node = self.value(x)
            if target is not None and x.dtype is not target:   # NOTE [ Graph capture ] 3
                xp = x._storage.xp
                node = self.g.add("call_op", "to_dtype", (node,),
                                  {"dtype": _dtype.to_array_dtype(xp, target)}, shape=tuple(x.shape),
                                  dtype=target, phase="forward", line=line)
            args.append(node)
        full = {**attrs}
        meta = dict(phase="forward", line=line)
        if op.aux:                                               # NOTE [ Graph capture ] 4
            tup = self.g.add("call_op", op.name, args, full, dtype=None, **meta)
            node = self.g.add("getitem", "getitem", (tup,), {"index": 0}, shape=tuple(result.shape),
                              dtype=result.dtype, **meta)
            aux = _aux_meta(op, inputs, attrs, result)
            for k, (shape, dt) in enumerate(aux, start=1):
                self.g.add("getitem", "getitem", (tup,), {"index": k}, shape=shape, dtype=dt, **meta)
        else:
            node = self.g.add("call_op", op.name, args, full, shape=tuple(result.shape), dtype=result.dtype,
                              **meta)
        self.bind(result, node)
        self._record_saved(op, node, args, result)

    def _record_saved(self, op, node, args, result):
        """NOTE [ Graph capture ] 5: what the eager node kept, by value."""
        fn = result.grad_fn
        if fn is None or getattr(fn, "_op", None) is not op:
            return
        by_arg = {}
        names = op.args
        for i, a in enumerate(args):
            nm = names[i] if i < len(names) else names[-1]
            if op.variadic and i >= len(names) - 1:
                by_arg[f"{names[-1]}#{i - len(names) + 1}"] = a
            else:
                by_arg[nm] = a
        tup = node.args[0] if node.op == "getitem" else None
        for name, st in fn._saved.items():
            if name == "result":
                v = node
            elif op.aux and name in op.aux:
                k = 1 + list(op.aux).index(name)
                v = next(n for n in self.g.nodes if n.op == "getitem" and n.args[0] is tup and n.attrs["index"] == k)
            else:
                v = by_arg.get(name)
            c = st.counted
            self.cap.eager_saved.append((node, name, v if isinstance(v, Node) else None,
                                         c.id if c is not None else None, c.nbytes if c is not None else 0))


def _aux_meta(op, inputs, attrs, result):
    """Shapes and dtypes of an op's extra outputs (its kernel run once more on the arrays)."""
    xp = result._storage.xp
    arrays = [x._data if isinstance(x, Tensor) else x for x in inputs]
    _, aux = op.fwd(xp, *arrays, **attrs)
    return [(tuple(aux[k].shape), Tensor._engine_dtype_of(xp, aux[k].dtype)) for k in op.aux]


def _source_line() -> str | None:
    f, line = _events.user_frame()
    if f is None:
        return None
    code = linecache.getline(f, line).strip()
    return f"File: {os.path.basename(f)}:{line}" + (f", code: {code}" if code else "")


# ---- reading values in Python is a graph break (NOTE [ Graph capture ] 6) --------------------
_tracing = threading.local()
_patch_lock = threading.Lock()
_patch_depth = 0
_originals: dict = {}


def _guarded(name, orig):
    def method(self, *a, **kw):
        if getattr(_tracing, "on", False) and not _called_from_engine():
            what = {"item": "Tensor.item()", "tolist": "Tensor.tolist()", "numpy": "Tensor.numpy()"}[name]
            raise GraphBreak(f"{what} reads a tensor's values in Python (data-dependent control flow "
                             "such as `if t > 0:` does this)")
        return orig(self, *a, **kw)
    method.__name__ = name
    method.__doc__ = orig.__doc__
    return method


def _called_from_engine() -> bool:
    import sys
    f = sys._getframe(2)
    while f is not None and f.f_code.co_name in ("__bool__", "__float__", "__int__", "__index__", "__array__"):
        f = f.f_back   # a conversion dunder asks for its caller
    return f is not None and f.f_code.co_filename.startswith(_ENGINE_DIR) and \
        not f.f_code.co_filename.startswith(os.path.join(_ENGINE_DIR, "compiler"))


class _ValueReadsBreak:
    """While active on this thread, Tensor.item/tolist/numpy called by user code raise GraphBreak."""

    def __enter__(self):
        global _patch_depth
        with _patch_lock:
            if _patch_depth == 0:
                for name in ("item", "tolist", "numpy"):
                    _originals[name] = Tensor.__dict__[name]
                    setattr(Tensor, name, _guarded(name, _originals[name]))
            _patch_depth += 1
        self.old = getattr(_tracing, "on", False)
        _tracing.on = True
        return self

    def __exit__(self, *exc):
        global _patch_depth
        _tracing.on = self.old
        with _patch_lock:
            _patch_depth -= 1
            if _patch_depth == 0:
                for name, orig in _originals.items():
                    setattr(Tensor, name, orig)
        return False




def arg_names(fn, n: int) -> list[str]:
    """Placeholder names for ``n`` positional arguments: the parameters' own names when known."""
    try:
        target = fn.forward if hasattr(fn, "forward") and not inspect.isfunction(fn) else fn
        params = [p for p in inspect.signature(target).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        names = [p.name for p in params]
    except (TypeError, ValueError):
        names = []
    names = names[:n] + [f"arg{i}" for i in range(len(names), n)]
    return names


def capture(fn, args, names=None, kwargs=None) -> tuple[Captured, object]:
    """Run ``fn(*args, **kwargs)`` once, recording its ops. Returns (Captured, eager result).

    Keyword arguments become placeholders after the positional ones, named by their keys.
    """
    kwargs = kwargs or {}
    cap = Captured()
    start = _events.new_id()
    tracer = _Tracer(cap, start, names or {})
    for name, a in zip(arg_names(fn, len(args)) + list(kwargs), list(args) + list(kwargs.values())):
        if isinstance(a, Tensor):
            node = cap.graph.placeholder(name, shape=tuple(a.shape), dtype=a.dtype, phase="forward",
                                         requires_grad=a.requires_grad)
            tracer.bind(a, node)
            cap.input_storages.add(a._storage.id)
            cap.arg_nodes.append(node)
        else:
            cap.arg_nodes.append(None)
    with _ValueReadsBreak(), _hooks.push_op_hook(tracer):
        out = fn(*args, **kwargs)
    single = not isinstance(out, (tuple, list))
    outs = (out,) if single else tuple(out)
    for o in outs:
        if not isinstance(o, Tensor):
            raise GraphBreak(f"the function returned a {type(o).__name__}; a compiled function returns a "
                             "Tensor or a tuple/list of Tensors", where=(None, None))
    cap.output_kind = "single" if single else type(out).__name__ if type(out) in (tuple, list) else "tuple"
    cap.graph.output([tracer.value(o) for o in outs])
    tracer.keep.clear()
    return cap, out
