"""The epoch validation loss is an unweighted mean of batch means, averaged over devices.

Report: https://github.com/Nixtla/neuralforecast/pull/1571
Class: F reduction semantics

Static reach: partly; validation_step() stores each batch's weighted mean loss,
on_validation_epoch_end() takes `losses.mean()` over them and logs it with
`sync_dist=True`, which averages the per-rank means with equal weight whatever the
number of windows each rank (and each batch) held.
"""

import pytorch_lightning as pl
import torch


class BaseModel(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        valid_losses = []
        batch_sizes = []
        for window_batch in self._iter_val_windows(batch):
            valid_losses.append(self._compute_valid_loss(window_batch))
            batch_sizes.append(len(window_batch))
        valid_loss = torch.stack(valid_losses)
        batch_sizes = torch.tensor(batch_sizes, device=valid_loss.device)
        batch_size = torch.sum(batch_sizes)
        valid_loss = torch.sum(valid_loss * batch_sizes) / batch_size

        if torch.isnan(valid_loss):
            raise Exception("Loss is NaN, training stopped.")

        valid_loss_log = valid_loss.detach()
        self.log("valid_loss", valid_loss_log.item(), batch_size=batch_size, prog_bar=True, on_epoch=True)
        self.validation_step_outputs.append(valid_loss_log)
        return valid_loss

    def on_validation_epoch_end(self):
        if self.val_size == 0:
            return
        losses = torch.stack(self.validation_step_outputs)
        avg_loss = losses.mean().detach().item()
        self.log("ptl/val_loss", avg_loss, batch_size=losses.size(0), sync_dist=True)  # expect: RNK112
        self.valid_trajectories.append((self.global_step, avg_loss))
        self.validation_step_outputs.clear()
