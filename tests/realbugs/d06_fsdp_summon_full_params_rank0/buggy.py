"""FSDP.summon_full_params(), which all-gathers, is entered on rank 0 only.

Report: https://github.com/pytorch/pytorch/issues/101294
Class: D implicit framework collective

Static reach: visible; the context manager (an FSDP all-gather) is under
`if dist.get_rank() == 0:`.
"""

import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


def log_grad_norms(model: FSDP, logger):
    if dist.get_rank() == 0:
        with FSDP.summon_full_params(model, with_grads=True):  # expect: RNK102
            for name, p in model.named_parameters():
                logger.log(name, p.grad.norm().item())
