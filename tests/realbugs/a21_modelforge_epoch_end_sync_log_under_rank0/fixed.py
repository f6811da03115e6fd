"""Every rank logs the synced metrics; rank-0-only values use rank_zero_only=True.

Report: https://github.com/choderalab/modelforge/pull/313
Class: A rank-divergent collective
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
        self._log_metrics(self.loss_metrics, "loss")
        # this performs gather operations and logs only at rank == 0
        self._log_figures_for_each_phase(self.train_preds, self.train_targets, self.train_indices, "train")

        self._log_learning_rate()
        self._log_time()
        if self.trainer.is_global_zero:
            for key, weight in self.loss.weights_scheduling.items():
                self.log(f"loss/{key}/weight", weight[self.current_epoch], rank_zero_only=True)

    def _log_learning_rate(self):
        """Logs the current learning rate."""
        sch = self.lr_schedulers()
        if self.trainer.is_global_zero:
            try:
                self.log("lr", sch.get_last_lr()[0], on_epoch=True, prog_bar=True, rank_zero_only=True)
            except AttributeError:
                pass

    def _log_metrics(self, metrics: ModuleDict, phase: str):
        """Log all accumulated metrics for a given phase."""
        for prop, metric_collection in metrics.items():
            for metric_name, metric in metric_collection.items():
                metric_value = metric.compute()
                metric.reset()
                self.log(f"{phase}/{prop}/{metric_name}", metric_value, prog_bar=True, sync_dist=True)
