"""The whole loss, router aux loss included, is multiplied by world_size to undo DDP's mean.

Report: https://github.com/huggingface/transformers/pull/48706
Class: F reduction semantics

Static reach: partly; the multiplication of a sum that contains `aux_loss` is visible,
but that `num_items_in_batch` is a global count (so the CE term needs the factor and
the aux term does not) comes from the caller.
"""

import torch.distributed as dist


def compute_loss(model, inputs, num_items_in_batch):
    outputs = model(**inputs)
    ce = outputs.ce_loss_sum / num_items_in_batch
    loss = ce + model.config.router_aux_loss_coef * outputs.aux_loss
    loss = loss * dist.get_world_size()  # expect: RNK112
    return loss
