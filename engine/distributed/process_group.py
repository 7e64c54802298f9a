"""``torch.distributed``'s names for a program that runs in one process.

NOTE [ One process ]
glassgrad runs a program in one process, on one device; it starts no process group. So
that a program written for several processes still runs alone, as it would on a
PyTorch built without distributed support:

1. ``is_available()`` is False, and so are ``is_initialized()`` and the backend checks
   (``is_nccl_available()``...). ``is_torchelastic_launched()`` answers as PyTorch's
   does, from ``TORCHELASTIC_RUN_ID``.
2. ``init_process_group`` raises RuntimeError saying glassgrad runs in one process.
3. Every function that needs the default process group (``get_rank``, ``get_world_size``,
   ``barrier``, the collectives, ``send``/``recv``, ``new_group``...) raises PyTorch's own
   error for a program that never called ``init_process_group``: ValueError, "Default
   process group has not been initialized, please make sure to call init_process_group.".
   ``destroy_process_group()`` raises PyTorch's AssertionError "Process group cannot be None".
4. ``ReduceOp``, ``Backend``, ``group.WORLD`` and ``GroupMember`` exist with PyTorch's values,
   so code that names them (as a default argument, say) imports and runs.
"""
from __future__ import annotations

import enum
import os

NOT_INITIALIZED = "Default process group has not been initialized, please make sure to call init_process_group."
ONE_PROCESS = ("glassgrad runs in one process: torch.distributed is not available "
               "(torch.distributed.is_available() is False), so init_process_group cannot start a process group")


def is_available() -> bool:
    """False: glassgrad runs in one process (NOTE [ One process ] rule 1)."""
    return False


def is_initialized() -> bool:
    """False: no process group is ever started."""
    return False


def is_nccl_available() -> bool:
    return False


def is_gloo_available() -> bool:
    return False


def is_mpi_available() -> bool:
    return False


def is_ucc_available() -> bool:
    return False


def is_xccl_available() -> bool:
    return False


def is_torchelastic_launched() -> bool:
    """Whether a launcher (torchrun) started this process, read from ``TORCHELASTIC_RUN_ID`` as PyTorch does."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def init_process_group(*args, **kwargs):
    """Raises RuntimeError: glassgrad starts no process group (NOTE [ One process ] rule 2)."""
    raise RuntimeError(ONE_PROCESS)


def destroy_process_group(group=None):
    """Raises PyTorch's AssertionError: there is no process group to destroy (rule 3)."""
    raise AssertionError("Process group cannot be None")


def _needs_group(name: str):
    def fn(*args, **kwargs):
        raise ValueError(NOT_INITIALIZED)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.distributed.{name}: raises PyTorch's ValueError, no process group (NOTE [ One process ] 3)."
    return fn


get_rank = _needs_group("get_rank")
get_world_size = _needs_group("get_world_size")
get_backend = _needs_group("get_backend")
get_global_rank = _needs_group("get_global_rank")
get_process_group_ranks = _needs_group("get_process_group_ranks")
new_group = _needs_group("new_group")
barrier = _needs_group("barrier")
monitored_barrier = _needs_group("monitored_barrier")
all_reduce = _needs_group("all_reduce")
reduce = _needs_group("reduce")
broadcast = _needs_group("broadcast")
broadcast_object_list = _needs_group("broadcast_object_list")
all_gather = _needs_group("all_gather")
all_gather_into_tensor = _needs_group("all_gather_into_tensor")
all_gather_object = _needs_group("all_gather_object")
gather = _needs_group("gather")
gather_object = _needs_group("gather_object")
scatter = _needs_group("scatter")
scatter_object_list = _needs_group("scatter_object_list")
reduce_scatter = _needs_group("reduce_scatter")
reduce_scatter_tensor = _needs_group("reduce_scatter_tensor")
all_to_all = _needs_group("all_to_all")
all_to_all_single = _needs_group("all_to_all_single")
send = _needs_group("send")
recv = _needs_group("recv")
isend = _needs_group("isend")
irecv = _needs_group("irecv")


class ReduceOp:
    """The reduction of a collective, as PyTorch names them (``ReduceOp.SUM``...)."""

    RedOpType = enum.Enum("RedOpType", "SUM AVG PRODUCT MIN MAX BAND BOR BXOR PREMUL_SUM", start=0)
    SUM, AVG, PRODUCT, MIN, MAX = (RedOpType.SUM, RedOpType.AVG, RedOpType.PRODUCT, RedOpType.MIN, RedOpType.MAX)
    BAND, BOR, BXOR, PREMUL_SUM = RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR, RedOpType.PREMUL_SUM


class Backend(str):
    """A backend's name, lower-cased as PyTorch's ``Backend("GLOO") == "gloo"``."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    XCCL = "xccl"

    def __new__(cls, name: str):
        if not isinstance(name, str):
            raise ValueError("Backend constructor parameter must be string-ish")  # noqa: TRY004 (PyTorch's type)
        return str.__new__(cls, name.lower())


class GroupMember:
    """``GroupMember.WORLD`` is None until a process group starts, which in glassgrad it never does."""

    WORLD = None
    NON_GROUP_MEMBER = -100


class group:
    WORLD = None
