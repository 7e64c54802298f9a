"""Selective checkpointing: a policy picks, op by op, which outputs to keep.

NOTE [ Selective checkpointing ]
1. ``create_selective_checkpoint_contexts(policy)`` returns two context managers for
   ``checkpoint(..., use_reentrant=False, context_fn=...)``: one around the forward, one
   around the recompute. Each pushes an op hook (NOTE [ Op hooks ]).
2. Forward: after each op the policy is called as ``policy(ctx, op_name, *args, **attrs)``
   (``op_name`` is the op table's name: "mm", "addmm", "relu", ...). For MUST_SAVE and
   PREFER_SAVE (or True) the output is cached, keyed by (op name, how many times that op
   ran); its storage counts as an activation while cached.
3. Recompute: an op whose entry is cached does not run its kernel; it returns the
   cached array in the cached storage (no new bytes), and the entry is consumed. Ops
   marked for recompute run normally. A second backward through a consumed entry is
   PyTorch's "backward an extra time" error; a cached tensor modified in place is
   PyTorch's mutation error unless ``allow_cache_entry_mutation``.
4. Views, in-place ops and ops with auxiliary outputs are never cached (a view costs no
   bytes, the others cannot be replayed from one output): the policy is not asked.
5. The checkpoint's holders still stand for every saved tensor; a cached output reaches
   its node through the recompute like any other, so early stop and the determinism
   check work unchanged.
"""
from __future__ import annotations

import enum
from collections import defaultdict

from ...core.hooks import push_op_hook


class CheckpointPolicy(enum.Enum):
    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3


class SelectiveCheckpointContext:
    """What the policy gets as ``ctx``: ``is_recompute`` (always False) and ``op_output``."""

    def __init__(self, *, is_recompute, op_output=None):
        self.is_recompute = is_recompute
        self.op_output = op_output


_SAVE = (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE)
_RECOMPUTE = object()
_CONSUMED = object()
_MISMATCH = ("This can happen if the operations in the checkpointed region are nondeterministic or depend "
             "on global state that changed between forward and backward.")


class _Entry:
    """A cached output; its storage counts as an activation until consumed or dropped."""

    __slots__ = ("kept", "version")

    def __init__(self, result):
        self.kept = result.detach()
        self.version = self.kept._storage.version
        self.kept._storage.add_saved(1)

    def take(self):
        kept, self.kept = self.kept, None
        kept._storage.add_saved(-1)
        return kept

    def __del__(self):
        if self.kept is not None:
            try:
                self.kept._storage.add_saved(-1)
            except Exception:  # noqa: BLE001 - interpreter shutdown
                pass


def _cacheable(op, inplace) -> bool:
    return inplace is None and not op.view and not op.aux


class _Caching:
    """Forward side (NOTE 2)."""

    def __init__(self, policy_fn, storage):
        self.policy_fn = policy_fn
        self.storage = storage
        self.counter: dict = defaultdict(int)

    def before(self, op, inputs, attrs, inplace):
        return None

    def after(self, op, inputs, attrs, result):
        inplace = next((t for t in inputs if t is result), None)
        if not _cacheable(op, inplace):
            return
        idx = self.counter[op.name]
        self.counter[op.name] += 1
        policy = self.policy_fn(SelectiveCheckpointContext(is_recompute=False, op_output=result),
                                op.name, *inputs, **attrs)
        if isinstance(policy, bool):
            policy = CheckpointPolicy.MUST_SAVE if policy else CheckpointPolicy.PREFER_RECOMPUTE
        if policy in _SAVE:
            self.storage[op.name][idx] = _Entry(result)
        else:
            self.storage[op.name][idx] = _RECOMPUTE

    def __enter__(self):
        self._push = push_op_hook(self)
        self._push.__enter__()
        return self

    def __exit__(self, *exc):
        return self._push.__exit__(*exc)


class _Cached:
    """Recompute side (NOTE 3)."""

    def __init__(self, storage, allow_cache_entry_mutation):
        self.storage = storage
        self.allow_mutation = allow_cache_entry_mutation
        self.counter: dict = defaultdict(int)

    def before(self, op, inputs, attrs, inplace):
        if not _cacheable(op, inplace):
            return None
        idx = self.counter[op.name]
        self.counter[op.name] += 1
        entries = self.storage.get(op.name)
        if entries is None:
            raise RuntimeError(f"{op.name} encountered during backward but not found in storage. {_MISMATCH}")
        entry = entries.get(idx)
        if entry is None:
            raise RuntimeError(f"{op.name} invocation index {idx} encountered during backward but not found in "
                               f"storage. {_MISMATCH}")
        if entry is _CONSUMED:
            raise RuntimeError("Trying to backward an extra time. You are only allowed to backward once on any "
                               "region computed under selective activation checkpoint.")
        if entry is _RECOMPUTE:
            return None
        if not self.allow_mutation and entry.kept._storage.version != entry.version:
            raise RuntimeError("Tensor cached during selective activation checkpoint has been mutated")
        entries[idx] = _CONSUMED
        return entry.take()

    def after(self, op, inputs, attrs, result):
        pass

    def __enter__(self):
        self.counter.clear()
        self._push = push_op_hook(self)
        self._push.__enter__()
        return self

    def __exit__(self, *exc):
        return self._push.__exit__(*exc)


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """Two context managers (forward, recompute) for ``checkpoint(context_fn=...)``.

    ``policy_fn_or_list`` is ``policy(ctx, op_name, *args, **kwargs) -> CheckpointPolicy``
    or a list of op names to save (MUST_SAVE; everything else PREFER_RECOMPUTE).
    Differs from PyTorch: ops are named by strings ("mm", "relu"), not OpOverloads.
    """
    if isinstance(policy_fn_or_list, list):
        names = []
        for op in policy_fn_or_list:
            name = getattr(op, "name", op)
            if not isinstance(name, str):
                raise ValueError(f"Expected op in `op_list` to be an op name (str) but got: {op} of type {type(op)}.")
            names.append(name)
        wanted = frozenset(names)

        def policy_fn(ctx, op, *args, **kwargs):
            return CheckpointPolicy.MUST_SAVE if op in wanted else CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage: dict = defaultdict(dict)
    return _Caching(policy_fn, storage), _Cached(storage, allow_cache_entry_mutation)
