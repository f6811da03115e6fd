"""The source check uses the caller's global rank, the same numbering as `src`.

Report: https://github.com/pytorch/pytorch/pull/100552
Class: C group-local or invalid root
"""

import torch
from torch.distributed.distributed_c10d import (
    _object_to_tensor,
    _rank_not_in_group,
    _tensor_to_object,
    broadcast,
    get_rank,
    scatter,
)


def scatter_object_list(scatter_object_output_list, scatter_object_input_list, src=0, group=None):
    if _rank_not_in_group(group):
        return

    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise RuntimeError("Expected argument scatter_object_output_list to be a list of size at least 1.")

    my_rank = get_rank()
    if my_rank == src:
        tensor_list, tensor_sizes = zip(*[_object_to_tensor(obj) for obj in scatter_object_input_list])
        tensor_list, tensor_sizes = list(tensor_list), list(tensor_sizes)

    # Src rank broadcasts the maximum tensor size. This is because all ranks are
    # expected to call into scatter() with equal-sized tensors.
    if my_rank == src:
        max_tensor_size = max(tensor_sizes)
        for tensor in tensor_list:
            tensor.resize_(max_tensor_size)
    else:
        max_tensor_size = torch.tensor([0], dtype=torch.long)
    broadcast(max_tensor_size, src=src, group=group)

    # Scatter actual serialized objects
    output_tensor = torch.empty(max_tensor_size.item(), dtype=torch.uint8)
    scatter(
        output_tensor,
        scatter_list=None if my_rank != src else tensor_list,
        src=src,
        group=group,
    )

    # Scatter per-object sizes to trim tensors when deserializing back to object
    obj_tensor_size = torch.tensor([0], dtype=torch.long)
    scatter(
        obj_tensor_size,
        scatter_list=None if my_rank != src else tensor_sizes,
        src=src,
        group=group,
    )

    # Deserialize back to object
    scatter_object_output_list[0] = _tensor_to_object(output_tensor, obj_tensor_size)
