"""Non-zero ranks return from save() early, so only rank 0 reaches the barrier.

Report: https://github.com/EleutherAI/sparsify/pull/5
Class: A rank-divergent collective

Static reach: visible; `if rank != 0: return` is a rank-dependent early exit before
dist.barrier().
"""

import torch
import torch.distributed as dist


class SaeTrainer:
    def save(self):
        rank = dist.get_rank() if dist.is_initialized() else 0
        if rank != 0:
            return
        for name, sae in self.saes.items():
            torch.save(sae.state_dict(), f"{self.path}/{name}.pt")
        if dist.is_initialized():
            dist.barrier()  # expect: RNK102
