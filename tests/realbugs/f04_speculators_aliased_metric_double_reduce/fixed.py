"""Each metric key holds its own tensor, so each is all-reduced once.

Report: https://github.com/vllm-project/speculators/pull/759
Class: F reduction semantics
"""

import torch
import torch.distributed as dist


def compute_accuracy(pred, target, mask):
    correct_sum = ((pred == target) & mask).sum().float()
    total = mask.sum().float()
    return {
        "full_acc_num": correct_sum,
        "full_acc_den": total,
        "cond_acc_num": correct_sum.clone(),
        "cond_acc_den": total.clone(),
    }


def reduce_metrics(metrics):
    for v in metrics.values():
        dist.all_reduce(v, op=dist.ReduceOp.SUM)
    return metrics
