"""Each rank logs keys built from its own labels, so sync_dist all-reduces mismatch.

Report: https://github.com/Lightning-AI/pytorch-lightning/issues/19106
Class: A rank-divergent collective

Static reach: partly; the key set comes from `y.unique()` of the rank-local batch, which
is data and not a rank query, so only a linter that treats batch contents as per-rank
can see that the number of all-reduces inside log_dict(sync_dist=True) differs.
"""

import pytorch_lightning as pl


class Model(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = self.loss(self(x), y)
        metrics = {"val_loss": loss}
        for cls in y.unique().tolist():
            metrics[f"val_loss_cls{cls}"] = loss
        self.log_dict(metrics, sync_dist=True)  # expect: RNK102
