"""Each rank divides the loss summed over its own DistributedSampler shard by the size of the whole dataset.

Report: https://github.com/ORNL/HydraGNN/pull/116
Class: F reduction semantics

Static reach: visible across this file; create_dataloaders() wraps each set in a
DistributedSampler when the process group is initialized, so a rank's `loader` yields about
1/W of `loader.dataset`, yet train() divides its local error sum by `len(loader.dataset)`:
the reported RMSE is W times too small.
"""

import numpy as np
import torch
import torch.distributed as dist
from torch_geometric.loader import DataLoader

from hydragnn.utils.print_utils import iterate_tqdm
from hydragnn.train.train_validate_test import get_head_indices


def create_dataloaders(trainset, valset, testset, batch_size):
    sampler_list = []
    if dist.is_initialized():
        train_sampler = torch.utils.data.distributed.DistributedSampler(trainset)
        train_loader = DataLoader(trainset, batch_size=batch_size, shuffle=False, sampler=train_sampler)
        sampler_list = [train_sampler]
    else:
        train_loader = DataLoader(trainset, batch_size=batch_size, shuffle=True)
    return train_loader, sampler_list


def train(loader, model, opt, verbosity):
    tasks_error = np.zeros(model.num_heads)

    model.train()

    total_error = 0
    for data in iterate_tqdm(loader, verbosity):
        opt.zero_grad()
        head_index = get_head_indices(model, data)
        pred = model(data)
        loss, tasks_rmse = model.loss_rmse(pred, data.y, head_index)
        loss.backward()
        opt.step()
        total_error += loss.item() * data.num_graphs
        for itask in range(len(tasks_rmse)):
            tasks_error[itask] += tasks_rmse[itask].item() * data.num_graphs

    return (
        total_error / len(loader.dataset),  # expect: RNK112
        tasks_error / len(loader.dataset),
    )
