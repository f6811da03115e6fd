"""Every rank creates the groups of all DP replicas in the same order and keeps its own.

Report: https://github.com/ModelTC/LightLLM/pull/898
Class: B partial group creation
"""

import os

import torch
import torch.distributed as dist


def get_environ(environ_name):
    value = os.getenv(environ_name, None)
    if value is None:
        raise RuntimeError(f"{environ_name} is not set")
    return value


def get_dp_size():
    return int(get_environ("LIGHTLLM_DP_SIZE"))


def get_dp_world_size():
    return int(get_environ("LIGHTLLM_DP_WORLD_SIZE"))


def get_global_dp_rank():
    return int(get_environ("LIGHTLLM_GLOBAL_DP_RANK"))


def create_new_group_for_current_dp(backend):
    ans_group = None
    for iter_dp_rank in range(get_dp_size()):
        ranks = list(i + iter_dp_rank * get_dp_world_size() for i in range(get_dp_world_size()))
        device_group = dist.new_group(ranks, backend=backend)
        if get_global_dp_rank() == iter_dp_rank:
            ans_group = device_group
    return ans_group


class CustomProcessGroup:
    def __init__(self):
        self.custom_reduce = None
        self.custom_gather = None
        self.dp_world_size = get_dp_world_size()
        self.device_group = create_new_group_for_current_dp("nccl")

    def all_reduce(self, input_: torch.Tensor) -> None:
        return dist.all_reduce(input_, group=self.device_group)
