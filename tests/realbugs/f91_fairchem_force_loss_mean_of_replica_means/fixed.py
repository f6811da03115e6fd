"""Under DDP the loss is a per-replica sum divided by the all-reduced sample count, times the world size.

Report: https://github.com/facebookresearch/fairchem/pull/269
Class: F reduction semantics
"""

import torch
from torch import nn

from ocpmodels.common import distutils


class DDPLoss(nn.Module):
    def __init__(self, loss_fn, reduction="mean"):
        super().__init__()
        self.loss_fn = loss_fn
        self.loss_fn.reduction = "sum"
        self.reduction = reduction
        assert reduction in ["mean", "sum"]

    def forward(self, input: torch.Tensor, target: torch.Tensor):
        loss = self.loss_fn(input, target)
        if self.reduction == "mean":
            num_samples = input.shape[0]
            num_samples = distutils.all_reduce(num_samples, device=input.device)
            # Multiply by world size since gradients are averaged
            # across DDP replicas
            return loss * distutils.get_world_size() / num_samples
        else:
            return loss


class ForcesTrainer:
    def load_loss(self):
        self.loss_fn = {}
        self.loss_fn["force"] = self.config["optim"].get("loss_force", "mae")
        for loss, loss_name in self.loss_fn.items():
            if loss_name in ["l1", "mae"]:
                self.loss_fn[loss] = nn.L1Loss()
            else:
                raise NotImplementedError(f"Unknown loss function name: {loss_name}")
            if distutils.initialized():
                self.loss_fn[loss] = DDPLoss(self.loss_fn[loss])

    def _compute_loss(self, out, batch_list):
        loss = []
        force_target = torch.cat([batch.force.to(self.device) for batch in batch_list], dim=0)
        tag_specific_weights = self.config["task"].get("tag_specific_weights", [])
        if tag_specific_weights != []:
            batch_tags = torch.cat([batch.tags.float().to(self.device) for batch in batch_list], dim=0)
            weight = torch.zeros_like(batch_tags)
            weight[batch_tags == 0] = tag_specific_weights[0]
            weight[batch_tags == 1] = tag_specific_weights[1]
            weight[batch_tags == 2] = tag_specific_weights[2]

            loss_force_list = torch.abs(out["forces"] - force_target)
            train_loss_force_unnormalized = torch.sum(loss_force_list * weight.view(-1, 1))
            train_loss_force_normalizer = 3.0 * weight.sum()

            # add up normalizer to obtain global normalizer
            distutils.all_reduce(train_loss_force_normalizer)

            # perform loss normalization before backprop
            train_loss_force_normalized = train_loss_force_unnormalized * (
                distutils.get_world_size() / train_loss_force_normalizer
            )
            loss.append(train_loss_force_normalized)
        else:
            # Force coefficient = 30 has been working well for us.
            force_mult = self.config["optim"].get("force_coefficient", 30)
            loss.append(force_mult * self.loss_fn["force"](out["forces"], force_target))

        loss = sum(loss)
        return loss

    def train_step(self, batch):
        with torch.cuda.amp.autocast(enabled=self.scaler is not None):
            out = self._forward(batch)  # self.model is wrapped in DistributedDataParallel
            loss = self._compute_loss(out, batch)
        loss = self.scaler.scale(loss) if self.scaler else loss
        self._backward(loss)
