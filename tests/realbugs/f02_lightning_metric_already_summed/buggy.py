"""A metric that Lightning already SUM-synced across ranks is all-reduced with SUM again.

Report: https://github.com/Lightning-AI/pytorch-lightning/issues/3713
Class: F reduction semantics

Static reach: partly; the explicit SUM all_reduce is visible, but that the value from
`self.accuracy_video(...)` is already synced (a Lightning class metric) is framework
knowledge.
"""

import pytorch_lightning as pl
import torch
import torch.distributed as dist


class Model(pl.LightningModule):
    def test_step(self, batch, batch_idx):
        x, y = batch
        vid_acc = self.accuracy_video(self(x), y)
        return {"test_vacc": vid_acc}

    def test_epoch_end(self, outputs):
        avg_acc = torch.stack([o["test_vacc"] for o in outputs]).mean()
        dist.all_reduce(avg_acc, op=dist.ReduceOp.SUM)  # expect: RNK112
        return {"test_acc": avg_acc}
