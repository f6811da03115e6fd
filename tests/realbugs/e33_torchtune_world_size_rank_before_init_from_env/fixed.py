"""World size and rank are fetched after init_from_env() has initialized the process group.

Report: https://github.com/meta-pytorch/torchtune/pull/193
Class: E import-time distributed state
"""

import os
from typing import Tuple

import torch
from torch.utils.data import DataLoader, DistributedSampler


def _check_dist_env() -> bool:
    env_required = (
        os.environ.get("MASTER_PORT"),
        os.environ.get("MASTER_ADDR"),
        os.environ.get("WORLD_SIZE"),
        os.environ.get("RANK"),
    )
    return all(env is not None for env in env_required)


def init_from_env(*, device_type=None, pg_backend=None) -> torch.device:
    device = torch.device("cuda" if device_type in (None, "cuda") else device_type)
    if _check_dist_env():
        if torch.distributed.is_initialized():
            return device
        pg_backend = pg_backend if pg_backend is not None else ("nccl" if device.type == "cuda" else "gloo")
        torch.distributed.init_process_group(backend=pg_backend)
    return device


def get_world_size_and_rank() -> Tuple[int, int]:
    if not torch.distributed.is_available() or not torch.distributed.is_initialized():
        return 1, 0
    return torch.distributed.get_world_size(), torch.distributed.get_rank()


def recipe(kwargs):
    # ---- Initialize distributed process group ---- #
    device = init_from_env(device_type=kwargs["device"])

    # ---- Initialize seed ---- #
    # Fetch world size and rank after distributed process group initialization
    world_size, rank = get_world_size_and_rank()
    if kwargs["seed"] is not None:
        # Ensure that seed is different per rank (and its dataloader workers)
        seed(kwargs["seed"] + rank)

    ds = get_dataset(kwargs["dataset"])
    sampler = DistributedSampler(
        ds,
        num_replicas=world_size,
        rank=rank,
        shuffle=kwargs["shuffle"],
        seed=0,
    )
    dataloader = DataLoader(dataset=ds, batch_size=kwargs["batch_size"], sampler=sampler)
    return device, dataloader
