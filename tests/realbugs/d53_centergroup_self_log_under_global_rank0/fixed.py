"""The rank-0-only validation metrics are logged with rank_zero_only=True, which skips the sync.

Report: https://github.com/dvl-tum/center-group/pull/2
Class: D implicit framework collective
"""

from pytorch_lightning import LightningModule


class CenterGroup(LightningModule):
    def validation_step(self, batch, batch_idx):
        return self.forward(**batch, return_loss=False)

    def validation_epoch_end(self, outputs):
        if self.trainer.test_dataloaders:
            dataset = self.trainer.test_dataloaders[0].dataset
        else:
            dataset = self.trainer.val_dataloaders[0].dataset

        all_out = collect_results_gpu(outputs, len(dataset))

        if self.global_rank == 0:
            results = dataset.evaluate(all_out, self.logger.root_dir)
            self._log_metrics(results, 'val', prefix=None, rank_zero_only=True)

            return results

    def _log_metrics(self, loss_dict, train_val, prefix='loss', rank_zero_only=False):
        for loss_name, loss_val in loss_dict.items():
            log_str = f"{loss_name}/{train_val}"
            if prefix:
                log_str = f"{prefix}/{log_str}"
            self.log(log_str, loss_val, rank_zero_only=rank_zero_only)
