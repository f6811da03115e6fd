"""trainer.save_checkpoint(), which runs a strategy barrier, is called by world rank 0 only.

Report: https://github.com/ray-project/ray/issues/56997
Class: D implicit framework collective

Static reach: visible; `global_rank` comes from Ray's `get_world_rank()` and guards
trainer.save_checkpoint(), whose strategy.barrier() is inside Lightning.
"""

import os

import pytorch_lightning as pl
import ray.train


class ReportCallback(pl.Callback):
    def on_train_epoch_end(self, trainer, pl_module):
        should_checkpoint = trainer.current_epoch % 3 == 0
        global_rank = ray.train.get_context().get_world_rank()
        checkpoint = None
        if global_rank == 0 and should_checkpoint:
            ckpt_path = os.path.join(self.tmpdir, "ckpt.pt")
            trainer.save_checkpoint(ckpt_path, weights_only=False)  # expect: RNK102
            checkpoint = ray.train.Checkpoint.from_directory(self.tmpdir)
        ray.train.report(metrics=dict(trainer.callback_metrics), checkpoint=checkpoint)
