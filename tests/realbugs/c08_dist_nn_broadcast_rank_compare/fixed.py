"""The rank kept for the comparison is global, like `src`.

Report: https://github.com/pytorch/pytorch/issues/130515
Class: C group-local or invalid root
"""

import torch
import torch.distributed as dist


class _Broadcast(torch.autograd.Function):
    @staticmethod
    def forward(ctx, src, group, tensor):
        ctx.src = src
        ctx.group = group
        ctx.rank = dist.get_rank()
        tensor = tensor.clone()
        dist.broadcast(tensor, src, group=group)
        return tensor

    @staticmethod
    def backward(ctx, grad_output):
        gx = grad_output.clone()
        dist.reduce(gx, ctx.src, group=ctx.group)
        if ctx.src != ctx.rank:
            gx.zero_()
        return (None, None, gx)
