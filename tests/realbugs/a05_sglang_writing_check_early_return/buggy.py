"""A rank with an empty local queue returns before the TP all_reduce the others enter.

Report: https://github.com/sgl-project/sglang/pull/27489
Class: A rank-divergent collective

Static reach: partly; the early return tests rank-local state (`self.ongoing_write_through`),
not a rank query, so the divergence is visible only to a linter that treats per-rank
queues as rank-dependent.
"""

import torch
import torch.distributed as dist


class RadixCache:
    def writing_check(self):
        if len(self.ongoing_write_through) == 0:
            return
        finish_count = torch.tensor([self.count_finished()], dtype=torch.int)
        dist.all_reduce(finish_count, op=dist.ReduceOp.MIN, group=self.tp_group)  # expect: RNK102
        while finish_count.item() > 0:
            self.pop_finished()
            finish_count -= 1
