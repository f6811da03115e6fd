"""broadcast_pyobj() compares an attention-TP-local rank with the global `src` rank.

Report: https://github.com/lightseekorg/tokenspeed/pull/786
Class: C group-local or invalid root

Static reach: visible across one call in this file; broadcast_pyobj() documents `rank` as
a global rank and compares it with `src`, and recv_reqs() passes `self.attn_tp_rank`
(a rank within the attention-TP group) as `rank` while `src` is `tp_group[0]`, a global
rank. With DP2+TP4 the source of DP group 1 (global 4) sees `0 != 4` and waits as a
receiver, so the group hangs or drops the requests.
"""

import pickle
from typing import Any

import numpy as np
import torch
import torch.distributed as dist
import zmq


def broadcast_pyobj(
    data: list[Any],
    rank: int,
    dist_group: torch.distributed.ProcessGroup | None = None,
    src: int = 0,
    force_cpu_device: bool = True,
):
    """Broadcast inputs from src rank to all other ranks with torch.dist backend.
    The `rank` here refer to the source rank on global process group (regardless
    of dist_group argument).
    """
    device = torch.device("cuda" if torch.cuda.is_available() and not force_cpu_device else "cpu")

    if rank == src:
        if len(data) == 0:
            tensor_size = torch.tensor([0], dtype=torch.long, device=device)
            dist.broadcast(tensor_size, src=src, group=dist_group)
        else:
            serialized_data = pickle.dumps(data)
            size = len(serialized_data)
            tensor_data = torch.ByteTensor(np.frombuffer(serialized_data, dtype=np.uint8)).to(device)
            tensor_size = torch.tensor([size], dtype=torch.long, device=device)
            dist.broadcast(tensor_size, src=src, group=dist_group)
            dist.broadcast(tensor_data, src=src, group=dist_group)
        return data
    else:
        tensor_size = torch.tensor([0], dtype=torch.long, device=device)
        dist.broadcast(tensor_size, src=src, group=dist_group)
        size = tensor_size.item()
        if size == 0:
            return []
        tensor_data = torch.empty(size, dtype=torch.uint8, device=device)
        dist.broadcast(tensor_data, src=src, group=dist_group)
        return pickle.loads(bytes(tensor_data.cpu().numpy()))


class RequestHandler:
    def __init__(self, server_args, pg_manager, recv_func):
        mapping = server_args.mapping
        self.attn_tp_size = mapping.attn.tp_size
        self.attn_tp_rank = mapping.attn.tp_rank
        self.attn_tp_cpu_group = pg_manager.get_process_group("gloo", mapping.attn.tp_group)
        self.attn_tp_src_rank = mapping.attn.tp_group[0]
        self.recv_func = recv_func

    def recv_reqs(self) -> list:
        """Receive results at attn_tp_rank = 0 and broadcast it to all other TP ranks."""
        if self.attn_tp_rank == 0:
            recv_reqs = []
            while True:
                try:
                    recv_req = self.recv_func.recv_pyobj(zmq.NOBLOCK)
                except zmq.ZMQError:
                    break
                recv_reqs.append(recv_req)
        else:
            recv_reqs = None

        if self.attn_tp_size != 1:
            recv_reqs = broadcast_pyobj(
                recv_reqs,
                self.attn_tp_rank,  # expect: RNK110
                self.attn_tp_cpu_group,
                src=self.attn_tp_src_rank,
            )
        return recv_reqs
