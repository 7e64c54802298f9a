"""``engine.distributed``: importable as ``torch.distributed``; glassgrad runs in one process.

NOTE [ One process ] in engine/distributed/process_group.py says what each name does.
"""
from .process_group import (  # noqa: F401
    Backend,
    GroupMember,
    ReduceOp,
    all_gather,
    all_gather_into_tensor,
    all_gather_object,
    all_reduce,
    all_to_all,
    all_to_all_single,
    barrier,
    broadcast,
    broadcast_object_list,
    destroy_process_group,
    gather,
    gather_object,
    get_backend,
    get_global_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    irecv,
    is_available,
    is_gloo_available,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
    is_torchelastic_launched,
    is_ucc_available,
    is_xccl_available,
    isend,
    monitored_barrier,
    new_group,
    recv,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
    scatter_object_list,
    send,
)


def __getattr__(name):
    from ..missing import missing
    raise missing("torch.distributed", name)   # NOTE [ Missing names ] in engine/missing.py
