"""A rank with no local metrics returns before all_gather_object, hanging the others.

Report: https://github.com/bo-ke/llm-internal-medicine/pull/45
Class: A rank-divergent collective

Static reach: partly; `local_metrics` is empty on pipeline stages without a monitored
layer, which is per-rank data, not a rank query.
"""

import torch.distributed as dist


class Monitor:
    def gather_and_aggregate(self, local_metrics: dict):
        if not local_metrics:
            return {}
        gathered = [None] * dist.get_world_size()
        dist.all_gather_object(gathered, local_metrics)  # expect: RNK102
        out = {}
        for d in gathered:
            out.update(d or {})
        return out
