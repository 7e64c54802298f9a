"""Running compiled graphs: guards and the cache, the autograd wrapper, logs and events.

NOTE [ Compiled call ]
1. A call's guard is each argument's shape, dtype, device and requires_grad (a Python
   number's type and value), grad mode, the default dtype and, for a module, every submodule's train/eval
   mode; a lifted tensor's own guard is checked too.
   A call no cached graph fits is traced again (``recompiles`` in the logs), as
   torch.compile recompiles on new shapes.
2. With grad on and some input requiring grad, the call is one ``CompiledFunction``
   (an autograd.Function, so the output's grad_fn is ``CompiledFunctionBackward`` as in
   PyTorch): its forward runs the partitioned forward graph and saves what the
   partitioner chose, its backward runs the backward graph. Otherwise the captured graph
   runs alone.
3. Values inside a compiled graph are plain arrays: only what it returns and what it
   saves become tensors (and count in the memory figures).
4. A graph break (NOTE [ Graph capture ] 6) raises ``Unsupported`` with ``fullgraph=True``;
   otherwise it warns once and the function runs eagerly for calls with that guard.
"""
from __future__ import annotations

import os
import sys
import threading
import warnings

from .. import events as _events
from ..backend.dtypes import get_default_dtype
from ..core.tensor import Tensor
from ..core import grad_mode
from ..autograd.function import Function
from .capture import GraphBreak, capture
from .fusion import Program
from .graph import Graph, map_args
from .joint import build_joint
from .partition import dce, is_view, min_cut

STAGES = ("graph", "joint", "partition", "fusion", "recompiles")


class Unsupported(RuntimeError):
    """What ``fullgraph=True`` raises at a graph break."""


def enabled_logs() -> set:
    """Stages named in GLASSGRAD_LOGS (comma separated; ``all`` for every stage)."""
    raw = os.environ.get("GLASSGRAD_LOGS", "")
    names = {s.strip().lstrip("+") for s in raw.split(",") if s.strip()}
    return set(STAGES) if "all" in names else names & set(STAGES)


def _stage(stage, title, text, nodes, logs):
    if stage in logs:
        end = "" if text.endswith("\n") else "\n"
        print(f"[glassgrad.compile] [{stage}] {title}\n{text}", file=sys.stderr, end=end)
    if _events.active:
        _events.emit("compile_stage", stage=stage, nodes=nodes, text=text)


def _guard(x):
    if isinstance(x, Tensor):
        return ("tensor", tuple(x.shape), x.dtype.name, str(x.device), x.requires_grad)
    if isinstance(x, (bool, int, float, str, type(None))):
        return (type(x).__name__, x)
    raise TypeError(f"engine.compile: arguments must be Tensors or Python numbers, got {type(x).__name__}")


def _describe(x) -> str:
    g = _guard(x)
    if g[0] == "tensor":
        return f"{g[2]}[{', '.join(map(str, g[1]))}] {g[3]}{' requires_grad' if g[4] else ''}"
    return repr(x)


