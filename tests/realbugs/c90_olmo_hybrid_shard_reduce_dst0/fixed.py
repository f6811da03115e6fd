"""Metrics are reduced to the global rank of the process group's first member.

Report: https://github.com/allenai/OLMo/pull/551
Class: C group-local or invalid root
"""

from typing import Dict, List, Optional

import torch
import torch.distributed as dist

from olmo.torch_util import get_default_device, is_distributed


class Optimizer(torch.optim.Optimizer):
    @torch.no_grad()
    def clip_grads_and_collect_metrics(
        self,
        global_step: int,
        collect_param_metrics: bool = True,
        process_group: Optional[dist.ProcessGroup] = None,
    ) -> Dict[str, torch.Tensor]:
        device = get_default_device()
        per_param_min_metrics: List[torch.Tensor] = []
        per_param_norm_metrics: List[torch.Tensor] = []

        dst_rank = 0
        if process_group is not None:
            dst_rank = dist.get_global_rank(process_group, 0)

        # Collect metrics locally.
        for group in self.param_groups:
            for p in group["params"]:
                x = p.grad
                if x is not None and x.numel() > 0:
                    if collect_param_metrics:
                        per_param_min_metrics.append(x.abs().min().unsqueeze(0).to(dtype=torch.float32))
                    per_param_norm_metrics.append(torch.linalg.vector_norm(x, 2.0, dtype=torch.float32).unsqueeze(0))
                else:
                    if collect_param_metrics:
                        per_param_min_metrics.append(torch.tensor([float("inf")], device=device, dtype=torch.float32))
                    per_param_norm_metrics.append(torch.tensor([0.0], device=device, dtype=torch.float32))

        if is_distributed():
            # Reduce mins.
            if per_param_min_metrics:
                all_mins = torch.cat(per_param_min_metrics).to(device)
                dist.reduce(all_mins, dst_rank, op=dist.ReduceOp.MIN, group=process_group)
                per_param_min_metrics = all_mins.split(1)
            all_norms = torch.cat(per_param_norm_metrics).to(device) ** 2.0
            dist.all_reduce(all_norms, op=dist.ReduceOp.SUM, group=process_group)
            per_param_norm_metrics = (all_norms ** (0.5)).squeeze(0).split(1)

        metrics: Dict[str, torch.Tensor] = {}
        for i, m in enumerate(per_param_min_metrics):
            metrics[f"param{i}.min"] = m.squeeze(0)
        return metrics
