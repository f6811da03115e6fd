"""Every rank calls all_gather(); only rank 0 prints.

Report: https://github.com/Lightning-AI/pytorch-lightning/issues/16541
Class: D implicit framework collective
"""

import pytorch_lightning as pl


class DummyModel(pl.LightningModule):
    def test_step(self, batch, batch_idx):
        x, y = batch
        return self.fc(x)

    def test_epoch_end(self, outputs):
        outputs = self.all_gather(outputs)
        if self.trainer.is_global_zero:
            print(f"after gather, len = {len(outputs)}")
        return outputs
