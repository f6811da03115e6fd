"""A rank whose prefetch map lacks req_id returns before the all_reduce the others enter.

Report: https://github.com/sgl-project/sglang/pull/38273
Class: A rank-divergent collective

Static reach: partly; the early return tests membership in a rank-local dict, not a rank
query, so only a linter that treats per-rank state as rank-dependent sees it.
"""

import torch
import torch.distributed as dist


class HiRadixCache:
    def check_prefetch_progress(self, req_id):
        if req_id not in self.ongoing_prefetch:
            return True
        terminate = torch.tensor([int(self._local_can_terminate(req_id))])
        dist.all_reduce(terminate, op=dist.ReduceOp.MAX, group=self.tp_cpu_group)  # expect: RNK102
        return bool(terminate.item())
