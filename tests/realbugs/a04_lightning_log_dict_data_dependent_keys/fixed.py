"""Every rank logs the same static key set, so the synced all-reduces line up.

Report: https://github.com/Lightning-AI/pytorch-lightning/issues/19106
Class: A rank-divergent collective
"""

import pytorch_lightning as pl


class Model(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = self.loss(self(x), y)
        metrics = {"val_loss": loss}
        for cls in range(self.num_classes):
            mask = y == cls
            metrics[f"val_loss_cls{cls}"] = loss * mask.any()
        self.log_dict(metrics, sync_dist=True)
