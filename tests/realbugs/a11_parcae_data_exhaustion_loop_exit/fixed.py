"""Every step the ranks MAX-reduce an exhausted flag and stop together.

Report: https://github.com/sandyresearch/parcae/issues/12
Class: A rank-divergent collective
"""

import torch
import torch.distributed as dist


def train(model, files, optimizer):
    rank, world = dist.get_rank(), dist.get_world_size()
    it = iter(make_loader(files[rank::world]))
    while True:
        batch = next(it, None)
        done = torch.tensor([int(batch is None)], device="cuda")
        dist.all_reduce(done, op=dist.ReduceOp.MAX)
        if done.item():
            break
        loss = model(batch)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
