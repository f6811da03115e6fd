"""The per-node NCCL group broadcasts from global rank 0, which belongs only to node 0's group.

Report: https://github.com/ModelTC/LightLLM/pull/986
Class: C group-local or invalid root

Static reach: partly; the node master is chosen as `rank_in_node == 0` (a rank within the
node) in another method, and the broadcast passes `src=0` with
`group=self.node_nccl_group`, a group created per node. That the group of node 1 holds
global ranks `node_world_size..2*node_world_size-1` is the launcher's layout.
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
        dist.broadcast(self.node_broadcast_tensor, src=0, group=self.node_nccl_group, async_op=False)  # expect: RNK110
        new_buffer_is_ready = self.node_broadcast_tensor.detach().item()
        if new_buffer_is_ready:
            self._read_reqs_buffer_and_init_reqs()
        return
