"""BooleanAccuracy adds the batch to its running totals and then all-reduces the running
totals with SUM on every call, so counts from earlier batches are summed again each time.

Report: https://github.com/allenai/allennlp/pull/4568
Class: F reduction semantics

Static reach: visible inside one method; `self._correct_count` / `self._total_count`
accumulate across calls (`+=`), are copied into a tensor, all-reduced with SUM and
written back to the same attributes, so the next call adds to and re-sums an
already-summed total.
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
        device = gold_labels.device

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

        self._correct_count += (correct * keep).sum()
        self._total_count += keep.sum()

        if is_distributed():
            _correct_count = torch.tensor(self._correct_count).to(device)
            _total_count = torch.tensor(self._total_count).to(device)
            dist.all_reduce(_correct_count, op=dist.ReduceOp.SUM)  # expect: RNK112
            dist.all_reduce(_total_count, op=dist.ReduceOp.SUM)
            self._correct_count = _correct_count.item()
            self._total_count = _total_count.item()

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
