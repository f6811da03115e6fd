"""Gradients FSDP already averaged over ranks are divided by the global token count too.

Report: https://github.com/meta-pytorch/torchtune/pull/2172
Class: F reduction semantics

Static reach: partly; `num_tokens` is visibly all-reduced (a global count), but that the
model is FSDP-sharded, so backward() already divided the gradients by world_size, is not
visible in this function.
"""

import torch
import torch.distributed as dist


def train_step(model, batch, optimizer, loss_fn):
    logits = model(batch["tokens"])
    loss = loss_fn(logits, batch["labels"])
    num_tokens = (batch["labels"] != -100).sum()
    dist.all_reduce(num_tokens)
    loss.backward()
    for p in model.parameters():
        if p.grad is not None:
            p.grad.mul_(1.0 / num_tokens)  # expect: RNK112
    optimizer.step()
    optimizer.zero_grad()
