"""The save decision branches on a loss only rank 0 has fully reduced, so ranks split at the save.

Report: https://github.com/pytorch/pytorch/issues/77562
Class: A rank-divergent collective

Static reach: partly; validation() uses dist.reduce(..., 0), so only rank 0 holds the
summed loss and `curr_val_loss < best_val_loss` can differ per rank; the FSDP full
state_dict() under that test all-gathers the shards, so ranks that skip it hang the rest.
"""

import os

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullStateDictConfig, FullyShardedDataParallel as FSDP, StateDictType


def validation(model, rank, world_size, val_loader):
    model.eval()
    local_rank = int(os.environ["LOCAL_RANK"])
    fsdp_loss = torch.zeros(3).to(local_rank)
    with torch.no_grad():
        for batch in val_loader:
            for key in batch.keys():
                batch[key] = batch[key].to(local_rank)
            output = model(input_ids=batch["source_ids"], attention_mask=batch["source_mask"], labels=batch["target_ids"])
            fsdp_loss[0] += output["loss"].item()  # sum up batch loss
            fsdp_loss[1] += len(batch)

    dist.reduce(fsdp_loss, 0, op=dist.ReduceOp.SUM)
    val_loss = fsdp_loss[0] / fsdp_loss[1]
    if rank == 0:
        print(f"Validation Loss: {val_loss:.4f}")
    return val_loss


def fsdp_main(args, model, train_loader, val_loader, optimizer, scheduler, sampler1):
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    best_val_loss = float("inf")
    curr_val_loss = float("inf")

    for epoch in range(1, args.epochs + 1):
        train(args, model, rank, world_size, train_loader, optimizer, epoch, sampler=sampler1)
        if args.run_validation:
            curr_val_loss = validation(model, rank, world_size, val_loader)
        scheduler.step()

        if args.save_model and curr_val_loss < best_val_loss:
            # save
            save_policy = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
            with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, save_policy):
                cpu_state = model.state_dict()  # expect: RNK102
            if rank == 0:
                torch.save(cpu_state, f"T5-model-{epoch}-{curr_val_loss}.pt")

        if curr_val_loss < best_val_loss:
            best_val_loss = curr_val_loss

    dist.barrier()
