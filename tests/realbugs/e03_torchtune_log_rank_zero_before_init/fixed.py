"""Before init, log_rank_zero() falls back to the RANK that torchrun sets, not to 0.

Report: https://github.com/meta-pytorch/torchtune/pull/2964
Class: E import-time distributed state
"""

import logging
import os

import torch.distributed as dist


def log_rank_zero(logger: logging.Logger, msg: str) -> None:
    if dist.is_available() and dist.is_initialized():
        rank = dist.get_rank()
    else:
        rank = int(os.environ.get("RANK", "0"))
    if rank != 0:
        return
    logger.info(msg)


def recipe_main(cfg, logger):
    log_rank_zero(logger, str(cfg))
    dist.init_process_group("nccl")
