"""Train metrics are a mean of per-rank means, and the `*_max_*` metrics are averaged too.

Report: https://github.com/radixark/miles_diffusion/pull/70
Class: F reduction semantics

Static reach: partly; each rank turns its per-microbatch lists into means with
`torch.stack(v).mean()` (max metrics included), gathers the dicts with gather_object, and
the source rank divides the sum of the gathered values by dp_size. A rank with one sample
weighs as much as one with eight, and a rank-local max is diluted by 1/dp_size. Seeing
it needs the local mean/max to be followed into the gathered Python-side average.
"""

from collections import defaultdict

import torch
import torch.distributed as dist

from miles.utils import tracking_utils
from miles.utils.metric_utils import compute_rollout_step


class FSDPTrainRayActor:
    def _gather_and_log_metrics(self, rollout_id: int, log_dict: dict[str, float], step: int) -> None:
        """Reduce per-rank scalars and log."""
        if self.parallel_state.dp_cp_rank == 0:
            dp_size = self.parallel_state.dp_cp_size
            gathered = [None] * dp_size
            dist.gather_object(
                log_dict,
                gathered,
                dst=self.parallel_state.dp_src_rank,
                group=self.parallel_state.dp_cp_group_gloo,
            )
            reduced = {k: sum(d[k] for d in gathered) / dp_size for k in log_dict}  # expect: RNK112
            reduced["rollout/step"] = compute_rollout_step(self.args, rollout_id)
            reduced["train/step"] = float(step)
            tracking_utils.log(self.args, reduced, step_key="train/step")
        else:
            dist.gather_object(
                log_dict,
                None,
                dst=self.parallel_state.dp_src_rank,
                group=self.parallel_state.dp_cp_group_gloo,
            )

    def _train_step(self, rollout_id, windows):
        for window in windows:
            log_stats: dict[str, list[torch.Tensor]] = defaultdict(list)
            for tile in window:
                loss, diff = self._compute_loss(tile)
                log_stats["loss"].append(loss.detach())
                log_stats["model_output_max_abs_diff"].append(diff.max().detach())
                log_stats["model_output_mean_abs_diff"].append(diff.mean().detach())
            self.global_step += 1

            # Do mean over all ranks for now, may need to be updated for p99, max, etc.
            reduced = {f"train/{k}": torch.stack(v).mean().item() for k, v in log_stats.items()}
            self._gather_and_log_metrics(rollout_id, reduced, step=self.global_step)
