"""Epoch-end metric logging with sync_dist=True runs only on global rank 0; training freezes.

Report: https://github.com/choderalab/modelforge/pull/313
Class: A rank-divergent collective

Static reach: visible; on_train_epoch_end() calls _log_metrics() and _log_learning_rate()
under `if self.global_rank == 0:`; both end in `self.log(..., sync_dist=True)` (and
_log_metrics in torchmetrics' compute(), which syncs across processes).
"""

import time

import lightning as pL
from torch.nn import ModuleDict


class TrainingAdapter(pL.LightningModule):
    def on_train_epoch_start(self):
        """Start the epoch timer."""
        self.epoch_start_time = time.time()

    def _log_time(self):
        epoch_time = time.time() - self.epoch_start_time
        if isinstance(self.logger, pL.pytorch.loggers.WandbLogger):
            self.logger.experiment.log({"epoch_time": epoch_time, "epoch": self.current_epoch})

    def on_train_epoch_end(self):
        """Logs metrics, learning rate, histograms, and figures at the end of the training epoch."""
        if self.global_rank == 0:
            self._log_metrics(self.loss_metrics, "loss")  # expect: RNK102
            self._log_learning_rate()
            self._log_time()
            for key, weight in self.loss.weights_scheduling.items():
                self.log(f"loss/{key}/weight", weight[self.current_epoch])

        # this performs gather operations and logs only at rank == 0
        self._log_figures_for_each_phase(self.train_preds, self.train_targets, self.train_indices, "train")

    def _log_learning_rate(self):
        """Logs the current learning rate."""
        sch = self.lr_schedulers()
        try:
            self.log("lr", sch.get_last_lr()[0], on_epoch=True, prog_bar=True, sync_dist=True)
        except AttributeError:
            pass

    def _log_metrics(self, metrics: ModuleDict, phase: str):
        """Log all accumulated metrics for a given phase."""
        for prop, metric_collection in metrics.items():
            for metric_name, metric in metric_collection.items():
                metric_value = metric.compute()
                metric.reset()
                self.log(f"{phase}/{prop}/{metric_name}", metric_value, prog_bar=True, sync_dist=True)
