"""Each data-parallel replica creates only its own TP group, with ranks derived from the caller's global rank.

Report: https://github.com/ModelTC/LightLLM/pull/898
Class: B partial group creation

Static reach: visible; `ranks` is built from get_global_rank() - get_current_rank_in_dp()
(this rank's own DP replica), so with several DP replicas the ranks of replica 0 call
new_group([0..n-1]) while the ranks of replica 1 call new_group([n..2n-1]); no rank
creates the other replicas' groups.
"""

import os

import torch
import torch.distributed as dist


def get_environ(environ_name):
    value = os.getenv(environ_name, None)
    if value is None:
        raise RuntimeError(f"{environ_name} is not set")
    return value


def get_global_rank():
    return int(get_environ("LIGHTLLM_GLOBAL_RANK"))


def get_dp_world_size():
    return int(get_environ("LIGHTLLM_DP_WORLD_SIZE"))


def get_current_rank_in_dp():
    return int(get_environ("LIGHTLLM_CURRENT_RANK_IN_DP"))


class CustomProcessGroup:
    def __init__(self):
        self.custom_reduce = None
        self.custom_gather = None
        self.dp_world_size = get_dp_world_size()
        ranks = list([get_global_rank() - get_current_rank_in_dp() + i for i in range(self.dp_world_size)])
        self.device_group = dist.new_group(ranks, backend="nccl")  # expect: RNK105

    def all_reduce(self, input_: torch.Tensor) -> None:
        return dist.all_reduce(input_, group=self.device_group)
