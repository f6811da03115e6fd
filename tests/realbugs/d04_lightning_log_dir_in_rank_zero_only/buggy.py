"""trainer.log_dir broadcasts from rank 0, but it is read in a @rank_zero_only hook.

Report: https://github.com/Lightning-AI/pytorch-lightning/issues/18148
Class: D implicit framework collective

Static reach: partly; @rank_zero_only is visible, but the collective is a
strategy.broadcast inside the `log_dir` property, an attribute read and not a call.
"""

import pytorch_lightning as pl
from pytorch_lightning.utilities import rank_zero_only


class BoringModel(pl.LightningModule):
    @rank_zero_only
    def on_fit_start(self):
        self.out_dir = self.trainer.log_dir  # expect: RNK102
        print(self.out_dir)
