"""Every rank calls trainer.save_checkpoint(); the rank guard is gone.

Report: https://github.com/ray-project/ray/issues/56997
Class: D implicit framework collective
"""

import os

import pytorch_lightning as pl
import ray.train


class ReportCallback(pl.Callback):
    def on_train_epoch_end(self, trainer, pl_module):
        should_checkpoint = trainer.current_epoch % 3 == 0
        checkpoint = None
        if should_checkpoint:
            ckpt_path = os.path.join(self.tmpdir, "ckpt.pt")
            trainer.save_checkpoint(ckpt_path, weights_only=False)
            checkpoint = ray.train.Checkpoint.from_directory(self.tmpdir)
        ray.train.report(metrics=dict(trainer.callback_metrics), checkpoint=checkpoint)