class Artifact:
    """Everything one trace produced, for one guard."""

    def __init__(self, fn, args, kwargs, names, backend, logs, title):
        cap, _ = capture(fn, args, names, kwargs)
        args = tuple(args) + tuple(kwargs.values())
        self.captured = cap
        self.graph: Graph = cap.graph
        self.lifted = cap.lifted
        self.lifted_guard = tuple(_guard(t) for _, t in cap.lifted)
        self.output_kind = cap.output_kind
        _stage("graph", f"captured graph of {title}", self.graph.python_code(), len(self.graph), logs)
        tensors = self._inputs(args)
        xp = tensors[0]._storage.xp if tensors else None
        if xp is None:
            raise GraphBreak("the function reads no tensor", where=(None, None))
        self.xp = xp
        fuse = backend == "inductor"
        self.eager_saved_bytes = _eager_saved_bytes(cap)
        self.joint = self.partition = self.forward_program = self.backward_program = None
        self.needs_grad = grad_mode.is_grad_enabled() and any(t.requires_grad for t in tensors)
        if self.needs_grad:
            n_out = len(self.graph.outputs)
            self.joint, _ = build_joint(self.graph, xp, {p: t._data for p, t in zip(self.graph.placeholders, tensors)})
            _stage("joint", f"joint forward+backward graph of {title}", self.joint.python_code(), len(self.joint),
                   logs)
            self.partition = p = min_cut(self.joint, n_out)
            _stage("partition", f"min-cut partition of {title}", self.partition_text(),
                   len(p.forward) + len(p.backward), logs)
            self.forward_program = Program(p.forward, xp, fuse)
            self.backward_program = Program(p.backward, xp, fuse)
            self.rg_inputs = [self.joint.meta_rg[q] for q in self.joint.placeholders
                              if q.meta.get("phase") == "forward"]
            rg = self.joint.meta_rg
            self.out_rg = [rg[o] for o in self.joint.outputs[:n_out]]
            programs = (self.forward_program, self.backward_program)
        else:
            self.forward_program = Program(dce(_copy(self.graph)), xp, fuse)
            programs = (self.forward_program,)
        kernels = [k for pr in programs for k in pr.kernels]
        _stage("fusion", f"fused kernels of {title}", "".join(pr.describe() for pr in programs),
               sum(len(k.nodes) for k in kernels), logs)

    @property
    def kernels(self) -> list:
        return [k for pr in (self.forward_program, self.backward_program) if pr is not None for k in pr.kernels]

    @property
    def compiled_saved_bytes(self) -> int:
        return self.partition.saved_bytes if self.partition is not None else 0

    def partition_text(self) -> str:
        p = self.partition
        saved = ", ".join(f"{n.name} ({'input' if n.op == 'placeholder' else f'{n.nbytes} bytes'})"
                          for n in p.saved) or "nothing"
        rec = ", ".join(n.name for n in p.recomputed) or "nothing"
        return (f"# saved for backward: {saved}\n# recomputed in backward: {rec}\n"
                f"# bytes saved: {p.saved_bytes} (eager saves {self.eager_saved_bytes})\n"
                + p.forward.python_code() + "\n" + p.backward.python_code())

    def _inputs(self, args) -> list:
        """The tensors behind the placeholders, in placeholder order."""
        by_node = {n: a for n, a in zip(self.captured.arg_nodes, args) if n is not None}
        by_node.update({n: t for n, t in self.lifted})
        return [by_node[p] for p in self.graph.placeholders]

    def fits(self) -> bool:
        return tuple(_guard(t) for _, t in self.lifted) == self.lifted_guard

    def __call__(self, args):
        tensors = self._inputs(args)
        if self.needs_grad:
            outs = CompiledFunction.apply(self, *tensors)
            outs = outs if isinstance(outs, tuple) else (outs,)
        else:
            arrays = self.forward_program([t._data for t in tensors])
            outs = tuple(_wrap_out(a, o, self.graph, tensors)
                         for a, o in zip(arrays, self.forward_program.graph.outputs))
        return outs[0] if self.output_kind == "single" else list(outs) if self.output_kind == "list" else outs


def _copy(g: Graph) -> Graph:
    c = Graph(g.name)
    m = {}
    for n in g.nodes:
        m[n] = c.add(n.op, n.target, map_args(n.args, m.__getitem__), n.attrs, name=n.name, **n.meta)
    return c


def _wrap_out(array, node, graph, tensors):
    """An output as a tensor: an input returned as is stays that tensor; a view of an input
    shares the input's storage (as eager's view ops do); anything else gets its own storage."""
    names = [p.name for p in graph.placeholders]
    root = node
    while is_view(root):
        root = root.args[0]
    if root.op != "placeholder":
        return Tensor._wrap(array)
    base = tensors[names.index(root.name)]
    if root is node:
        return base
    return Tensor._wrap(array, base._storage, base_tensor=base._base if base._base is not None else base)


def _eager_saved_bytes(cap) -> int:
    """Bytes of the distinct storages eager's nodes kept that are not inputs (NOTE [ Graph capture ] 5)."""
    seen = {}
    for _, _, _, storage, nbytes in cap.eager_saved:
        if storage is not None and storage not in cap.input_storages:
            seen[storage] = nbytes
    return sum(seen.values())


