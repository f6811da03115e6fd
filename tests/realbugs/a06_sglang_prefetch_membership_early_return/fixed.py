"""Every rank enters the all_reduce, with a dummy 0 when it has no such request.

Report: https://github.com/sgl-project/sglang/pull/38273
Class: A rank-divergent collective
"""

import torch
import torch.distributed as dist


class HiRadixCache:
    def check_prefetch_progress(self, req_id):
        present = req_id in self.ongoing_prefetch
        local = int(self._local_can_terminate(req_id)) if present else 0
        terminate = torch.tensor([local])
        dist.all_reduce(terminate, op=dist.ReduceOp.MAX, group=self.tp_cpu_group)
        if not present:
            return True
        return bool(terminate.item())
