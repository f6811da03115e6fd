"""Every rank logs the same key set, with rank 0's value, and without a per-key sync.

Report: https://github.com/Lightning-AI/pytorch-lightning/issues/7129
Class: A rank-divergent collective
"""

import pytorch_lightning as pl
import torch.distributed as dist


class Model(pl.LightningModule):
    def validation_epoch_end(self, outputs) -> None:
        rank = dist.get_rank()
        value = compute_metric(outputs) if rank == 0 else 0.0
        self.log_dict({"reduced_metric": value}, rank_zero_only=True)
