"""Each rank keeps (weighted loss sum, window count); the ranks' totals are gathered and divided.

Report: https://github.com/Nixtla/neuralforecast/pull/1571
Class: F reduction semantics
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
        valid_loss_sum = torch.sum(valid_loss * batch_sizes)
        valid_loss = valid_loss_sum / batch_size

        if torch.isnan(valid_loss):
            raise Exception("Loss is NaN, training stopped.")

        valid_loss_log = valid_loss.detach()
        self.log("valid_loss", valid_loss_log.item(), batch_size=batch_size, prog_bar=True, on_epoch=True)
        self.validation_step_outputs.append(torch.stack([valid_loss_sum.detach().float(), batch_size.float()]))
        return valid_loss

    def on_validation_epoch_end(self):
        if self.val_size == 0:
            return
        stacked = torch.stack(self.validation_step_outputs)
        totals = self.all_gather(stacked.sum(dim=0)).reshape(-1, 2).sum(dim=0)
        loss_sum, count = totals.tolist()
        avg_loss = loss_sum / count
        self.log(
            "ptl/val_loss",
            avg_loss,
            batch_size=int(count),
        )
        self.valid_trajectories.append((self.global_step, avg_loss))
        self.validation_step_outputs.clear()
