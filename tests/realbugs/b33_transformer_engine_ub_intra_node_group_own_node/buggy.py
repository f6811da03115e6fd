"""initialize_ub() creates the intra-node group with only that node's ranks calling new_group().

Report: https://github.com/NVIDIA/TransformerEngine/pull/1087
Class: B partial group creation

Static reach: visible; `intra_node_ranks` holds the global ranks whose gathered hostname
equals this rank's own hostname, so on a multi-node job each node's ranks call
new_group() with a different rank list and no rank creates the other nodes' groups
(PyTorch requires every rank to call new_group() for every group).
"""

import socket
from typing import Union

import torch


def initialize_ub(
    shape: list,
    tp_size: int,
    use_fp8: bool = False,
    dtype: torch.dtype = torch.bfloat16,
    ub_cfgs=None,
    bootstrap_backend: Union[str, torch.distributed.Backend] = None,
) -> None:
    """Initialize communicators for TP comm overlap using userbuffers."""
    assert torch.distributed.is_initialized(), "torch.distributed must be initialized before Userbuffers"
    if bootstrap_backend is None:
        bootstrap_backend = "nccl"
        if torch.distributed.is_gloo_available():
            bootstrap_backend = "gloo"
        elif torch.distributed.is_mpi_available():
            bootstrap_backend = "mpi"

    world_group = torch.distributed.new_group(backend=bootstrap_backend)
    world_rank = torch.distributed.get_rank(world_group)
    world_size = torch.distributed.get_world_size(world_group)

    # Construct an intra-node communicator based on global ranks that share the same hostname
    hostname = socket.gethostname()

    hostnames = [None for _ in range(world_size)]
    torch.distributed.all_gather_object(hostnames, hostname, world_group)
    intra_node_ranks = []
    for i, host in enumerate(hostnames):
        if host == hostname:
            intra_node_ranks.append(i)
    if len(intra_node_ranks) == world_size:
        intra_node_group = world_group
        local_rank = world_rank
        local_size = world_size
        intra_node_ranks = list(range(world_size))
    else:
        intra_node_group = torch.distributed.new_group(  # expect: RNK105
            backend=bootstrap_backend, ranks=intra_node_ranks
        )
        local_rank = torch.distributed.get_rank(intra_node_group)
        local_size = torch.distributed.get_world_size(intra_node_group)

    node_id = world_rank // local_size
    num_nodes = world_size // local_size
    return world_group, intra_node_group, local_rank, local_size, node_id, num_nodes
