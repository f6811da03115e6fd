"""reduce_tensor() divides the SUM by world_size, so the logged loss is the mean.

Report: https://github.com/HRNet/HRNet-Semantic-Segmentation/issues/34
Class: F reduction semantics
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
        reduced /= world_size
    return reduced


def log_step(loss, ave_loss):
    reduced_loss = reduce_tensor(loss)
    ave_loss.update(reduced_loss.item())
