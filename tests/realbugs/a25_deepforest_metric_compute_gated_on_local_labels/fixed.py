"""Every rank calls the synced metric compute(), even with an empty validation shard.

Report: https://github.com/weecology/DeepForest/issues/1407
Class: A rank-divergent collective
"""

import pytorch_lightning as pl
import torch


class deepforest(pl.LightningModule):
    def _compute_epoch_metrics(self) -> dict:
        """Compute metrics and returns a Lightning-loggable dictionary."""
        metrics = {}

        if self.model.task == "box":
            # IoU and mAP: every rank joins the sync, whatever its local state
            metrics.update(self.iou_metric.compute())
            output = self.mAP_metric.compute()

            # Remove classes from output dict
            output = {key: value for key, value in output.items() if not key == "classes"}
            metrics.update(output)
            metrics.update(self.precision_recall_metric.compute())

        elif self.model.task == "point":
            metrics["val_mae"] = self.mae_metric.compute()
            metrics.update(self.precision_recall_metric.compute())

        return metrics

    def on_validation_epoch_end(self):
        if self.trainer.sanity_checking:
            return
        if (self.current_epoch + 1) % self.config.validation.val_accuracy_interval == 0:
            metrics = self._compute_epoch_metrics()
            for key, value in metrics.items():
                if isinstance(value, torch.Tensor) and value.numel() == 1:
                    self.log(key, value.to(self.device), sync_dist=True)
        self.iou_metric.reset()
        self.mAP_metric.reset()
        self.precision_recall_metric.reset()
