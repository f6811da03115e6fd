"""The group-local `src_rank` is translated with get_global_rank() before it is passed to dist.scatter.

Report: https://github.com/pytorch/pytorch/pull/79264
Class: C group-local or invalid root
"""

import torch
import torch.distributed as dist
from torch.distributed import distributed_c10d
from torch.distributed._shard.sharded_tensor import Shard, ShardedTensor
from torch.distributed._shard.sharding_spec._internals import get_split_size
from torch.distributed._shard.sharding_spec.chunk_sharding_spec import _parse_and_validate_remote_device
from torch.distributed._shard._utils import narrow_tensor


class ChunkShardingSpec:
    def shard(self, tensor: torch.Tensor, src_rank: int = 0, process_group=None) -> "ShardedTensor":
        """
        Args:
            src_rank: group rank relative to ``process_group``

            N.B. If ``process_group`` is None, ``src_rank`` is a global rank.
        """
        current_rank = dist.get_rank(process_group)
        tensor_meta = self.build_metadata(tensor.size(), self._tensor_properties(tensor))
        local_shards = []
        local_tensor = None
        local_metadata = None
        tensors_to_scatter = [None] * dist.get_world_size(process_group)

        split_size = get_split_size(tensor.size()[self.dim], len(self.placements))
        scatter_shape = list(tensor.size())
        scatter_shape[self.dim] = split_size

        for shard_meta in tensor_meta.shards_metadata:
            rank, device = _parse_and_validate_remote_device(process_group, shard_meta.placement)
            if current_rank == src_rank:
                narrowed_tensor = narrow_tensor(tensor, shard_meta)
                tensors_to_scatter[rank] = narrowed_tensor.detach().clone().resize_(scatter_shape)
            if current_rank == rank:
                local_tensor = torch.empty(scatter_shape, dtype=tensor.dtype, layout=tensor.layout, device=device)
                local_metadata = shard_meta

        assert local_tensor is not None
        assert local_metadata is not None

        # Scatter the shards to all ranks in the pg
        # scatter takes the global rank as ``src``
        src_for_scatter = src_rank
        if process_group is not None and process_group is not distributed_c10d._get_default_group():
            src_for_scatter = distributed_c10d.get_global_rank(process_group, src_for_scatter)

        dist.scatter(
            local_tensor,
            scatter_list=tensors_to_scatter if current_rank == src_rank else None,
            src=src_for_scatter,
            group=process_group,
        )

        local_tensor = local_tensor.resize_(local_metadata.shard_sizes).detach()
        local_shards.append(Shard(tensor=local_tensor, metadata=local_metadata))
        return ShardedTensor._init_from_local_shards_and_global_metadata(
            local_shards, tensor_meta, process_group=process_group
        )
