"""A per-micro-batch mean loss is multiplied by dp_size before backward, over-scaling gradients by dp_size.

Report: https://github.com/NVIDIA-NeMo/Automodel/issues/3846
Class: F reduction semantics

Static reach: visible; `self.loss_fn` is CrossEntropyLoss() (a local mean) and the
recipe calls `(loss * self._get_dp_group_size(include_cp=True)).backward()`. That the
model is DDP/FSDP-wrapped, so backward() already averages over the DP ranks, is the
recipe's setup, not shown here.
"""

import torch


class TrainFinetuneRecipeForSequenceClassification:
    def setup(self):
        self.loss_fn = torch.nn.CrossEntropyLoss()

    def _run_train_optim_step(self, batches):
        model = self.model_parts[0]
        losses = []
        for batch in batches:
            batch = {k: (v.to(self.dist_env.device, non_blocking=True) if v is not None else None) for k, v in batch.items()}
            labels = batch.pop("labels")
            out = model(**batch)
            logits = getattr(out, "logits", out)
            loss = self.loss_fn(logits, labels.view(-1))
            losses.append(loss.detach().clone())
            (loss * self._get_dp_group_size(include_cp=True)).backward()  # expect: RNK112

        for opt in self.optimizer:
            opt.step()
            opt.zero_grad()
        return losses
