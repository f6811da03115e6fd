"""The broadcast names the node master's global rank, node_rank * node_world_size.

Report: https://github.com/ModelTC/LightLLM/pull/986
Class: C group-local or invalid root
"""

import torch
import torch.distributed as dist

from lightllm.utils.dist_utils import create_new_group_for_current_node
from lightllm.utils.dist_utils import get_current_rank_in_node, get_node_world_size


class ModeBackend:
    def init_model(self, kvargs):
        self.args = kvargs.get("args", None)
        self.node_world_size = get_node_world_size()
        self.rank_in_node = get_current_rank_in_node()
        if self.rank_in_node == 0:
            self.is_master_in_node = True
        else:
            self.is_master_in_node = False
        self.node_nccl_group = create_new_group_for_current_node("nccl")
        self.node_broadcast_tensor = torch.tensor([0], dtype=torch.int32, device="cuda", requires_grad=False)

    def _try_read_new_reqs_normal(self):
        if self.is_master_in_node:
            if self.shm_reqs_io_buffer.is_ready():
                self.node_broadcast_tensor.fill_(1)
            else:
                self.node_broadcast_tensor.fill_(0)

        src_rank_id = self.args.node_rank * self.node_world_size
        dist.broadcast(self.node_broadcast_tensor, src=src_rank_id, group=self.node_nccl_group, async_op=False)
        new_buffer_is_ready = self.node_broadcast_tensor.detach().item()
        if new_buffer_is_ready:
            self._read_reqs_buffer_and_init_reqs()
        return
