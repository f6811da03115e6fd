"""Rank 0 saves inside an `if`; every rank reaches the barrier.

Report: https://github.com/EleutherAI/sparsify/pull/5
Class: A rank-divergent collective
"""

import torch
import torch.distributed as dist


class SaeTrainer:
    def save(self):
        rank = dist.get_rank() if dist.is_initialized() else 0
        if rank == 0:
            for name, sae in self.saes.items():
                torch.save(sae.state_dict(), f"{self.path}/{name}.pt")
        if dist.is_initialized():
            dist.barrier()
