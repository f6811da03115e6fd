"""One tensor is stored under two metric keys, so the in-place SUM all-reduces it twice.

Report: https://github.com/vllm-project/speculators/pull/759
Class: F reduction semantics

Static reach: visible across one call; `correct_sum` is the value of two keys of the
returned dict, and reduce_metrics() all-reduces every value in place. The marker is on
the aliasing entry, the line the fix changes.
"""

import torch
import torch.distributed as dist


def compute_accuracy(pred, target, mask):
    correct_sum = ((pred == target) & mask).sum().float()
    total = mask.sum().float()
    return {
        "full_acc_num": correct_sum,
        "full_acc_den": total,
        "cond_acc_num": correct_sum,  # expect: RNK112
        "cond_acc_den": total.clone(),
    }


def reduce_metrics(metrics):
    for v in metrics.values():
        dist.all_reduce(v, op=dist.ReduceOp.SUM)
    return metrics
