"""Ranks 0 and 1 broadcast on the group that holds them, so the broadcast happens.

Report: https://github.com/pytorch/pytorch/issues/67600
Class: B partial group creation
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
    correct_group = dist.new_group([0, 1])
    if rank < 2:
        dist.broadcast(test_tensor, 1, group=correct_group)
    print(f"After broadcast data on rank {rank} is {test_tensor}.")


if __name__ == "__main__":
    mp.spawn(subprocess_fn, args=(), nprocs=4)
