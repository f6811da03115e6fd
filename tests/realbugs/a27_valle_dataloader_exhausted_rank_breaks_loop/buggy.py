"""A rank that exhausts its dataloader first leaves the training loop while the others train on.

Report: https://github.com/lifeiteng/vall-e/pull/93
Class: A rank-divergent collective

Static reach: partly; the `while True` loop ends on this rank's own StopIteration, so the
number of DDP backward passes (gradient all-reduce) and interval evaluations differs per
rank, and the early rank goes on to the all_reduce in compute_validation_loss() alone.
"""

import logging

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def compute_validation_loss(params, model, valid_dl, world_size: int = 1):
    model.eval()
    tot_loss = MetricsTracker()
    for batch_idx, batch in enumerate(valid_dl):
        loss, loss_info = compute_loss(params=params, model=model, batch=batch, is_training=False)
        tot_loss = tot_loss + loss_info
    if world_size > 1:
        tot_loss.reduce(loss.device)
    return tot_loss


def train_one_epoch(params, model: DistributedDataParallel, optimizer, scheduler, train_dl, valid_dl, scaler, world_size=1, rank=0):
    model.train()
    tot_loss = MetricsTracker()
    iter_dl = iter(train_dl)

    def evaluate():
        logging.info("Computing validation loss")
        valid_info = compute_validation_loss(params=params, model=model, valid_dl=valid_dl, world_size=world_size)
        model.train()
        logging.info(f"Epoch {params.cur_epoch}, validation: {valid_info}")

    batch_idx = 0
    while True:
        try:
            batch = next(iter_dl)
        except StopIteration:
            logging.info("Reaches end of dataloader.")
            if params.batch_idx_train % params.accumulate_grad_steps:
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
            break

        batch_idx += 1
        params.batch_idx_train += 1

        with torch.cuda.amp.autocast(dtype=torch.bfloat16):
            _, loss, loss_info = compute_loss(params=params, model=model, batch=batch, is_training=True)
        tot_loss = (tot_loss * (1 - 1 / params.reset_interval)) + loss_info

        scaler.scale(loss).backward()  # expect: RNK102
        if params.batch_idx_train % params.accumulate_grad_steps == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
            scheduler.step()

        if params.batch_idx_train % params.valid_interval == 0:
            evaluate()

    if True:  # eval every epoch
        evaluate()
