"""A rank that hits a bad micro-batch skips backward(), the DDP gradient all-reduce.

Report: https://github.com/NVIDIA-NeMo/Automodel/pull/2468
Class: A rank-divergent collective

Static reach: partly; the `continue` is taken on a data-dependent exception, and the
collective is implicit in backward() of a DDP-wrapped model.
"""

import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def train_epoch(model: DistributedDataParallel, loader, optimizer):
    for batch in loader:
        try:
            loss = model(batch)
        except NoValidAnchorsError:
            continue
        loss.backward()  # expect: RNK102
        optimizer.step()
        optimizer.zero_grad()
