"""Each rank divides its local error sum by the number of samples it actually processed.

Report: https://github.com/ORNL/HydraGNN/pull/116
Class: F reduction semantics
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
    total_error = 0
    tasks_error = np.zeros(model.num_heads)
    num_samples_local = 0
    model.train()
    for data in iterate_tqdm(loader, verbosity):
        opt.zero_grad()
        head_index = get_head_indices(model, data)
        pred = model(data)
        loss, tasks_rmse = model.loss_rmse(pred, data.y, head_index)
        loss.backward()
        opt.step()
        total_error += loss.item() * data.num_graphs
        num_samples_local += data.num_graphs
        for itask in range(len(tasks_rmse)):
            tasks_error[itask] += tasks_rmse[itask].item() * data.num_graphs
    return (
        total_error / num_samples_local,
        tasks_error / num_samples_local,
    )
