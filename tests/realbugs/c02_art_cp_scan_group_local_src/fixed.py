"""The group-local index is mapped to a global rank with get_global_rank().

Report: https://github.com/OpenPipe/ART/issues/919
Class: C group-local or invalid root
"""

import torch
import torch.distributed as dist


def chain_states(state: torch.Tensor, cp_group):
    cp_rank = dist.get_rank(cp_group)
    cp_size = dist.get_world_size(cp_group)
    for i in range(cp_size - 1):
        buf = state if cp_rank == i else torch.empty_like(state)
        dist.broadcast(buf, src=dist.get_global_rank(cp_group, i), group=cp_group)
        if cp_rank == i + 1:
            state = combine(buf, state)
    return state
