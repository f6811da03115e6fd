"""Only this batch's counts are all-reduced; the reduced batch counts are then added to
the running totals.

Report: https://github.com/allenai/allennlp/pull/4568
Class: F reduction semantics
"""

from typing import Optional

import torch
import torch.distributed as dist

from allennlp.common.util import is_distributed
from allennlp.training.metrics.metric import Metric


@Metric.register("boolean_accuracy")
class BooleanAccuracy(Metric):
    def __init__(self) -> None:
        self._correct_count = 0.0
        self._total_count = 0.0

    def __call__(
        self,
        predictions: torch.Tensor,
        gold_labels: torch.Tensor,
        mask: Optional[torch.BoolTensor] = None,
    ):
        predictions, gold_labels, mask = self.detach_tensors(predictions, gold_labels, mask)

        batch_size = predictions.size(0)

        if mask is not None:
            predictions = predictions * mask
            gold_labels = gold_labels * mask
            keep = mask.view(batch_size, -1).max(dim=1)[0]
        else:
            keep = torch.ones(batch_size, device=predictions.device).bool()

        predictions = predictions.view(batch_size, -1)
        gold_labels = gold_labels.view(batch_size, -1)
        correct = predictions.eq(gold_labels).prod(dim=1).float()

        correct_count_diff = (correct * keep).sum()
        total_count_diff = keep.sum()

        if is_distributed():
            dist.all_reduce(correct_count_diff, op=dist.ReduceOp.SUM)
            dist.all_reduce(total_count_diff, op=dist.ReduceOp.SUM)
            self._correct_count += correct_count_diff.item()
            self._total_count += total_count_diff.item()
        else:
            self._correct_count += correct_count_diff
            self._total_count += total_count_diff

    def get_metric(self, reset: bool = False):
        if self._total_count > 0:
            accuracy = float(self._correct_count) / float(self._total_count)
        else:
            accuracy = 0.0
        if reset:
            self.reset()
        return accuracy

    def reset(self):
        self._correct_count = 0.0
        self._total_count = 0.0
