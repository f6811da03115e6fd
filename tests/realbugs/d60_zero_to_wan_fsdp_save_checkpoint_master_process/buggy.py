"""save_checkpoint() gathers the FSDP full state dict, but only the master process calls it.

Report: https://github.com/Bria-AI/Zero-to-Wan/pull/1
Class: D implicit framework collective

Static reach: visible across one call; the call is guarded by `and master_process`
(`ddp_rank == 0`), and save_checkpoint() runs transformer.state_dict() and
FSDP.optim_state_dict() under FULL_STATE_DICT, both all-gathers over every rank.
"""

import json
import os

import torch
import torch.distributed as dist
from safetensors.torch import save_file
from torch.distributed.fsdp import (
    FullOptimStateDictConfig,
    FullStateDictConfig,
    StateDictType,
)
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


def save_checkpoint(transformer, optimizer, global_step, args, rank):
    with FSDP.state_dict_type(
        transformer,
        StateDictType.FULL_STATE_DICT,
        FullStateDictConfig(offload_to_cpu=True, rank0_only=True),
        FullOptimStateDictConfig(offload_to_cpu=True, rank0_only=True),
    ):
        cpu_state = transformer.state_dict()
        optim_state = FSDP.optim_state_dict(
            transformer,
            optimizer,
        )

    save_dir = os.path.join(args.output_dir, f"checkpoint-{global_step}")
    os.makedirs(save_dir, exist_ok=True)
    if rank <= 0:
        weight_path = os.path.join(save_dir, "diffusion_pytorch_model.safetensors")
        save_file(cpu_state, weight_path)
        config_path = os.path.join(save_dir, "config.json")
        with open(config_path, "w") as f:
            json.dump(dict(transformer.config), f, indent=4)
        torch.save(optim_state, os.path.join(save_dir, "optimizer.pt"))


def main(args, transformer, optimizer, lr_scheduler, train_dataloader, forward):
    dist.init_process_group(backend="nccl")
    ddp_rank = int(os.environ["RANK"])
    master_process = ddp_rank == 0

    global_step = 0
    for epoch in range(500000):
        for batch_idx, batch in enumerate(train_dataloader):
            diffusion_loss = forward(transformer=transformer, batch=batch)
            optimizer.zero_grad()
            diffusion_loss.backward()
            optimizer.step()
            lr_scheduler.step()

            if global_step % args.checkpoint_every == 0 and global_step > 0 and master_process:
                save_checkpoint(transformer=transformer, optimizer=optimizer, global_step=global_step, args=args, rank=ddp_rank)  # expect: RNK102

            global_step += 1

    dist.destroy_process_group()
