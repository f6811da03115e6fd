"""The C++ broadcast callback passes a group-local `root` as the global `src` of the TP/DP group.

Report: https://github.com/alibaba/rtp-llm/pull/944
Class: C group-local or invalid root

Static reach: not visible in this file; `root` is a parameter that the C++ engine fills
with a rank within the process group selected by `mode` (TP, DP or DP_AND_TP), and it is
passed unchanged to torch.distributed.broadcast() with `group=pg`. That the value is
group-local is the C++ contract, not something this function computes.
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
        device_id = torch.cuda.current_device()
        for t in tensors:
            gpu_t, was_cpu = _ensure_cuda(t, device_id)
            torch.distributed.broadcast(gpu_t, root, group=pg)  # expect: RNK110
            if was_cpu:
                t.copy_(gpu_t)

    librtp_compute_ops.register_comm_ops(cpp_broadcast)
