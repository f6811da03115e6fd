"""Only rank 0 validates, through the DDP-wrapped model: DDP's forward first
broadcasts the module's buffers (the BatchNorm statistics), so rank 0 waits for
ranks that are already in the barrier.

Report: https://github.com/pytorch/pytorch/issues/54059
Class: D implicit framework collective

Static reach: visible; `model = DDP(net)` is tracked by name and its forward is
called under `if rank == 0:`.
"""

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP


def train(rank, train_loader, val_loader, optimizer):
    net = nn.Sequential(nn.Conv2d(3, 16, 3), nn.BatchNorm2d(16), nn.ReLU())
    model = DDP(net)
    for images in train_loader:
        model(images).sum().backward()
        optimizer.step()
    if rank == 0:
        with torch.no_grad():
            for images in val_loader:
                outputs = model(images)  # expect: RNK102 (medium)
                print(outputs.mean())
    dist.barrier()
