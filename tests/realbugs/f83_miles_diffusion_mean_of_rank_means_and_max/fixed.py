"""A metric buffer sums (value, count) for MEAN metrics and reduces MAX metrics with MAX.

Report: https://github.com/radixark/miles_diffusion/pull/70
Class: F reduction semantics
"""

from enum import Enum

import torch
import torch.distributed as dist

from miles.utils import tracking_utils
from miles.utils.metric_utils import compute_rollout_step


class ReduceKind(Enum):
    MEAN = "mean"
    MAX = "max"


TRAIN_METRIC_SCHEMA = {
    "loss": ReduceKind.MEAN,
    "model_output_max_abs_diff": ReduceKind.MAX,
    "model_output_mean_abs_diff": ReduceKind.MEAN,
}


class MetricBuffer:
    def __init__(self, schema, device):
        self.schema = schema
        self.device = device
        self.sums = {k: 0.0 for k, kind in schema.items() if kind is ReduceKind.MEAN}
        self.counts = {k: 0 for k in self.sums}
        self.maxes = {k: float("-inf") for k, kind in schema.items() if kind is ReduceKind.MAX}

    def record(self, key, value: torch.Tensor, count: int = 1):
        if self.schema[key] is ReduceKind.MEAN:
            self.sums[key] += float(value) * count
            self.counts[key] += count
        else:
            self.maxes[key] = max(self.maxes[key], float(value))

    def flush(self, dp_group):
        mean_keys = sorted(self.sums)
        max_keys = sorted(self.maxes)
        totals = torch.tensor(
            [self.sums[k] for k in mean_keys] + [float(self.counts[k]) for k in mean_keys],
            dtype=torch.float64,
            device=self.device,
        )
        dist.all_reduce(totals, op=dist.ReduceOp.SUM, group=dp_group)
        peaks = torch.tensor([self.maxes[k] for k in max_keys], dtype=torch.float64, device=self.device)
        dist.all_reduce(peaks, op=dist.ReduceOp.MAX, group=dp_group)
        n = len(mean_keys)
        out = {}
        for i, k in enumerate(mean_keys):
            out[f"train/{k}"] = (totals[i] / totals[n + i].clamp(min=1)).item()
        for i, k in enumerate(max_keys):
            out[f"train/{k}"] = peaks[i].item()
        return out


class FSDPTrainRayActor:
    def _log_metrics(self, rollout_id: int, log_dict: dict[str, float], step: int) -> None:
        if self.parallel_state.dp_cp_rank == 0:
            log_dict["rollout/step"] = compute_rollout_step(self.args, rollout_id)
            log_dict["train/step"] = float(step)
            tracking_utils.log(self.args, log_dict, step_key="train/step")

    def _train_step(self, rollout_id, windows):
        for window in windows:
            buffer = MetricBuffer(TRAIN_METRIC_SCHEMA, device=torch.cuda.current_device())
            for tile in window:
                loss, diff = self._compute_loss(tile)
                n = tile["num_samples"]
                buffer.record("loss", loss.detach(), count=n)
                buffer.record("model_output_max_abs_diff", diff.max().detach())
                buffer.record("model_output_mean_abs_diff", diff.mean().detach(), count=n)
            self.global_step += 1

            reduced = buffer.flush(self.parallel_state.dp_group)
            self._log_metrics(rollout_id, reduced, step=self.global_step)
