"""The coordinator's global rank is computed once and used as the broadcast's `src`.

Report: https://github.com/pytorch/pytorch/pull/136854
Class: C group-local or invalid root
"""

import torch.distributed as dist


class DistWrapper:
    def __init__(self, group, coordinator_rank=0):
        self.group = group
        self.coordinator_rank = coordinator_rank
        self.global_coordinator_rank = dist.get_global_rank(group, coordinator_rank)
        self.is_coordinator = dist.get_rank(group) == coordinator_rank

    def broadcast_object(self, obj):
        lst = [obj] if self.is_coordinator else [None]
        dist.broadcast_object_list(lst, src=self.global_coordinator_rank, group=self.group)
        return lst[0]
