"""Every rank enters the MIN all_reduce; an empty local queue contributes 0.

Report: https://github.com/sgl-project/sglang/pull/27489
Class: A rank-divergent collective
"""

import torch
import torch.distributed as dist


class RadixCache:
    def writing_check(self):
        finish_count = torch.tensor([self.count_finished()], dtype=torch.int)
        dist.all_reduce(finish_count, op=dist.ReduceOp.MIN, group=self.tp_group)
        while finish_count.item() > 0:
            self.pop_finished()
            finish_count -= 1
