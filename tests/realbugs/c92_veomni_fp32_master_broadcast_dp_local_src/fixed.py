"""The dp-group index is passed as `group_src`, which torch reads as a rank within the group.

Report: https://github.com/ByteDance-Seed/VeOmni/pull/1075
Class: C group-local or invalid root
"""

from __future__ import annotations

import torch


class FP32MasterOptimizer(torch.optim.AdamW):
    def __init__(self, model, lr, weight_decay):
        from veomni.distributed.parallel_state import get_parallel_state

        self.params = [p for p in model.parameters() if p.requires_grad]
        ps = get_parallel_state()
        self.rank = ps.dp_rank
        self.world_size = ps.dp_size
        self.local_idx = list(range(self.rank, len(self.params), self.world_size))
        local_masters = [self.params[i].detach().float() for i in self.local_idx]
        super().__init__(local_masters, lr=lr, weight_decay=weight_decay)

    def step(self, closure=None):
        from torch import distributed as dist

        from veomni.distributed.parallel_state import get_parallel_state

        masters = self.param_groups[0]["params"]
        for i, m in zip(self.local_idx, masters):
            p = self.params[i]
            if p.grad is not None:
                m.grad = p.grad.float()
        super().step(closure)
        # Free all grads before gathering buffers (peak memory).
        self.zero_grad(set_to_none=True)
        group = get_parallel_state().dp_group
        local_flat = torch.cat([m.detach().reshape(-1) for m in masters])
        # Shard total sizes can differ across ranks (params unevenly sized);
        # allocate the receiver buffer from src's exact shard length instead.
        shard_lens = [
            sum(self.params[i].numel() for i in range(src, len(self.params), self.world_size))
            for src in range(self.world_size)
        ]
        for src in range(self.world_size):
            buf = (
                local_flat
                if src == self.rank
                else torch.empty(shard_lens[src], dtype=torch.float32, device=local_flat.device)
            )
            dist.broadcast(buf, group_src=src, group=group)
            offset = 0
            for i in range(src, len(self.params), self.world_size):
                p = self.params[i]
                numel = p.numel()
                p.data.copy_(buf[offset : offset + numel].view_as(p).to(p.dtype))
                offset += numel
