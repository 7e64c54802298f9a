"""Non-reentrant checkpointing, built on saved-tensor hooks.

NOTE [ Non-reentrant checkpoint ]
1. The region's forward runs with grad on under a pack hook that keeps, for each tensor
   autograd wants to save, only a small holder (and a fingerprint for the determinism
   check, NOTE [ Checkpoint determinism check ]); the tensor itself is not kept, so an
   intermediate's storage is freed as soon as the region's code drops it. Each such
   tensor is announced by a ``checkpoint_drop`` event.
2. The region's inputs are saved by the frame as ordinary saved tensors, before the
   frame's hook is pushed: inside an outer checkpoint they are the outer region's
   saved tensors (so nested regions recompute outer ones first, as PyTorch's rule 2).
3. The first unpack of any holder during one backward (one graph task id) reruns the
   function on the saved inputs under grad mode, with the forward's RNG state, in
   phase "recompute", with the region stamped on its ops; the recompute's pack hook
   hands the k-th saved tensor (detached) to the k-th holder. Later unpacks in the same
   backward reuse it; a new backward (retain_graph) recomputes again, unless both run
   inside one ``GraphExecGroup`` (the group then stands for the graph task id).
4. Early stop: once the recompute has saved as many tensors as the forward did, the
   next op of the rerun raises a private exception that ends it (an op hook, NOTE
   [ Op hooks ]), so the recompute costs exactly the ops up to the last saving one.
5. An unpack hands the holder's tensor over. Without retain_graph the holder keeps it
   until the node releases its saved tensors (the holder dies then), so a recomputed
   tensor lives exactly as long as the stored one would have, and memory figures of a
   checkpointed run add up like a stored run's. With retain_graph=True (or outside a
   backward) the holder forgets it at once (PyTorch's rule), so a retained graph does
   not keep recomputed tensors alive.
6. After the recompute the determinism check compares counts, metadata and values.
7. The frame holds no reference to its hooks, so no reference cycle delays a free.
"""
from __future__ import annotations

import contextlib
import itertools
import threading
import weakref

from ...core import hooks as _hooks
from ... import events as _events
from ...core.tensor import Tensor
from ...core import grad_mode
from ...core.graph import current_graph_task_id, current_graph_task_retains_graph
from ...core.graph import SavedTensor, current_saving, saved_tensors_hooks
from . import _common
from ._common import CheckpointError
from ._rng import RngStash

_outside_ids = itertools.count(1)


class _StopRecomputation(Exception):
    pass


_group = threading.local()


class GraphExecGroup:
    """Backward calls inside one group recompute each checkpointed region at most once
    (they must not need the same saved activation twice), as PyTorch's GraphExecGroup."""

    def __enter__(self):
        current = getattr(_group, "value", None)
        if current is not None:
            raise RuntimeError(f"GraphExecGroup contexts cannot be nested. Already inside group {current}")
        _group.value = self
        return self

    def __exit__(self, *exc):
        _group.value = None
        return False


class _Holder:
    """What the pack hook keeps instead of a tensor: graph task id -> recomputed tensor."""

    __slots__ = ("handles", "__weakref__")

    def __init__(self):
        self.handles: dict = {}


class _RegionNode:
    """Stands in for a node when the frame saves the region's inputs."""

    __slots__ = ("id",)

    def __init__(self, region):
        self.id = region

    def name(self) -> str:
        return "CheckpointInputs"


