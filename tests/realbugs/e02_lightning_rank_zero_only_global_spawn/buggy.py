"""rank_zero_only.rank is read from env vars at import, so spawned children all keep rank 0.

Report: https://github.com/Lightning-AI/pytorch-lightning/pull/19030
Class: E import-time distributed state

Static reach: visible; a module-level statement of a library module
(utilities/rank_zero.py) stores `_get_rank()`, which reads `os.environ["RANK"]`, into
a global (an attribute of the module-level function `rank_zero_only`).
"""

import os
from functools import wraps


def _get_rank():
    for key in ("RANK", "LOCAL_RANK", "SLURM_PROCID"):
        if key in os.environ:
            return int(os.environ[key])
    return 0


def rank_zero_only(fn):
    @wraps(fn)
    def wrapped(*args, **kwargs):
        if rank_zero_only.rank == 0:
            return fn(*args, **kwargs)

    return wrapped


rank_zero_only.rank = _get_rank()  # expect: RNK111
