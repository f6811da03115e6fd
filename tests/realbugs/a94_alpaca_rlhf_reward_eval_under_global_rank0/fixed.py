"""Every rank runs the periodic in-loop reward evaluation, so its all-reduces have partners.

Report: https://github.com/l294265421/alpaca-rlhf/issues/5
Class: A rank-divergent collective
"""

import numpy as np
import torch
import wandb

from alpaca_rlhf.deepspeed_chat.training.utils.utils import get_all_reduce_mean, print_rank_0, to_device


def main(args, rm_model, train_dataloader, eval_dataloader, lr_scheduler, device):
    def evaluation_reward(model, eval_dataloader):
        model.eval()
        correct_predictions = 0
        scores = None
        rejected_scores = 0
        for step, batch in enumerate(eval_dataloader):
            batch = to_device(batch, device)
            with torch.no_grad():
                outputs = model(**batch)
            chosen = outputs["chosen_mean_scores"]
            rejected = outputs["rejected_mean_scores"]
            correct_predictions += (chosen > rejected).sum()
            if scores is None:
                scores = outputs["chosen_mean_scores"]
                rejected_scores = outputs["rejected_mean_scores"]
            else:
                scores = torch.concat([scores, outputs["chosen_mean_scores"]])
                rejected_scores = torch.concat([rejected_scores, outputs["rejected_mean_scores"]])

        total_predictions = scores.shape[0]
        scores_ave = scores.sum().float() / total_predictions
        rejected_scores_ave = rejected_scores.sum().float() / total_predictions
        acc = correct_predictions / total_predictions
        score_std = np.std(scores.cpu().detach().numpy())
        try:
            acc = get_all_reduce_mean(acc).item()
            scores_ave = get_all_reduce_mean(scores_ave).item()
            score_std = get_all_reduce_mean(score_std).item()
            rejected_scores_ave = get_all_reduce_mean(rejected_scores_ave).item()
        except:
            pass
        return scores_ave, rejected_scores_ave, acc, score_std

    for epoch in range(args.num_train_epochs):
        mean_loss = 0
        for step, batch in enumerate(train_dataloader):
            rm_model.train()
            batch = to_device(batch, device)
            outputs = rm_model(**batch, use_cache=False)
            loss = outputs["loss"]
            rm_model.backward(loss)
            rm_model.step()
            mean_loss += loss.item()

            if args.global_rank == 0:
                wandb.log({"Train/epoch": epoch, "Train/step": step, "Train/loss": loss,
                           "Train/lr_0": lr_scheduler.get_lr()[0]})

            if (step + 1) % 100 == 0:
                reward_score, rejected_scores, acc, score_std = evaluation_reward(rm_model, eval_dataloader)
                wandb.log({
                    "Eval/epoch": -1,
                    "Eval/reward_score": reward_score,
                    "Eval/score_std": score_std,
                    "Eval/rejected_scores": rejected_scores,
                    "Eval/acc": acc,
                })

        print_rank_0(f"Epoch {epoch+1}/{args.num_train_epochs} with loss {mean_loss/(step+1)}", args.global_rank)
