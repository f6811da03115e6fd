"""The force loss is a per-replica mean over that replica's atoms, which DDP then averages with equal weight across replicas.

Report: https://github.com/facebookresearch/fairchem/pull/269
Class: F reduction semantics

Static reach: partly; load_loss() picks `nn.L1Loss()` (reduction="mean" over the local
atoms) and _compute_loss() backpropagates it through the DDP model, which averages the
gradients over replicas. The tag-weighted branch next to it shows the correct global
normalization (all-reduced normalizer times world size). That replicas hold different
numbers of atoms is a property of the data.
"""

import torch
from torch import nn

from ocpmodels.common import distutils


class ForcesTrainer:
    def load_loss(self):
        self.loss_fn = {}
        self.loss_fn["force"] = self.config["optim"].get("loss_force", "mae")
        for loss, loss_name in self.loss_fn.items():
            if loss_name in ["l1", "mae"]:
                self.loss_fn[loss] = nn.L1Loss()
            else:
                raise NotImplementedError(f"Unknown loss function name: {loss_name}")

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
            loss.append(force_mult * self.loss_fn["force"](out["forces"], force_target))  # expect: RNK112

        loss = sum(loss)
        return loss

    def train_step(self, batch):
        with torch.cuda.amp.autocast(enabled=self.scaler is not None):
            out = self._forward(batch)  # self.model is wrapped in DistributedDataParallel
            loss = self._compute_loss(out, batch)
        loss = self.scaler.scale(loss) if self.scaler else loss
        self._backward(loss)
