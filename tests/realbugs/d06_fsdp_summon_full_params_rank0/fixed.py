"""Every rank enters FSDP.summon_full_params(); only rank 0 logs.

Report: https://github.com/pytorch/pytorch/issues/101294
Class: D implicit framework collective
"""

import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


def log_grad_norms(model: FSDP, logger):
    with FSDP.summon_full_params(model, with_grads=True):
        if dist.get_rank() == 0:
            for name, p in model.named_parameters():
                logger.log(name, p.grad.norm().item())
