"""Ranks 0 and 3 create group [0, 3] while ranks 1 and 2 create [1, 2]: ranks differ per rank.

Report: https://github.com/pytorch/pytorch/issues/130102
Class: B partial group creation

Static reach: visible; `grp_ranks` is set in both arms of an `if` on `rank`
(from `os.environ["RANK"]`) and passed to new_group().
"""

import os

import torch.distributed as dist

dist.init_process_group(backend="nccl")
rank = int(os.environ["RANK"])

if rank == 0 or rank == 3:
    grp_ranks = [0, 3]
else:
    grp_ranks = [1, 2]

grp = dist.new_group(ranks=grp_ranks)  # expect: RNK105
dist.barrier(group=grp)
