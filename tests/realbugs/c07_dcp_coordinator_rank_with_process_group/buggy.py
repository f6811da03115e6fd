"""A group-local coordinator rank, kept on self, is used as the global `src` of a broadcast.

Report: https://github.com/pytorch/pytorch/pull/136854
Class: C group-local or invalid root

Static reach: visible across methods; `self.coordinator_rank` is compared with
`dist.get_rank(group)` in __init__ and passed as `src=` with `group=self.group` later.
"""

import torch.distributed as dist


class DistWrapper:
    def __init__(self, group, coordinator_rank=0):
        self.group = group
        self.coordinator_rank = coordinator_rank
        self.is_coordinator = dist.get_rank(group) == coordinator_rank

    def broadcast_object(self, obj):
        lst = [obj] if self.is_coordinator else [None]
        dist.broadcast_object_list(lst, src=self.coordinator_rank, group=self.group)  # expect: RNK110
        return lst[0]
