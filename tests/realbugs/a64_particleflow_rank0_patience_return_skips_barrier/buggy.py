"""Early stopping is decided on rank 0 alone: rank 0 returns from train() when it runs
out of patience, and the other ranks wait in the barrier at the end of the step.

Report: https://github.com/jpata/particleflow/pull/249
Class: A rank-divergent collective

Static reach: visible; inside the `if (rank == 0) or (rank == "cpu"):` validation block,
`stale_epochs` is updated from rank 0's own validation loss and rank 0 executes
`return ...` when it exceeds `patience`, so the `dist.barrier()` that follows the block
is reached by the other ranks only.
"""

import torch
import torch.distributed as dist

N_STEPS = 100


def train(rank, world_size, model, optimizer, train_loader, valid_loader, best_val_loss, stale_epochs, patience, outpath):
    model.train()
    epoch_loss = {"Total": 0.0}
    valid_loss = None
    istep = 0
    for itrain, batch in enumerate(train_loader):
        istep += 1
        loss = compute_loss(model, batch.to(rank))
        for param in model.parameters():
            param.grad = None
        loss.backward()
        optimizer.step()
        epoch_loss["Total"] += loss.detach()

        # run a quick validation run at intervals of N_STEPS or at the last step
        if (((itrain % N_STEPS) == 0) and (itrain != 0)) or (itrain == (len(train_loader) - 1)):
            if world_size > 1:
                dist.barrier()

            if (rank == 0) or (rank == "cpu"):
                model.eval()
                valid_loss = {"Total": 0.0}
                with torch.no_grad():
                    for ival, vbatch in enumerate(valid_loader):
                        if world_size > 1:  # validation is only run on a single machine
                            vloss = compute_loss(model.module, vbatch.to(rank))
                        else:
                            vloss = compute_loss(model, vbatch.to(rank))
                        valid_loss["Total"] += vloss.detach()
                    valid_loss["Total"] = valid_loss["Total"].cpu().item() / len(valid_loader)

                    if valid_loss["Total"] < best_val_loss:
                        best_val_loss = valid_loss["Total"]
                        torch.save({"model_state_dict": model.module.state_dict()}, f"{outpath}/best_weights.pth")
                        stale_epochs = 0
                    else:
                        stale_epochs += 1

                    if stale_epochs > patience:
                        return None, None, None, stale_epochs

        if world_size > 1:
            dist.barrier()  # expect: RNK102

        model.train()  # prepare for next training loop

    epoch_loss["Total"] = epoch_loss["Total"].cpu().item() / len(train_loader)
    return epoch_loss, valid_loss, best_val_loss, stale_epochs
