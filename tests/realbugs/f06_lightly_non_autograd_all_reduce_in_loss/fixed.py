"""The loss uses torch.distributed.nn.all_reduce, whose backward is an all_reduce too.

Report: https://github.com/lightly-ai/lightly/issues/1977
Class: F reduction semantics
"""

import torch
import torch.distributed as dist
import torch.distributed.nn


def barlow_twins_loss(z_a, z_b, lambda_param=5e-3, gather_distributed=True):
    n = z_a.shape[0]
    c = z_a.T @ z_b / n
    if gather_distributed and dist.is_initialized():
        world = dist.get_world_size()
        c = torch.distributed.nn.all_reduce(c) / world
    on_diag = (torch.diagonal(c) - 1).pow(2).sum()
    off_diag = (c - torch.diag(torch.diagonal(c))).pow(2).sum()
    return on_diag + lambda_param * off_diag
