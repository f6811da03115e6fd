"""Gradients are scaled by world_size / global tokens, undoing FSDP's implicit 1/world_size.

Report: https://github.com/meta-pytorch/torchtune/pull/2172
Class: F reduction semantics
"""

import torch
import torch.distributed as dist


def train_step(model, batch, optimizer, loss_fn):
    logits = model(batch["tokens"])
    loss = loss_fn(logits, batch["labels"])
    num_tokens = (batch["labels"] != -100).sum()
    dist.all_reduce(num_tokens)
    loss.backward()
    world_size = dist.get_world_size()
    for p in model.parameters():
        if p.grad is not None:
            p.grad.mul_(world_size / num_tokens)
    optimizer.step()
    optimizer.zero_grad()
