"""Rank 0 returns the dataset before fabric.barrier(), so the other ranks wait there alone.

Report: https://github.com/Lightning-AI/pytorch-lightning/issues/20536
Class: A rank-divergent collective

Static reach: visible; make_dataset() returns under `if fabric.global_rank == 0:`, before
`fabric.barrier()`, so only the non-zero ranks reach the barrier (and they get None back).
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
            # In actual program, there is some I/O so I used barrier
            dataset = TensorDataset(x, y)
            return dataset
        fabric.barrier()  # expect: RNK102

    def fit(self, x, y, epochs):
        dataset = self.make_dataset(x, y)
        loader = fabric.setup_dataloaders(DataLoader(dataset, batch_size=32))
        for _ in range(epochs):
            for xb, yb in loader:
                loss = torch.nn.functional.mse_loss(self.model(xb), yb)
                fabric.backward(loss)
                self.optimizer.step()
                self.optimizer.zero_grad()
