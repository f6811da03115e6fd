"""Every process creates every pair group, in the same order, and keeps its own.

Report: https://github.com/pytorch/pytorch/issues/25390
Class: B partial group creation
"""

from datetime import timedelta

import torch
import torch.distributed as dist

rank = dist.get_rank()
world = dist.get_world_size()
perm = torch.randperm(world, generator=torch.Generator().manual_seed(0)).tolist()
pg = None
for start in range(0, world, 2):
    ranks = perm[start : start + 2]
    g = dist.new_group(ranks, timeout=timedelta(seconds=30))
    if rank in ranks:
        pg = g
dist.all_reduce(torch.ones(1), group=pg)
