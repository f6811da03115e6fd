"""bcast() maps the group-local root to its global rank before broadcasting.

Report: https://github.com/flashinfer-ai/flashinfer/pull/3418
Class: C group-local or invalid root
"""

from typing import Any, List, Optional


class CommBackend:
    pass


class TorchDistBackend(CommBackend):
    """Communication backend using torch.distributed"""

    def __init__(self, group: Optional[Any] = None):
        import torch.distributed as dist

        if not dist.is_initialized():
            raise RuntimeError("torch.distributed is not initialized.")
        self._group = group
        self._dist = dist

    def Get_rank(self) -> int:
        return self._dist.get_rank(self._group)

    def Get_size(self) -> int:
        return self._dist.get_world_size(self._group)

    def allgather(self, data: Any) -> List[Any]:
        output_list = [None] * self.Get_size()
        self._dist.all_gather_object(output_list, data, group=self._group)
        return output_list

    def bcast(self, data: Any, root: int) -> Any:
        """root: group-local rank of the sender (consistent with MPI)."""
        object_list = [data]
        global_root = (
            self._dist.get_global_rank(self._group, root)
            if self._group is not None
            else root
        )
        self._dist.broadcast_object_list(object_list, src=global_root, group=self._group)
        return object_list[0]

    def Split(self, color: int, key: int) -> "TorchDistBackend":
        global_rank = self.Get_rank()
        all_info = self.allgather((color, key, global_rank))
        color_groups = {}
        for c, k, r in all_info:
            color_groups.setdefault(c, []).append((k, r))
        for c in color_groups:
            color_groups[c].sort(key=lambda x: x[0])
        my_group_ranks = [r for _, r in color_groups[color]]
        new_group = self._dist.new_group(ranks=my_group_ranks)
        return TorchDistBackend(group=new_group)
