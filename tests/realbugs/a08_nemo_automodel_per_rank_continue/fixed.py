"""The ranks MIN-reduce a has-valid-anchor flag and skip a batch all together.

Report: https://github.com/NVIDIA-NeMo/Automodel/pull/2468
Class: A rank-divergent collective
"""

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def train_epoch(model: DistributedDataParallel, loader, optimizer):
    for batch in loader:
        ok = torch.tensor([int(has_valid_anchor(batch))], device="cuda")
        dist.all_reduce(ok, op=dist.ReduceOp.MIN)
        if ok.item() == 0:
            continue
        loss = model(batch)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
