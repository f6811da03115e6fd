"""Non-zero ranks (and rank 0 without a wandb logger) return before the epoch-end barrier.

Report: https://github.com/talmolab/sleap-nn/pull/437
Class: A rank-divergent collective

Static reach: visible; `if not trainer.is_global_zero: return` is a rank-dependent early
exit before trainer.strategy.barrier() (the second return depends on logger config).
"""

import pytorch_lightning as pl


class WandBVizCallback(pl.Callback):
    def on_train_epoch_end(self, trainer, pl_module):
        if not trainer.is_global_zero:
            return
        logger = self.get_wandb_logger(trainer)
        if logger is None:
            return
        logger.log_image(self.render(pl_module))
        trainer.strategy.barrier()  # expect: RNK102
