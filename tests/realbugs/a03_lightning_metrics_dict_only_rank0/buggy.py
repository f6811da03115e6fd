"""Rank 0 logs a key the other ranks do not, so sync_dist runs mismatched all-reduces.

Report: https://github.com/Lightning-AI/pytorch-lightning/issues/7129
Class: A rank-divergent collective

Static reach: visible; every rank reaches log_dict(), but sync_dist=True all-reduces once
per key and the key set is filled only under `if rank == 0:`.
"""

import pytorch_lightning as pl
import torch.distributed as dist


class Model(pl.LightningModule):
    def validation_epoch_end(self, outputs) -> None:
        rank = dist.get_rank()
        res = {}
        if rank == 0:
            res = {"reduced_metric": 0.1}
        self.log_dict(res, sync_dist=True)  # expect: RNK102
