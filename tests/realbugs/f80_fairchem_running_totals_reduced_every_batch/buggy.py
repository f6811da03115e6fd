"""Running metric totals are all-reduced (SUM) after every batch, re-summing earlier sums.

Report: https://github.com/facebookresearch/fairchem/pull/75
Class: F reduction semantics

Static reach: partly; _compute_metrics() all-reduces metrics[k]["total"] and ["numel"]
with SUM and returns them, validate() passes that dict back in as `metrics` on the next
batch, and Evaluator.eval() adds the new batch to it. Seeing that the already-summed
totals are summed again needs the loop-carried value across the call.
"""

import torch
import torch.distributed as dist

from ocpmodels.modules.evaluator import Evaluator


# ocpmodels/common/distutils.py
def get_world_size():
    return dist.get_world_size() if dist.is_initialized() else 1


def is_master():
    return not dist.is_initialized() or dist.get_rank() == 0


def all_reduce(data, group=dist.group.WORLD, average=False, device=None):
    if get_world_size() == 1:
        return data
    tensor = data
    if not isinstance(data, torch.Tensor):
        tensor = torch.tensor(data)
    if device is not None:
        tensor = tensor.cuda(device)
    dist.all_reduce(tensor, group=group)
    if average:
        tensor /= get_world_size()
    if not isinstance(data, torch.Tensor):
        data = tensor.cpu().numpy() if tensor.numel() > 1 else tensor.item()
    return data


class DistributedForcesTrainer:
    def validate(self, split="val", epoch=None):
        self.model.eval()
        evaluator, metrics = Evaluator(task="s2ef"), {}

        loader = self.val_loader if split == "val" else self.test_loader

        for i, batch in enumerate(loader):
            out = self._forward(batch)
            loss = self._compute_loss(out, batch)
            total_loss = all_reduce(loss, average=True)

            metrics = self._compute_metrics(out, batch, evaluator, metrics)
            metrics = evaluator.update("loss", total_loss.item(), metrics)

        log_dict = {k: metrics[k]["metric"] for k in metrics}
        log_dict.update({"epoch": epoch + 1})
        if is_master():
            print(", ".join("{}: {:.4f}".format(k, v) for k, v in log_dict.items()))
        return metrics

    def _compute_metrics(self, out, batch_list, evaluator, metrics={}):
        target = {
            "energy": self._cat([batch.y for batch in batch_list]),
            "forces": self._cat([batch.force for batch in batch_list]),
        }
        metrics = evaluator.eval(out, target, prev_metrics=metrics)

        aggregated_metrics = {}
        for k in metrics:
            aggregated_metrics[k] = {
                "total": all_reduce(metrics[k]["total"], average=False, device=self.device),  # expect: RNK112
                "numel": all_reduce(metrics[k]["numel"], average=False, device=self.device),
            }
            aggregated_metrics[k]["metric"] = aggregated_metrics[k]["total"] / aggregated_metrics[k]["numel"]

        return aggregated_metrics
