"""The group-local destination is mapped to a global rank with get_global_rank().

Report: https://github.com/vllm-project/vllm/pull/2530
Class: C group-local or invalid root
"""

import torch
import torch.distributed as dist


def tensor_model_parallel_gather(input_, tp_group, dst=0, dim=-1):
    world_size = dist.get_world_size(tp_group)
    if dist.get_rank(tp_group) == dst:
        gather_list = [torch.empty_like(input_) for _ in range(world_size)]
    else:
        gather_list = None
    dist.gather(input_, gather_list, dst=dist.get_global_rank(tp_group, dst), group=tp_group)
    if dist.get_rank(tp_group) == dst:
        return torch.cat(gather_list, dim=dim)
    return None
