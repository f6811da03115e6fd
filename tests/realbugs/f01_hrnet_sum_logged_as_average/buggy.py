"""The loss is all-reduced with SUM and logged as the average, world_size times too large.

Report: https://github.com/HRNet/HRNet-Semantic-Segmentation/issues/34
Class: F reduction semantics

Static reach: visible across one call; reduce_tensor() returns an all_reduce with the
default SUM op and no division, and its result feeds an average meter.
"""

import torch
import torch.distributed as dist


def reduce_tensor(inp):
    world_size = dist.get_world_size()
    if world_size < 2:
        return inp
    with torch.no_grad():
        reduced = inp.clone()
        dist.all_reduce(reduced)
    return reduced


def log_step(loss, ave_loss):
    reduced_loss = reduce_tensor(loss)
    ave_loss.update(reduced_loss.item())  # expect: RNK112
