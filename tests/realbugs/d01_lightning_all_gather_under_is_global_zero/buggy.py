"""LightningModule.all_gather() is called under is_global_zero, so rank 0 waits forever.

Report: https://github.com/Lightning-AI/pytorch-lightning/issues/16541
Class: D implicit framework collective

Static reach: visible; self.all_gather() (a Lightning collective) sits under
`if self.trainer.is_global_zero:`.
"""

import pytorch_lightning as pl


class DummyModel(pl.LightningModule):
    def test_step(self, batch, batch_idx):
        x, y = batch
        return self.fc(x)

    def test_epoch_end(self, outputs):
        if self.trainer.is_global_zero:
            outputs = self.all_gather(outputs)  # expect: RNK102
            print(f"after gather, len = {len(outputs)}")
            return outputs
