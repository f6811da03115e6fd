"""log_rank_zero() runs before init_process_group, falls back to rank 0, and logs on every rank.

Report: https://github.com/meta-pytorch/torchtune/pull/2964
Class: E import-time distributed state

Static reach: visible in one function; recipe_main() calls log_rank_zero(), whose rank
is `dist.get_rank() if dist.is_initialized() else 0`, before init_process_group().
The state is read too early at call time, not stored in a module global.
"""

import logging

import torch.distributed as dist


def log_rank_zero(logger: logging.Logger, msg: str) -> None:
    rank = dist.get_rank() if dist.is_available() and dist.is_initialized() else 0
    if rank != 0:
        return
    logger.info(msg)


def recipe_main(cfg, logger):
    log_rank_zero(logger, str(cfg))  # expect: RNK111
    dist.init_process_group("nccl")
