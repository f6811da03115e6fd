"""Ranks get different validation batch counts; the first to finish leaves while the rest wait in FSDP's all-gather.

Report: https://github.com/PrimeIntellect-ai/prime-rl/issues/2515
Class: D implicit framework collective

Static reach: partly; compute_loss() runs the FSDP-sharded model's forward (an all-gather of
parameters) once per micro-batch of `for micro_batch in data_iter`, and the number of
micro-batches each rank's validation dataloader yields depends on variable-length packing of
its own data shard, which is data, not a rank query.
"""

import torch
import torch.distributed as dist
from torch.nn import CrossEntropyLoss

from prime_rl.trainer.model import forward, setup_model
from prime_rl.trainer.sft.data import setup_dataloader, setup_dataset


def train(config, parallel_dims, tokenizer, val_raw_dataset, logger, monitor):
    model = setup_model(config.model, parallel_dims)  # FSDP2 (fully_shard) wrapped
    dp_cp_group = parallel_dims.get_mesh("dp_cp").get_group()
    ce_loss = CrossEntropyLoss(reduction="none")

    def compute_loss(micro_batch: dict) -> tuple[torch.Tensor, torch.Tensor]:
        input_ids = micro_batch["input_ids"].to("cuda")
        position_ids = micro_batch["position_ids"].to("cuda")
        target_ids = micro_batch["target_ids"].to("cuda")
        loss_mask = micro_batch["loss_mask"].to("cuda")
        token_count = loss_mask.sum(dtype=torch.int64)
        out = forward(model, input_ids, position_ids)
        logits = out["logits"]
        B, L, V = logits.shape
        token_loss = ce_loss(logits.view(-1, V), target_ids.view(-1)).view(B, L)
        return token_loss[loss_mask].sum(), token_count

    def run_eval_loop(data_iter):
        """Validation forward loop. Returns token-weighted global mean loss."""
        total_loss_sum = torch.tensor(0.0, device="cuda")
        total_token_count = torch.tensor(0, dtype=torch.int64, device="cuda")
        nan_count = torch.tensor(0, device="cuda")

        with torch.no_grad():
            for micro_batch in data_iter:
                loss_sum, token_count = compute_loss(micro_batch)  # expect: RNK102
                if not torch.isnan(loss_sum.detach()):
                    total_loss_sum += loss_sum.detach()
                    total_token_count += token_count
                else:
                    nan_count += 1

        dist.all_reduce(total_loss_sum, op=dist.ReduceOp.SUM, group=dp_cp_group)
        dist.all_reduce(total_token_count, op=dist.ReduceOp.SUM, group=dp_cp_group)
        dist.all_reduce(nan_count, op=dist.ReduceOp.SUM)

        mean_loss = (total_loss_sum / total_token_count).item() if total_token_count.item() > 0 else float("nan")
        return mean_loss, nan_count.item()

    def run_validation(step: int) -> None:
        val_dataset = setup_dataset(tokenizer, config.val.data, config.model.cp, max_epochs=1, raw_dataset=val_raw_dataset)
        val_dataloader = setup_dataloader(val_dataset, config.val.data)
        mean_loss, nan_count = run_eval_loop(val_dataloader)
        if nan_count > 0:
            logger.warning(f"Validation at step {step}: {nan_count} batches had NaN loss")
        monitor.log({"val/loss": mean_loss, "step": step}, step=step)

    return run_validation
