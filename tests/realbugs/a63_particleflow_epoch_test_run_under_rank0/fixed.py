"""Every rank runs the test predictions (and their barrier); only rank 0 plots.

Report: https://github.com/jpata/particleflow/pull/391
Class: A rank-divergent collective
"""

import torch
import torch.distributed as dist


def run_test(rank, world_size, config, outdir, model, sample, testdir_name, dtype):
    ds = load_test_dataset(config, sample)

    if world_size > 1:
        sampler = torch.utils.data.distributed.DistributedSampler(ds)
    else:
        sampler = torch.utils.data.RandomSampler(ds)

    test_loader = torch.utils.data.DataLoader(ds, batch_size=config["gpu_batch_multiplier"], sampler=sampler)

    device_type = "cuda" if isinstance(rank, int) else "cpu"
    with torch.autocast(device_type=device_type, dtype=dtype, enabled=device_type == "cuda"):
        run_predictions(world_size, rank, model, test_loader, sample, outdir, dir_name=testdir_name)
    if world_size > 1:
        dist.barrier()  # block until all workers finished executing run_predictions()


def train_all_epochs(rank, world_size, model, optimizer, config, outdir, num_epochs, dtype, tensorboard_writer_valid):
    for epoch in range(1, num_epochs + 1):
        losses_train = train_epoch(rank, world_size, model, optimizer)
        losses_valid = valid_epoch(rank, world_size, model)

        # Handle checkpointing and logging on rank 0
        if (rank == 0) or (rank == "cpu"):
            save_checkpoint(f"{outdir}/checkpoints/best_weights.pth", model, optimizer, {"epoch": epoch})

        # evaluate the model at this epoch on test datasets, make plots, track metrics
        testdir_name = f"_epoch_{epoch}"
        for sample in config["enabled_test_datasets"]:
            run_test(rank, world_size, config, outdir, model, sample, testdir_name, dtype)
        if (rank == 0) or (rank == "cpu"):  # plot only on rank 0
            for sample in config["enabled_test_datasets"]:
                plot_metrics = make_plots(outdir, sample, config["dataset"], testdir_name, config["ntest"])
                for k in ["med", "iqr", "match_frac"]:
                    tensorboard_writer_valid.add_scalar(
                        "epoch/{}/jet_ratio/{}".format(sample, k),
                        plot_metrics["jet_ratio"]["jet_ratio_target_to_pred_pt"][k],
                        epoch,
                    )
