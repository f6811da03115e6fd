"""FID is computed in a @rank_zero_only hook, but compute() syncs its states across all ranks.

Report: https://github.com/Lightning-AI/torchmetrics/issues/2684
Class: A rank-divergent collective

Static reach: partly; on_validation_end() is decorated with @rank_zero_only and tests
`self.global_rank == 0`; FrechetInceptionDistance() keeps the default
sync_on_compute=True, so its compute() all-gathers the metric states, on rank 0 alone.
"""

import pytorch_lightning as pl
import torch
from pytorch_lightning.utilities import rank_zero_only
from torchmetrics.image.fid import FrechetInceptionDistance


class LipSyncModule(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.fid = FrechetInceptionDistance(feature=2048, normalize=True)

    def validation_step(self, batch, batch_idx):
        self.last_val_batch = batch
        return self.compute_loss(batch)

    @rank_zero_only
    def on_validation_end(self) -> None:
        """On validation end."""
        if self.global_rank == 0:
            video = self.last_val_batch["video"]
            masks = self.last_val_batch["masks"]
            with torch.no_grad():
                images_pred = self(video.flatten(0, 1), masks.flatten(0, 1))
            images = video.flatten(0, 1)
            self.fid.update(images, real=True)
            self.fid.update(images_pred, real=False)
            fid = self.fid.compute()  # expect: RNK102
            self.fid.reset()
            self.logger.experiment.add_scalar("val/fid", fid, self.global_step)
