"""The rank is resolved at call time, from the process group when it is initialized.

Report: https://github.com/Lightning-AI/pytorch-lightning/pull/19030
Class: E import-time distributed state
"""

import os
from functools import wraps

import torch.distributed as dist


def _get_rank():
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank()
    return int(os.environ.get("RANK", os.environ.get("LOCAL_RANK", 0)))


def rank_zero_only(fn):
    @wraps(fn)
    def wrapped(*args, **kwargs):
        if _get_rank() == 0:
            return fn(*args, **kwargs)

    return wrapped
