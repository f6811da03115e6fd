"""Saving FSDP second moments is gated on global rank 0, but gathering them is a collective.

Report: https://github.com/EleutherAI/bergson/pull/376
Class: A rank-divergent collective

Static reach: visible; worker() calls save_second_moments_as_optimizer_pt() under
`... and global_rank == 0`, and the helper calls DTensor.full_tensor() (an all-gather)
on every sharded moment before restricting the write to rank 0 itself.
"""

import os

import torch
import torch.distributed as dist
from torch import nn


def save_second_moments_as_optimizer_pt(model: nn.Module, opt_state, path: str) -> int:
    """Export a torchopt AdamW ``opt_state`` to a PyTorch ``optimizer.pt``."""
    params = {k: v for k, v in model.named_parameters(remove_duplicate=False) if v.requires_grad}
    ordered_names = sorted(params)
    adam_state = next((s for s in opt_state if hasattr(s, "nu")), None)
    nu = list(adam_state.nu)

    def _to_cpu(t):
        # FSDP: gather the sharded moment (a collective — all ranks reach it).
        t = t.full_tensor() if hasattr(t, "full_tensor") else t
        return t.detach().to("cpu")

    main = not torch.distributed.is_initialized() or torch.distributed.get_rank() == 0
    name_to_nu = {}
    for name, moment in zip(ordered_names, nu):
        if moment is None:
            continue
        moment = _to_cpu(moment)
        if main:
            name_to_nu[name] = moment

    state = {}
    for idx, (name, _param) in enumerate(model.named_parameters()):
        if name in name_to_nu:
            state[idx] = {"exp_avg_sq": name_to_nu[name]}
    if not main:
        return len(state)
    torch.save({"state": state, "param_groups": [{"params": list(state)}]}, path)
    return len(state)


def worker(global_rank: int, rank: int, world_size: int, run_cfg, train_dataset):
    if world_size > 1:
        dist.init_process_group("nccl", rank=global_rank, world_size=world_size)

    trainer, fwd_state, model = prepare_trainer(run_cfg, rank)
    fwd_state = trainer.train(fwd_state, train_dataset, fsdp=run_cfg.fsdp)

    if getattr(run_cfg, "save_optimizer_state", "none") != "none" and global_rank == 0:
        save_second_moments_as_optimizer_pt(  # expect: RNK102
            model,
            fwd_state.opt_state,
            os.path.join(run_cfg.run_path, "optimizer.pt"),
        )

    if getattr(run_cfg, "save_models", False) and global_rank == 0:
        base_dir = os.path.join(run_cfg.run_path, "retrained", "base")
        os.makedirs(base_dir, exist_ok=True)
        with fwd_state.activate(model), torch.no_grad():
            model.save_pretrained(base_dir, safe_serialization=True)
