"""Backward compares the global `src` with a group-local rank, zeroing the root's gradient.

Report: https://github.com/pytorch/pytorch/issues/130515
Class: C group-local or invalid root

Static reach: visible; `ctx.rank = dist.get_rank(group=group)` is group-local and
`ctx.src` is the global root of dist.broadcast/dist.reduce. The mix is in a comparison,
not in a root argument: the collectives themselves are correct.
"""

import torch
import torch.distributed as dist


class _Broadcast(torch.autograd.Function):
    @staticmethod
    def forward(ctx, src, group, tensor):
        ctx.src = src
        ctx.group = group
        ctx.rank = dist.get_rank(group=group)
        tensor = tensor.clone()
        dist.broadcast(tensor, src, group=group)
        return tensor

    @staticmethod
    def backward(ctx, grad_output):
        gx = grad_output.clone()
        dist.reduce(gx, ctx.src, group=ctx.group)
        if ctx.src != ctx.rank:  # expect: RNK110
            gx.zero_()
        return (None, None, gx)
