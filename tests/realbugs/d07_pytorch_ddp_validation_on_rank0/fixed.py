"""Rank 0 validates with the module DDP wraps (`model.module`), whose forward
does not communicate (the fix suggested in the report).

Report: https://github.com/pytorch/pytorch/issues/54059
Class: D implicit framework collective
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
                outputs = model.module(images)
                print(outputs.mean())
    dist.barrier()
