"""Each process calls new_group() with only its own pair, so the ranks argument differs.

Report: https://github.com/pytorch/pytorch/issues/25390
Class: B partial group creation

Static reach: visible; `group` is the slice of `perm` that contains `rank`, found by a
loop whose condition tests `rank`, so the ranks passed to new_group() depend on the rank.
"""

from datetime import timedelta

import torch
import torch.distributed as dist

rank = dist.get_rank()
world = dist.get_world_size()
perm = torch.randperm(world, generator=torch.Generator().manual_seed(0))
start = 0
while rank not in perm[start : start + 2]:
    start += 2
group = perm.tolist()[start : start + 2]
pg = dist.new_group(group, timeout=timedelta(seconds=30))  # expect: RNK105
dist.all_reduce(torch.ones(1), group=pg)