class CompiledFunction(Function):
    """One compiled call (NOTE [ Compiled call ] 2): ``apply(artifact, *inputs)``.

    One class for every artifact (its grad_fn reads ``CompiledFunctionBackward``); the
    artifact travels as the first argument, so nothing ties it into a reference cycle
    and its lifted tensors are freed as soon as the compiled callable is.
    """

    @staticmethod
    def forward(ctx, art, *tensors):
        part = art.partition
        n_out = len(art.graph.outputs)
        index = {p.name: i for i, p in enumerate(art.graph.placeholders)}
        res = art.forward_program([t._data for t in tensors])
        outs = tuple(_wrap_out(a, n, part.forward, tensors) for a, n in zip(res[:n_out], part.forward.outputs))
        saved = [tensors[index[n.name]] if n.op == "placeholder" else Tensor._wrap(a)
                 for a, n in zip(res[n_out:], part.saved)]
        ctx.save_for_backward(*saved)
        ctx.mark_non_differentiable(*[o for o, rg in zip(outs, art.out_rg) if not rg])
        ctx.art = art
        return outs

    @staticmethod
    def backward(ctx, *grads):
        if grad_mode.is_grad_enabled():        # create_graph=True: the backward graph runs on arrays
            raise RuntimeError("torch.compile with aot_autograd does not currently support double backward")
        art = ctx.art
        tangents = [g._data for g, rg in zip(grads, art.out_rg) if rg]
        res = art.backward_program([s._data for s in ctx.saved_tensors] + tangents)
        it = iter(res)
        return (None,) + tuple(_as_grad(next(it)) if rg else None for rg in art.rg_inputs)


def _as_grad(a):
    return Tensor._wrap(a) if a is not None else None


class CompiledCallable:
    """What ``engine.compile(fn)`` returns: call it as ``fn``; graphs are traced per guard."""

    def __init__(self, fn, fullgraph=False, backend="inductor"):
        self._fn = fn
        self.fullgraph = fullgraph
        self.backend = backend
        self.artifacts: list[Artifact] = []
        self._eager: dict = {}
        self._lock = threading.Lock()
        self.last: Artifact | None = None
        self.__wrapped__ = fn
        self.__doc__ = getattr(fn, "__doc__", None)

    def _names(self) -> dict:
        return {}

    def _state(self):
        """More of the guard: what besides the arguments decides the graph (a module's train/eval mode)."""
        return None

    @property
    def _title(self) -> str:
        return getattr(self._fn, "__name__", None) or type(self._fn).__name__

    def __call__(self, *args, **kwargs):
        key = (grad_mode.is_grad_enabled(), get_default_dtype().name, self._state()) + tuple(_guard(a) for a in args) + \
            tuple((k, _guard(v)) for k, v in kwargs.items())
        if key in self._eager:
            return self._fn(*args, **kwargs)
        flat = tuple(args) + tuple(kwargs.values())
        art = next((a for a in self.artifacts if a.key == key and a.fits()), None)
        if art is None:
            with self._lock:
                logs = enabled_logs()
                if self.artifacts and "recompiles" in logs:
                    print(f"[glassgrad.compile] [recompiles] {self._title}: no graph for ("
                          f"{', '.join(_describe(a) for a in flat)}); tracing again", file=sys.stderr)
                try:
                    art = Artifact(self._fn, args, kwargs, self._names(), self.backend, logs, self._title)
                except GraphBreak as e:
                    if self.fullgraph:
                        raise Unsupported(f"engine.compile(fullgraph=True): graph break in {self._title}: "
                                          f"{e}") from None
                    warnings.warn(f"engine.compile: graph break in {self._title}: {e}; running it eagerly",
                                  stacklevel=2)
                    self._eager[key] = str(e)
                    return self._fn(*args, **kwargs)
                art.key = key
                self.artifacts.append(art)
        self.last = art
        return art(flat)


class CompiledModule(CompiledCallable):
    """``engine.compile(module)``: parameters and buffers are lifted inputs named by their paths."""

    def __init__(self, module, **kw):
        super().__init__(module, **kw)
        self.__dict__["_orig_mod"] = module

    def _state(self):
        return tuple(m.training for m in self._fn.modules())

    def _names(self) -> dict:
        m = self._fn
        names = {id(p): n for n, p in m.named_parameters()}
        names.update({id(b): n for n, b in m.named_buffers()})
        return names

    @property
    def _title(self) -> str:
        return type(self._fn).__name__

    def __getattr__(self, name):
        return getattr(self.__dict__["_orig_mod"], name)
