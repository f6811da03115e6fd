"""The mean loss is backpropagated as is; DDP's mean of gradients is already correct.

Report: https://github.com/neuralmagic/sparseml/pull/135
Class: F reduction semantics
"""

import torch.distributed as dist


class ModuleTrainer:
    def step(self, model, batch, optimizer, loss_fn):
        x, y = batch
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss
