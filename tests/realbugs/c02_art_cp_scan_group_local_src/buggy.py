"""The context-parallel scan broadcasts from `src=i`, a group-local index, as a global rank.

Report: https://github.com/OpenPipe/ART/issues/919
Class: C group-local or invalid root

Static reach: visible; `i` ranges over `dist.get_world_size(cp_group)` and is compared
with `dist.get_rank(cp_group)`, then used as `src=` with `group=cp_group`.
"""

import torch
import torch.distributed as dist


def chain_states(state: torch.Tensor, cp_group):
    cp_rank = dist.get_rank(cp_group)
    cp_size = dist.get_world_size(cp_group)
    for i in range(cp_size - 1):
        buf = state if cp_rank == i else torch.empty_like(state)
        dist.broadcast(buf, src=i, group=cp_group)  # expect: RNK110
        if cp_rank == i + 1:
            state = combine(buf, state)
    return state