class _Frame:
    def __init__(self, region, fn, args, kwargs, rng, recompute_ctx, check, early_stop):
        self.region = region
        self.fn = fn
        self.kwargs = kwargs
        self.rng = rng
        self.recompute_ctx = recompute_ctx
        self.check = check
        self.early_stop = early_stop
        self.node = _RegionNode(region)
        self.holders: list = []          # weakrefs to _Holder, in save order
        self.metas: list = []            # per holder: (meta, fingerprint, saved name, node name)
        self.recomputed: set = set()     # graph task ids already recomputed
        self.counter: dict = {}          # graph task id -> tensors saved by the recompute
        self.stop_pending = False
        self.forward_completed = False
        self.input_storages = {a._storage.id for a in args if isinstance(a, Tensor)}
        # NOTE [ Non-reentrant checkpoint ] 2: saved under whatever hooks surround us
        self.saved_args = [SavedTensor(a, f"input{i}", self.node, False) if isinstance(a, Tensor) else a
                           for i, a in enumerate(args)]

    def __del__(self):
        for a in getattr(self, "saved_args", ()):
            if isinstance(a, SavedTensor):
                try:
                    a.release()
                except Exception:  # noqa: BLE001 - interpreter shutdown
                    pass

    # ---- forward ------------------------------------------------------------
    def pack(self, x):
        h = _Holder()
        self.holders.append(weakref.ref(h))
        saving = current_saving()
        node, name = saving if saving is not None else (None, "?")
        node_name = node.name() if node is not None else "?"
        fp = _common.fingerprint(x) if self.check == "default" and x._storage.base == "other" else None
        self.metas.append((_common.tensor_meta(x), fp, name, node_name))
        if _events.active:
            st = x._storage
            kept = st.id in self.input_storages or st.base != "other"
            _events.emit("checkpoint_drop", region=self.region, node=node.id if node is not None else None,
                         name=name, storage=st.id, bytes=st.nbytes, kept=kept)
        return h

    # ---- backward -----------------------------------------------------------
    def unpack(self, h):
        group = getattr(_group, "value", None)
        gid = current_graph_task_id()
        forget = gid is None or group is not None or current_graph_task_retains_graph()
        if group is not None:
            gid = group                               # one recompute for the whole group
        elif gid is None:
            gid = ("outside", next(_outside_ids))   # no backward running: recompute each time
        if gid not in self.recomputed:
            self.recompute(gid)
        t = h.handles.get(gid, _MISSING)
        if t is None:
            extra = ("Performing two backward calls that overlap (i.e. require the same saved activation in "
                     "order to compute gradients) is not allowed while under the "
                     "torch.utils.checkpoint.GraphExecGroup context. " if group is not None else "")
            raise CheckpointError(
                "torch.utils.checkpoint: Unpack is being triggered for a tensor that was already unpacked "
                f"once. {extra}If you are calling ctx.saved_tensors in backward, make sure to do so only once. "
                "Otherwise please open an issue with details on your use case.")
        if t is _MISSING:
            raise CheckpointError("torch.utils.checkpoint: the recomputation did not produce this saved "
                                  "tensor (it saved fewer tensors than the forward).")
        if forget:                # NOTE 5
            h.handles[gid] = None
        return t

    def recompute(self, gid):
        args = [_input(a, self.node) if isinstance(a, SavedTensor) else a for a in self.saved_args]
        self.counter[gid] = 0
        self.stop_pending = False
        frame_ref = weakref.ref(self)

        def pack(x):
            return frame_ref()._recompute_pack(x, gid)

        stopper = _EarlyStop(frame_ref)
        try:
            with _common.recompute_scope(self.region), self.rng.replay() if self.rng else contextlib.nullcontext(), \
                    saved_tensors_hooks(pack, _identity), grad_mode.enable_grad(), self.recompute_ctx, \
                    _hooks.push_op_hook(stopper):
                self.fn(*args, **self.kwargs)
        except _StopRecomputation:
            pass
        finally:
            self.stop_pending = False
        self.recomputed.add(gid)
        try:
            self._check(gid)
        finally:
            del self.counter[gid]

    def _recompute_pack(self, x, gid):
        x = x.detach() if x.requires_grad else x
        i = self.counter[gid]
        self.counter[gid] = i + 1
        if i >= len(self.holders):
            if not self.forward_completed:
                return x
            raise CheckpointError("torch.utils.checkpoint: trying to save more tensors during recomputation "
                                  "than during the original forward pass.")
        h = self.holders[i]()
        if h is not None:   # a holder already released (partial backward) needs nothing
            h.handles[gid] = x
        if self.early_stop and i + 1 == len(self.holders):
            self.stop_pending = True
        return x

    def _check(self, gid):
        n_fwd, n_rec = len(self.holders), self.counter[gid]
        if n_fwd != n_rec:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the original "
                f"forward and recomputation.\nNumber of tensors saved during forward: {n_fwd}\n"
                f"Number of tensors saved during recomputation: {n_rec}.")
        if self.check == "none":
            return
        meta_bad, value_bad = [], []
        for idx, ref in enumerate(self.holders):
            h = ref()
            if h is None:
                continue
            x = h.handles.get(gid)
            if x is None:
                continue
            meta, fp, name, node_name = self.metas[idx]
            where = f"tensor at position {idx} (saved as '{name}' by {node_name})"
            if _common.tensor_meta(x) != meta:
                meta_bad.append(f"{where}:\nsaved metadata: {_fmt_meta(meta)}\n"
                                f"recomputed metadata: {_fmt_meta(_common.tensor_meta(x))}\n")
            elif fp is not None:
                rec = _common.fingerprint(x)
                if not _common.values_match(fp, rec, x.dtype):
                    value_bad.append(f"{where}:\nforward: sum={fp[0]!r}, sum of squares={fp[1]!r}\n"
                                     f"recomputed: sum={rec[0]!r}, sum of squares={rec[1]!r}\n")
        if meta_bad:
            raise CheckpointError("torch.utils.checkpoint: Recomputed values for the following tensors have "
                                  "different metadata than during the forward pass.\n" + "".join(meta_bad))
        if value_bad:
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors differ from the values "
                "saved during the forward pass (compared by sum and sum of squares). The checkpointed function "
                "is not deterministic: it may use randomness with preserve_rng_state=False or global state "
                "that changed between forward and backward.\n" + "".join(value_bad))


