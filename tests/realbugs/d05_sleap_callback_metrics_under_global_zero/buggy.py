"""trainer.callback_metrics all-reduces synced metrics, but only rank 0 reads it.

Report: https://github.com/talmolab/sleap-nn/pull/476
Class: D implicit framework collective

Static reach: partly; `if trainer.is_global_zero:` is visible, but the all_reduce hides
in the `callback_metrics` property (compute() -> strategy.reduce()), an attribute read.
"""

import pytorch_lightning as pl


class CSVLoggerCallback(pl.Callback):
    def on_validation_epoch_end(self, trainer, pl_module):
        if trainer.is_global_zero:
            metrics = trainer.callback_metrics  # expect: RNK102
            self.writer.writerow({k: float(v) for k, v in metrics.items()})
        trainer.strategy.barrier()
