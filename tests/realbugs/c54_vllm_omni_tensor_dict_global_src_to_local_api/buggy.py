"""broadcast_tensor_dict() maps `src` to a global rank, then passes it to broadcast_object(), which maps it again.

Report: https://github.com/vllm-project/vllm-omni/pull/6264
Class: C group-local or invalid root

Static reach: visible in this class; broadcast_object() documents `src` as "the local
rank of the source rank" and indexes `self.ranks[src]`, while broadcast_tensor_dict()
first rebinds `src = self.ranks[src]` (a global rank) and passes that to
broadcast_object(). For a subgroup [1, 3], local 0 becomes global 1 and then
`self.ranks[1]` = 3: the metadata comes from the wrong rank.
"""

from typing import Any

import torch
import torch.distributed


class GroupCoordinator:
    def broadcast_object(self, obj: Any | None = None, src: int = 0):
        """Broadcast the input object.
        NOTE: `src` is the local rank of the source rank.
        """
        assert src < self.world_size, f"Invalid src rank ({src})"
        if self.world_size == 1:
            return obj
        if self.rank_in_group == src:
            torch.distributed.broadcast_object_list([obj], src=self.ranks[src], group=self.cpu_group)
            return obj
        else:
            recv = [None]
            torch.distributed.broadcast_object_list(recv, src=self.ranks[src], group=self.cpu_group)
            return recv[0]

    def broadcast_tensor_dict(self, tensor_dict=None, src: int = 0):
        """Broadcast the input tensor dictionary.
        NOTE: `src` is the local rank of the source rank.
        """
        if not torch.distributed.is_initialized() or self.world_size == 1:
            return tensor_dict

        group = self.device_group
        metadata_group = self.cpu_group
        assert src < self.world_size, f"Invalid src rank ({src})"
        src = self.ranks[src]

        rank = self.rank
        if rank == src:
            metadata_list, tensor_list = _split_tensor_dict(tensor_dict)
            self.broadcast_object(metadata_list, src=src)  # expect: RNK110
            for tensor in tensor_list:
                if tensor.numel() == 0:
                    continue
                if tensor.is_cpu:
                    torch.distributed.broadcast(tensor, src=src, group=metadata_group)
                else:
                    torch.distributed.broadcast(tensor, src=src, group=group)
        else:
            metadata_list = self.broadcast_object(None, src=src)
            tensor_dict = {}
            for key, value in metadata_list:
                tensor = torch.empty(value.size, dtype=value.dtype, device=value.device)
                if tensor.is_cpu:
                    torch.distributed.broadcast(tensor, src=src, group=metadata_group)
                else:
                    torch.distributed.broadcast(tensor, src=src, group=group)
                tensor_dict[key] = tensor
        return tensor_dict
