"""Every rank reads trainer.callback_metrics; only rank 0 writes the CSV row.

Report: https://github.com/talmolab/sleap-nn/pull/476
Class: D implicit framework collective
"""

import pytorch_lightning as pl


class CSVLoggerCallback(pl.Callback):
    def on_validation_epoch_end(self, trainer, pl_module):
        metrics = trainer.callback_metrics
        if trainer.is_global_zero:
            self.writer.writerow({k: float(v) for k, v in metrics.items()})
        trainer.strategy.barrier()
