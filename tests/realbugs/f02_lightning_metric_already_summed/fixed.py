"""The metric only accumulates per step and is computed, synced once, at epoch end.

Report: https://github.com/Lightning-AI/pytorch-lightning/issues/3713
Class: F reduction semantics
"""

import pytorch_lightning as pl


class Model(pl.LightningModule):
    def test_step(self, batch, batch_idx):
        x, y = batch
        self.accuracy_video.update(self(x), y)
        return None

    def test_epoch_end(self, outputs):
        avg_acc = self.accuracy_video.compute()
        return {"test_acc": avg_acc}
