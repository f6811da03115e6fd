"""Rank 0 does its I/O, every rank meets at the barrier, then every rank builds the dataset.

Report: https://github.com/Lightning-AI/pytorch-lightning/issues/20536
Class: A rank-divergent collective
"""

import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset

fabric = L.Fabric(accelerator="cuda", devices=2, strategy="ddp")
fabric.launch()


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = fabric.setup(model, optimizer)

    def make_dataset(self, x, y):
        if fabric.global_rank == 0:
            # do some I/O on one rank only
            prepare_files(x, y)
        fabric.barrier()  # make sure no one runs ahead
        # create the dataset on all ranks
        dataset = TensorDataset(x, y)
        return dataset

    def fit(self, x, y, epochs):
        dataset = self.make_dataset(x, y)
        loader = fabric.setup_dataloaders(DataLoader(dataset, batch_size=32))
        for _ in range(epochs):
            for xb, yb in loader:
                loss = torch.nn.functional.mse_loss(self.model(xb), yb)
                fabric.backward(loss)
                self.optimizer.step()
                self.optimizer.zero_grad()
