"""The sequence count is all-reduced too, so the summed scores are divided by the global
number of sequences.

Report: https://github.com/allenai/allennlp/pull/4717
Class: F reduction semantics
"""

from collections import defaultdict

import torch
import torch.distributed as dist

from allennlp.common.util import is_distributed
from allennlp.training.metrics.metric import Metric


@Metric.register("rogue")
class ROUGE(Metric):
    def __init__(self, ngram_size: int = 2, exclude_indices=None) -> None:
        self._ngram_size = ngram_size
        self._exclude_indices = exclude_indices or set()
        self._total_rouge_n_f1s = defaultdict(float)
        self._total_rouge_l_f1 = 0.0
        self._total_sequence_count = 0

    def _get_rouge_l_score(self, predicted_tokens: torch.LongTensor, reference_tokens: torch.LongTensor) -> float:
        total_f1 = 0.0

        for predicted_seq, reference_seq in zip(predicted_tokens, reference_tokens):
            from allennlp.training.util import get_valid_tokens_mask

            m = get_valid_tokens_mask(reference_seq, self._exclude_indices).sum().item()
            n = get_valid_tokens_mask(predicted_seq, self._exclude_indices).sum().item()

            lcs = self._longest_common_subsequence(reference_seq, predicted_seq)
            if lcs == 0:
                continue

            recall_lcs = lcs / m
            precision_lcs = lcs / n
            f1 = 2 * recall_lcs * precision_lcs / (recall_lcs + precision_lcs)
            total_f1 += f1

        if is_distributed():
            device = predicted_tokens.device
            _total_f1 = torch.tensor(total_f1).to(device)
            dist.all_reduce(_total_f1, op=dist.ReduceOp.SUM)
            total_f1 = _total_f1.item()

        return total_f1

    def __call__(self, predictions: torch.LongTensor, gold_targets: torch.LongTensor) -> None:
        predictions, gold_targets = self.detach_tensors(predictions, gold_targets)

        # ROUGE-L
        self._total_rouge_l_f1 += self._get_rouge_l_score(predictions, gold_targets)

        sequence_count = len(predictions)
        if is_distributed():
            device = predictions.device
            _sequence_count = torch.tensor(sequence_count).to(device)
            dist.all_reduce(_sequence_count, op=dist.ReduceOp.SUM)
            sequence_count = _sequence_count.item()
        self._total_sequence_count += sequence_count

    def _metric_mean(self, metric_sum):
        if self._total_sequence_count == 0:
            return 0.0
        return metric_sum / self._total_sequence_count

    def get_metric(self, reset: bool = False):
        metrics = {}
        metrics["ROUGE-L"] = self._metric_mean(self._total_rouge_l_f1)
        if reset:
            self.reset()
        return metrics

    def reset(self) -> None:
        self._total_rouge_n_f1s = defaultdict(float)
        self._total_rouge_l_f1 = 0.0
        self._total_sequence_count = 0
