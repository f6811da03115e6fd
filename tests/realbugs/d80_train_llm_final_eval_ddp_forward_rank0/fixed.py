"""Rank 0's final eval runs on the unwrapped module, so no DDP collective is started.

Report: https://github.com/FareedKhan-dev/train-llm-from-scratch/pull/32
Class: D implicit framework collective
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from data_loader.sft_dataset import get_sft_batch_iterator
from src.post_training.sft import sft_loss
from src.post_training.utils import load_backbone_from_ckpt, save_stage_ckpt

DEV_PATH = "/ephemeral/data/sft_dev_packed.h5"


@dataclass
class DDPContext:
    rank: int
    local_rank: int
    world_size: int
    device: str

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def enabled(self) -> bool:
        return self.world_size > 1


def ddp_setup(device: str = "cuda") -> DDPContext:
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size == 1:
        return DDPContext(rank=0, local_rank=0, world_size=1, device=device)
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group(backend="nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(local_rank)
    return DDPContext(rank=rank, local_rank=local_rank, world_size=world_size, device=f"cuda:{local_rank}")


def ddp_wrap(model: torch.nn.Module, ctx: DDPContext) -> torch.nn.Module:
    if not ctx.enabled:
        return model
    return DDP(model, device_ids=[ctx.local_rank], find_unused_parameters=False)


def reduce_scalar(value: float, ctx: DDPContext, average: bool = True) -> float:
    if not ctx.enabled:
        return value
    t = torch.tensor([value], device=ctx.device, dtype=torch.float32)
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    if average:
        t /= ctx.world_size
    return t.item()


def cleanup(ctx: DDPContext) -> None:
    if ctx.enabled and dist.is_initialized():
        dist.destroy_process_group()


def unwrap(model: torch.nn.Module) -> torch.nn.Module:
    return model.module if hasattr(model, "module") else model


@torch.no_grad()
def eval_dev(model, cfg, ctx, dev_path: str, max_batches: int = 50) -> float:
    model.eval()
    it = get_sft_batch_iterator(dev_path, cfg.batch_size, device=ctx.device,
                                rank=ctx.rank, world_size=ctx.world_size, shuffle=False, infinite=False)
    total, n = 0.0, 0
    for tokens, mask, _ in it:
        logits, _ = model(tokens)
        loss = sft_loss(logits, tokens, mask)
        total += loss.item(); n += 1
        if n >= max_batches:
            break
    model.train()
    return total / max(1, n)


def main(cfg, optimizer_factory, train_it, total_steps):
    ctx = ddp_setup(cfg.device)
    model = load_backbone_from_ckpt(cfg, cfg.pretrained_ckpt, ctx.device)
    model = ddp_wrap(model, ctx)
    optimizer = optimizer_factory(unwrap(model))

    model.train()
    for step in range(total_steps):
        tokens, mask, epoch = next(train_it)
        optimizer.zero_grad(set_to_none=True)
        logits, _ = model(tokens)
        loss = sft_loss(logits, tokens, mask)
        loss.backward()
        optimizer.step()

        if step > 0 and step % cfg.eval_steps == 0:
            dev = reduce_scalar(eval_dev(model, cfg, ctx, DEV_PATH), ctx)
            if ctx.is_main:
                print(f"  [eval] step {step} | dev_loss {dev:.4f}")

    if ctx.is_main:
        dev = eval_dev(unwrap(model), cfg, ctx, DEV_PATH)
        save_stage_ckpt(cfg.out_ckpt, model, optimizer, stage="sft", cfg=cfg, step=total_steps,
                        metrics={"dev_loss": dev})
        print(f"Done SFT. dev_loss {dev:.4f} -> {cfg.out_ckpt}")
    cleanup(ctx)
