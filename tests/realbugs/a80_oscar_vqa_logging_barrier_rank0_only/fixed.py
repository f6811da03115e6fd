"""Every rank enters the logging block, so non-zero ranks wait at the barrier for rank 0.

Report: https://github.com/microsoft/Oscar/pull/196
Class: A rank-divergent collective
"""

import copy
import logging

import torch

logger = logging.getLogger(__name__)


def train(args, train_dataloader, eval_dataset, model, optimizer, scheduler, evaluate):
    global_step = 0
    tr_loss, logging_loss = 0.0, 0.0
    best_score = 0
    best_model = {"epoch": 0, "model": copy.deepcopy(model)}
    for epoch in range(int(args.num_train_epochs)):
        for step, batch in enumerate(train_dataloader):
            model.train()
            outputs = model(**batch)
            loss = outputs[0]
            loss.backward()
            tr_loss += loss.item()
            if (step + 1) % args.gradient_accumulation_steps == 0:
                scheduler.step()
                optimizer.step()
                model.zero_grad()
                global_step += 1

                if args.logging_steps > 0 and global_step % args.logging_steps == 0:
                    if args.local_rank not in [-1, 0]:
                        torch.distributed.barrier()

                    if args.local_rank in [-1, 0] and args.evaluate_during_training:
                        logger.info("Epoch: %d, global_step: %d" % (epoch, global_step))
                        eval_result, eval_score, upper_bound = evaluate(args, model, eval_dataset, prefix=global_step)
                        if eval_score > best_score:
                            best_score = eval_score
                            best_model["epoch"] = epoch
                            best_model["model"] = copy.deepcopy(model)

                    if args.local_rank == 0:
                        torch.distributed.barrier()

                    logging_loss = tr_loss
    return global_step, tr_loss / global_step, best_model
