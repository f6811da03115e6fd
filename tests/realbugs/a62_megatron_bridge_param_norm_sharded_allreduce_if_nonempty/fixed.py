"""Ranks without a sharded main param contribute a zero, and every rank enters the
DP+CP all-reduce.

Report: https://github.com/NVIDIA-NeMo/Megatron-Bridge/pull/852
Class: A rank-divergent collective
"""

from typing import Union

import torch
import torch.nn as nn
from megatron.core import parallel_state
from megatron.core.tensor_parallel import param_is_not_tensor_parallel_duplicate
from megatron.core.utils import get_data_parallel_group_if_dtensor, to_local_if_dtensor
from transformer_engine.pytorch.optimizers import multi_tensor_applier, multi_tensor_l2norm


def param_is_not_shared(param: nn.Parameter) -> bool:
    return not hasattr(param, "shared") or not param.shared


def calc_params_l2_norm(
    model: Union[torch.nn.Module, list[torch.nn.Module]],
    model_config,
    force_create_fp32_copy: bool = False,
) -> float:
    if not isinstance(model, list):
        model = [model]

    params_data = []
    sharded_params_data = []
    data_parallel_group = None

    for model_chunk in model:
        for param in model_chunk.parameters():
            data_parallel_group = get_data_parallel_group_if_dtensor(param, data_parallel_group)
            if not param_is_not_tensor_parallel_duplicate(param):
                continue
            if param_is_not_shared(param):
                param = to_local_if_dtensor(param)
                if model_config.bf16:
                    if not force_create_fp32_copy and hasattr(param, "main_param"):
                        if getattr(param, "main_param_sharded", False):
                            if param.main_param is not None:
                                sharded_params_data.append(param.main_param)
                        else:
                            params_data.append(param.main_param)
                    else:
                        params_data.append(param.data.float())
                else:
                    params_data.append(param.data)

    # Calculate norm.
    dummy_overflow_buf = torch.tensor([0], dtype=torch.int, device="cuda")
    if len(params_data) > 0:
        norm, _ = multi_tensor_applier(multi_tensor_l2norm, dummy_overflow_buf, [params_data], False)
        norm_2 = norm * norm
    else:
        norm_2 = torch.zeros((1,), dtype=torch.float32, device="cuda")

    if data_parallel_group is not None:
        torch.distributed.all_reduce(norm_2, op=torch.distributed.ReduceOp.SUM, group=data_parallel_group)

    # Add norm contribution from params with sharded main_params. These norms need to be
    # accumulated across the DP group since the main parameters are sharded because
    # of distributed optimizer.
    if len(sharded_params_data) > 0:
        dummy_overflow_buf = torch.tensor([0], dtype=torch.int, device="cuda")
        sharded_norm, _ = multi_tensor_applier(multi_tensor_l2norm, dummy_overflow_buf, [sharded_params_data], False)
        sharded_norm_2 = sharded_norm * sharded_norm
    else:
        sharded_norm_2 = torch.zeros((1,), dtype=torch.float32, device="cuda")
    # Sum over all DP groups, including CP since distributed optimizer state is
    # sharded jointly over DP+CP.
    torch.distributed.all_reduce(
        sharded_norm_2,
        op=torch.distributed.ReduceOp.SUM,
        group=parallel_state.get_data_parallel_group(with_context_parallel=True),
    )
    norm_2 += sharded_norm_2

    dense_reduce_group = parallel_state.get_model_parallel_group()
    torch.distributed.all_reduce(norm_2, op=torch.distributed.ReduceOp.SUM, group=dense_reduce_group)
    return norm_2.item() ** 0.5
