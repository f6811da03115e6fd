"""Every rank logs every configured dataloader, with empty statistics where it saw no samples.

Report: https://github.com/NVIDIA-TAO/tao-pytorch/pull/74
Class: A rank-divergent collective

"""

import numpy as np
import pytorch_lightning as pl


class OneFormerPlModel(pl.LightningModule):
    def on_validation_epoch_start(self) -> None:
        self.validation_step_outputs = {}

    def validation_step(self, batch, batch_idx, dataloader_idx=0):
        metrics = self._eval_step(batch)
        self.validation_step_outputs.setdefault(dataloader_idx, []).append(metrics)
        return metrics

    def _compute_and_log_metrics(self, outputs_by_dl, dataset_names, prefix=""):
        """Compute IoU metrics per dataloader and combined, then log them."""
        # Lightning can invoke this hook on a rank that received no samples.
        # Still enter every configured dataloader's collective with zero local
        # statistics so that ranks cannot diverge or deadlock.
        if dataset_names is not None:
            expected_indices = range(len(dataset_names))
        else:
            expected_indices = (0,)
        outputs_by_dl = {index: outputs_by_dl.get(index, []) for index in expected_indices}
        multi = dataset_names is not None and len(outputs_by_dl) > 1
        combined_intersect, combined_union, combined_label = 0, 0, 0

        for dl_idx in sorted(outputs_by_dl.keys()):
            total_intersect, total_union, total_label = 0, 0, 0
            for out in outputs_by_dl[dl_idx]:
                total_intersect += out["area_intersect"]
                total_union += out["area_union"]
                total_label += out["area_label"]

            combined_intersect += total_intersect
            combined_union += total_union
            combined_label += total_label

            if multi:
                ds_name = dataset_names[dl_idx]
                iou = total_intersect / total_union
                miou = float(np.nanmean(iou))
                self.log(
                    f"{prefix}mIoU/{ds_name}", miou,
                    on_step=False, on_epoch=True, prog_bar=False, sync_dist=True,
                    add_dataloader_idx=False,
                )

        combined_iou = combined_intersect / combined_union
        combined_miou = float(np.nanmean(combined_iou))
        self.log(
            f"{prefix}mIoU", combined_miou,
            on_step=False, on_epoch=True, prog_bar=True, sync_dist=True,
            add_dataloader_idx=False,
        )

    def on_validation_epoch_end(self):
        self._compute_and_log_metrics(self.validation_step_outputs, self._get_val_dataset_names())
        self.validation_step_outputs.clear()
