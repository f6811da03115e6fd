"""Every rank enumerates all nodes' rank lists and creates every intra-node group with new_subgroups_by_enumeration().

Report: https://github.com/NVIDIA/TransformerEngine/pull/1087
Class: B partial group creation
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
    unique_hosts = []
    for host in hostnames:
        if host not in unique_hosts:
            unique_hosts.append(host)
    num_nodes = len(unique_hosts)

    if num_nodes > 1:
        ranks_per_node_list = [[] for _ in range(num_nodes)]
        self_node_idx = -1
        for i, host in enumerate(hostnames):
            node_idx = unique_hosts.index(host)
            ranks_per_node_list[node_idx].append(i)
            if host == hostname:
                self_node_idx = node_idx
        assert self_node_idx >= 0, "Internal TE error!"

        intra_node_group, _ = torch.distributed.new_subgroups_by_enumeration(
            ranks_per_node_list, backend=bootstrap_backend
        )
        local_rank = torch.distributed.get_rank(intra_node_group)
        local_size = torch.distributed.get_world_size(intra_node_group)
        intra_node_ranks = torch.distributed.get_process_group_ranks(intra_node_group)

    else:
        self_node_idx = 0
        intra_node_group = world_group
        local_rank = world_rank
        local_size = world_size
        intra_node_ranks = list(range(world_size))

    return world_group, intra_node_group, local_rank, local_size, self_node_idx, num_nodes
