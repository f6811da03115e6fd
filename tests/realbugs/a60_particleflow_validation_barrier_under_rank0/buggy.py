"""The per-epoch validation barriers sit inside `if rank == 0`, so rank 0 waits alone.

Report: https://github.com/jpata/particleflow/pull/233
Class: A rank-divergent collective

Static reach: visible; in train_mlpf() both dist.barrier() calls are under
`if (rank == 0) or (rank == "cpu"):`, while the other ranks go on to the next epoch's
DDP training step. The validation forward also runs through the DDP wrapper on rank 0.
"""

import torch
import torch.distributed as dist


@torch.no_grad()
def validation_run(rank, model, train_loader, valid_loader, tensorboard_writer=None):
    with torch.no_grad():
        optimizer = None
        ret = train(rank, model, train_loader, valid_loader, optimizer, tensorboard_writer)
    return ret


def train(rank, model, train_loader, valid_loader, optimizer, tensorboard_writer=None):
    is_train = not (optimizer is None)
    loader = train_loader if is_train else valid_loader
    model.train() if is_train else model.eval()

    losses = {"Total": 0.0}
    for i, batch in enumerate(loader):
        event = batch.to(rank)
        pred_ids_one_hot, pred_momentum, pred_charge = model(event)
        loss = compute_loss(event, pred_ids_one_hot, pred_momentum, pred_charge)
        if is_train:
            for param in model.parameters():
                param.grad = None
            loss.backward()
            optimizer.step()
        losses["Total"] += loss.detach().cpu().item()
    return losses


def train_mlpf(rank, world_size, model, train_loader, valid_loader, n_epochs, lr, outpath, tensorboard_writer):
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)

    for epoch in range(n_epochs):
        # training step
        losses_t = train(rank, model, train_loader, valid_loader, optimizer, tensorboard_writer)

        # validation step on a single machine
        if (rank == 0) or (rank == "cpu"):
            if world_size > 1:
                dist.barrier()  # expect: RNK102

            losses_v = validation_run(rank, model, train_loader, valid_loader, tensorboard_writer)
            for k, v in losses_v.items():
                tensorboard_writer.add_scalar("epoch/valid_loss_" + k, v, epoch)

            tensorboard_writer.flush()

            if world_size > 1:
                dist.barrier()

            if isinstance(model, torch.nn.parallel.DistributedDataParallel):
                state_dict = model.module.state_dict()
            else:
                state_dict = model.state_dict()
            torch.save(state_dict, f"{outpath}/best_epoch_weights.pth")
