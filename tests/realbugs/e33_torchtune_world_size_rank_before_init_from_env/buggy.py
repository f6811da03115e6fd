"""The recipe reads world size and rank before init_from_env() creates the process group, so every rank gets (1, 0).

Report: https://github.com/meta-pytorch/torchtune/pull/193
Class: E import-time distributed state

Static reach: visible in one function; recipe() calls get_world_size_and_rank(), which
returns (1, 0) while `torch.distributed.is_initialized()` is False, before
init_from_env() calls init_process_group(). The stale values seed every rank alike and
configure the DistributedSampler with num_replicas=1, rank=0. The state is read too
early at call time, not stored in a module global.
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
    return torch.distributed.world_size(), torch.distributed.get_rank()


def recipe(kwargs):
    # ---- Initialize seed ---- #
    world_size, rank = get_world_size_and_rank()  # expect: RNK111
    if kwargs["seed"] is not None:
        # Ensure that seed is different per rank (and its dataloader workers)
        seed(kwargs["seed"] + rank)

    # ---- Initialize distributed process group ---- #
    device = init_from_env(device_type=kwargs["device"])

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
