"""The loss all-reduces with the non-autograd dist.all_reduce, so gradients are 1/world_size off.

Report: https://github.com/lightly-ai/lightly/issues/1977
Class: F reduction semantics

Static reach: visible; an in-place torch.distributed.all_reduce on a tensor computed
from the loss inputs (which carry gradients), followed by `/ world`, inside a loss.
"""

import torch
import torch.distributed as dist


def barlow_twins_loss(z_a, z_b, lambda_param=5e-3, gather_distributed=True):
    n = z_a.shape[0]
    c = z_a.T @ z_b / n
    if gather_distributed and dist.is_initialized():
        world = dist.get_world_size()
        dist.all_reduce(c)  # expect: RNK112
        c = c / world
    on_diag = (torch.diagonal(c) - 1).pow(2).sum()
    off_diag = (c - torch.diag(torch.diagonal(c))).pow(2).sum()
    return on_diag + lambda_param * off_diag
