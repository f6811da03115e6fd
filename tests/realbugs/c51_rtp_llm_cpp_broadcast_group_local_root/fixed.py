"""The group-local `root` is mapped with get_global_rank() before broadcasting on the group.

Report: https://github.com/alibaba/rtp-llm/pull/944
Class: C group-local or invalid root
"""

from typing import List

import torch


def register_comm_ops(librtp_compute_ops, mode_to_group):
    def _ensure_cuda(t: torch.Tensor, device_id: int):
        if t.is_cuda:
            return t, False
        return t.to(torch.device("cuda", device_id)), True

    def cpp_broadcast(tensors: List[torch.Tensor], root: int, mode: int) -> None:
        """Broadcast tensors from root rank to all ranks in the group.

        Args:
            tensors: Tensors to broadcast, each is broadcast in-place from root.
            root: Source rank that holds the data.
            mode: ParallelMode int (0=TP, 1=DP, 2=DP_AND_TP) selecting process group.
        """
        pg = mode_to_group.get(mode)
        if pg is None or pg.size() < 2:
            return
        global_root = torch.distributed.get_global_rank(pg, root)
        device_id = torch.cuda.current_device()
        for t in tensors:
            gpu_t, was_cpu = _ensure_cuda(t, device_id)
            torch.distributed.broadcast(gpu_t, global_root, group=pg)
            if was_cpu:
                t.copy_(gpu_t)

    librtp_compute_ops.register_comm_ops(cpp_broadcast)
