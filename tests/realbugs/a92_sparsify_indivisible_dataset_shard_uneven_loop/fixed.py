"""Examples that do not divide evenly across processes are dropped, so every shard has the same length.

Report: https://github.com/EleutherAI/sparsify/pull/94
Class: A rank-divergent collective
"""

import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader


def load_artifacts(args, rank):
    model = load_model(args, rank)
    dataset = load_dataset(args)
    if limit := args.max_examples:
        dataset = dataset.select(range(limit))

    # Drop examples that are indivisible across processes to prevent deadlock
    remainder_examples = len(dataset) % dist.get_world_size()
    dataset = dataset.select(range(len(dataset) - remainder_examples))

    return model, dataset


class Trainer:
    def maybe_all_reduce(self, x, op="mean"):
        if not dist.is_initialized() or self.cfg.distribute_modules:
            return x
        dist.all_reduce(x, op=dist.ReduceOp.SUM)
        x /= dist.get_world_size()
        return x

    def fit(self):
        device = self.model.device
        dl = DataLoader(self.dataset, batch_size=self.cfg.batch_size, shuffle=False)
        acc_steps = self.cfg.grad_acc_steps * self.cfg.micro_acc_steps
        denom = acc_steps * self.cfg.wandb_log_frequency
        avg_ce = 0.0
        for batch in dl:
            x = batch["input_ids"].to(device)
            ce = self.model(x, labels=x).loss
            ce.div(acc_steps).backward()
            avg_ce += float(self.maybe_all_reduce(ce.detach()) / denom)
            self.optimizer.step()
            self.optimizer.zero_grad()


def run(args):
    local_rank = os.environ.get("LOCAL_RANK")
    ddp = local_rank is not None
    rank = int(local_rank) if ddp else 0
    if ddp:
        torch.cuda.set_device(int(local_rank))
        dist.init_process_group("nccl", device_id=torch.device(rank), timeout=timedelta(weeks=1))
    if not ddp or rank == 0:
        model, dataset = load_artifacts(args, rank)
    if ddp:
        dist.barrier()
        if rank != 0:
            model, dataset = load_artifacts(args, rank)
        dataset = dataset.shard(dist.get_world_size(), rank)
    trainer = Trainer(args, dataset, model)
    trainer.fit()
