"""Ranks 0 and 1 broadcast on a group built from ranks 2 and 3, and nothing is exchanged.

Report: https://github.com/pytorch/pytorch/issues/67600
Class: B partial group creation

Static reach: visible; `incorrect_group = dist.new_group([2, 3])` is created by every rank,
but the broadcast on it runs under `if rank < 2:`, so only non-members reach it (torch
returns early for a rank that is not in the group, and the members never call it).
"""

import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def setup(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "17777"
    dist.init_process_group("nccl", rank=rank, world_size=world_size)


def subprocess_fn(rank):
    setup(rank, 4)
    test_tensor = torch.Tensor([rank]).cuda()
    print(f"Before broadcast data on rank {rank} is {test_tensor}.")
    incorrect_group = dist.new_group([2, 3])
    if rank < 2:
        dist.broadcast(test_tensor, 1, group=incorrect_group)  # expect: RNK102
    print(f"After broadcast data on rank {rank} is {test_tensor}.")


if __name__ == "__main__":
    mp.spawn(subprocess_fn, args=(), nprocs=4)
