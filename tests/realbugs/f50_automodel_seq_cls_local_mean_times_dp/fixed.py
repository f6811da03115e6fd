"""The loss is a sum over a DP-allreduced global label count, so `* dp_size` cancels DP averaging.

Report: https://github.com/NVIDIA-NeMo/Automodel/issues/3846
Class: F reduction semantics
"""

import torch


class TrainFinetuneRecipeForSequenceClassification:
    def setup(self):
        self.loss_fn = torch.nn.CrossEntropyLoss(reduction="sum")

    def _run_train_optim_step(self, batches):
        model = self.model_parts[0]
        losses = []
        num_label_samples = torch.tensor(sum(batch["labels"].numel() for batch in batches), dtype=torch.long)
        num_label_samples = self._dp_allreduce(num_label_samples, include_cp=True).item()
        for batch in batches:
            batch = {k: (v.to(self.dist_env.device, non_blocking=True) if v is not None else None) for k, v in batch.items()}
            labels = batch.pop("labels")
            out = model(**batch)
            logits = getattr(out, "logits", out)
            loss = self.loss_fn(logits, labels.view(-1))
            losses.append(loss.detach().clone())
            (loss * self._get_dp_group_size(include_cp=True) / num_label_samples).backward()

        for opt in self.optimizer:
            opt.step()
            opt.zero_grad()
        return losses
