"""Every rank reads trainer.log_dir; only the printing helper is rank-zero-only.

Report: https://github.com/Lightning-AI/pytorch-lightning/issues/18148
Class: D implicit framework collective
"""

import pytorch_lightning as pl
from pytorch_lightning.utilities import rank_zero_only


class BoringModel(pl.LightningModule):
    def on_fit_start(self):
        self.out_dir = self.trainer.log_dir
        self._print_dir()

    @rank_zero_only
    def _print_dir(self):
        print(self.out_dir)
