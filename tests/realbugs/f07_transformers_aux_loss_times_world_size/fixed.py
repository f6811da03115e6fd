"""Only the globally token-normalized CE term is multiplied by world_size.

Report: https://github.com/huggingface/transformers/pull/48706
Class: F reduction semantics
"""

import torch.distributed as dist


def compute_loss(model, inputs, num_items_in_batch):
    outputs = model(**inputs)
    ce = outputs.ce_loss_sum / num_items_in_batch
    ce = ce * dist.get_world_size()
    loss = ce + model.config.router_aux_loss_coef * outputs.aux_loss
    return loss