_MISSING = object()


def _input(saved, node):
    """A saved region input for the recompute. Inside an outer checkpoint it comes back from
    the outer recompute detached; it must require grad as the original did, or the rerun
    would save less than the forward (NOTE [ Non-reentrant checkpoint ] 2)."""
    t = saved.unpack(node)
    if saved.meta[2] and not t.requires_grad:
        t = t.detach()
        t.requires_grad = True
    return t


def _identity(x):
    return x


def _fmt_meta(meta) -> str:
    return f"{{'shape': {meta['shape']!r}, 'dtype': {meta['dtype']!r}, 'device': {meta['device']!r}}}"


class _EarlyStop:
    """Op hook ending a recomputation at the op after the last needed save (NOTE 4)."""

    __slots__ = ("frame_ref",)

    def __init__(self, frame_ref):
        self.frame_ref = frame_ref

    def before(self, op, inputs, attrs, inplace):
        f = self.frame_ref()
        if f is not None and f.stop_pending:
            raise _StopRecomputation
        return None

    def after(self, op, inputs, attrs, result):
        pass




def checkpoint_without_reentrant(function, preserve_rng_state, context_fn, determinism_check,
                                 early_stop, args, kwargs):
    """Run ``function(*args, **kwargs)`` as a non-reentrant checkpointed region."""
    if determinism_check not in _common.CHECKS:
        raise ValueError(f"determinism_check should be one of {list(_common.CHECKS)}, but got "
                         f"{determinism_check}")
    if not grad_mode.is_grad_enabled():
        return function(*args, **kwargs)
    forward_ctx, recompute_ctx = context_fn()
    region = _events.new_id()
    rng = RngStash(args) if preserve_rng_state else None
    if _events.active:
        _events.emit("checkpoint_enter", region=region, fn=_common.fn_name(function))
    frame = _Frame(region, function, args, kwargs, rng, recompute_ctx, determinism_check, early_stop)
    with _common.region_scope(region), saved_tensors_hooks(frame.pack, frame.unpack), forward_ctx:
        out = function(*args, **kwargs)
    frame.forward_completed = True
    if _events.active:
        _events.emit("checkpoint_exit", region=region)
    return out
