"""Rank 0 logs inside an `if` with no early return; every rank then reaches the barrier.

Report: https://github.com/talmolab/sleap-nn/pull/437
Class: A rank-divergent collective
"""

import pytorch_lightning as pl


class WandBVizCallback(pl.Callback):
    def on_train_epoch_end(self, trainer, pl_module):
        if trainer.is_global_zero:
            logger = self.get_wandb_logger(trainer)
            if logger is not None:
                logger.log_image(self.render(pl_module))
        trainer.strategy.barrier()
