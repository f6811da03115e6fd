"""Every rank joins all_gather_object, even with an empty metric dict.

Report: https://github.com/bo-ke/llm-internal-medicine/pull/45
Class: A rank-divergent collective
"""

import torch.distributed as dist


class Monitor:
    def gather_and_aggregate(self, local_metrics: dict):
        gathered = [None] * dist.get_world_size()
        dist.all_gather_object(gathered, local_metrics)
        out = {}
        for d in gathered:
            out.update(d or {})
        return out
