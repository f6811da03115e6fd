"""A module-level dist logger stores the rank at import, before the process group exists.

Report: https://github.com/hpcaitech/ColossalAI/pull/5782
Class: E import-time distributed state

Static reach: visible in this file; DistributedLogger.__init__ stores
`self.rank = dist.get_rank() if dist.is_initialized() else 0`, get_dist_logger() returns
a per-name singleton, and `_logger = get_dist_logger()` runs when
colossalai.nn.optimizer is imported. Every rank then keeps rank 0, so
`_logger.info(..., ranks=[0])` prints on all of them.
"""

import logging
from typing import List

import torch.distributed as dist


class DistributedLogger:
    __instances = dict()

    @staticmethod
    def get_instance(name: str):
        if name in DistributedLogger.__instances:
            return DistributedLogger.__instances[name]
        else:
            logger = DistributedLogger(name=name)
            return logger

    def __init__(self, name):
        self._name = name
        self._logger = logging.getLogger(name)
        self._logger.setLevel(logging.INFO)
        DistributedLogger.__instances[name] = self
        self.rank = dist.get_rank() if dist.is_initialized() else 0

    def _log(self, level, message: str, ranks: List[int] = None) -> None:
        if ranks is None:
            getattr(self._logger, level)(message)
        else:
            if self.rank in ranks:
                getattr(self._logger, level)(message)

    def info(self, message: str, ranks: List[int] = None) -> None:
        self._log("info", message, ranks)


def get_dist_logger(name: str = "colossalai") -> DistributedLogger:
    return DistributedLogger.get_instance(name=name)


optim2DistOptim = {}
_logger = get_dist_logger()  # expect: RNK111


def cast_to_distributed(optim):
    if optim.__class__ in optim2DistOptim:
        _logger.info(f"Converting optimizer {optim.__class__.__name__} to its distributed version.", ranks=[0])
        return optim2DistOptim[optim.__class__](optim.param_groups)

    return optim
