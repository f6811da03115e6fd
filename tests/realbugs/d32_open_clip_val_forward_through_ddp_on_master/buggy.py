"""Validation runs only on the master rank but still calls the DDP-wrapped model, whose forward syncs with ranks that have moved on.

Report: https://github.com/mlfoundations/open_clip/issues/1121
Class: D implicit framework collective

Static reach: partly; evaluate() returns early on every rank but the master
(`if not is_master(args): return metrics`), and the master then calls
`model(images, texts)` on the DistributedDataParallel wrapper built in main(), whose
forward may communicate with the other ranks (buffer sync, reducer state), which are
already in the next epoch or exiting.
"""

import torch
import torch.nn.functional as F


def is_global_master(args):
    return args.rank == 0


def is_master(args, local=False):
    return is_global_master(args)


def evaluate(model, data, epoch, args, tb_writer=None, tokenizer=None):
    metrics = {}
    if not is_master(args):
        return metrics
    device = torch.device(args.device)
    model.eval()

    if 'val' in data and (args.val_frequency and ((epoch % args.val_frequency) == 0 or epoch == args.epochs)):
        dataloader = data['val'].dataloader
        num_samples = 0
        cumulative_loss = 0.0
        with torch.inference_mode():
            for i, batch in enumerate(dataloader):
                images, texts = batch
                images = images.to(device=device, non_blocking=True)
                texts = texts.to(device=device, non_blocking=True)

                model_out = model(images, texts)  # expect: RNK102
                image_features = model_out["image_features"]
                text_features = model_out["text_features"]
                logit_scale = model_out["logit_scale"].mean()
                logits_per_image = logit_scale * image_features @ text_features.t()
                logits_per_text = logits_per_image.t()

                batch_size = images.shape[0]
                labels = torch.arange(batch_size, device=device).long()
                total_loss = (
                    F.cross_entropy(logits_per_image, labels) +
                    F.cross_entropy(logits_per_text, labels)
                ) / 2
                cumulative_loss += total_loss * batch_size
                num_samples += batch_size

            loss = cumulative_loss / num_samples
            metrics.update({"clip_val_loss": loss.item(), "epoch": epoch, "num_samples": num_samples})

    return metrics


def main(args, model, data, optimizer, scaler, scheduler, loss, tokenizer=None):
    if args.distributed:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.device])

    for epoch in range(args.start_epoch, args.epochs):
        train_one_epoch(model, data, loss, epoch, optimizer, scaler, scheduler, args)
        completed_epoch = epoch + 1

        if any(v in data for v in ('val', 'imagenet-val', 'imagenet-v2')):
            evaluate(model, data, completed_epoch, args, tokenizer=tokenizer)
