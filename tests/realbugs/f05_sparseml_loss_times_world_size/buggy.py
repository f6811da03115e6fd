"""A mean loss is multiplied by world_size before backward, while DDP also averages gradients.

Report: https://github.com/neuralmagic/sparseml/pull/135
Class: F reduction semantics

Static reach: visible in shape; `loss * dist.get_world_size()` feeds loss.backward().
The exact upstream line is inferred from the PR description.
"""

import torch.distributed as dist


class ModuleTrainer:
    def step(self, model, batch, optimizer, loss_fn):
        x, y = batch
        loss = loss_fn(model(x), y)
        if dist.is_initialized():
            loss = loss * dist.get_world_size()  # expect: RNK112
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss
