"""Every worker resets epochs_since_last_improvement, so all agree on when to early-stop; only rank 0 saves.

Report: https://github.com/facebookresearch/pytext/pull/585
Class: D implicit framework collective
"""

from typing import Any

import torch
from pytext.common.constants import Stage
from pytext.models.distributed_model import DistributedModel
from pytext.utils import cuda, precision


class Trainer:
    def set_up_training(self, state, training_data):
        if cuda.DISTRIBUTED_WORLD_SIZE > 1:
            device_id = torch.cuda.current_device()
            state.model = DistributedModel(
                module=state.model,
                device_ids=[device_id],
                output_device=device_id,
                broadcast_buffers=False,
                find_unused_parameters=state.model.find_unused_parameters,
            )

    def continue_training(self, state) -> bool:
        if state.epoch >= self.config.epochs:
            return False
        if self.config.do_eval and state.epochs_since_last_improvement >= (
            self.config.early_stop_after or float("inf")
        ):
            print(f"Worker {state.rank}: Eval metric hasn't changed. Stopping now.")
            return False
        return True

    def update_best_model(self, state, train_config, eval_metric):
        # This should be updated by all workers so they agree on when to stop training
        # when `early_stop_after` is specified.
        state.epochs_since_last_improvement = 0
        state.best_model_metric = eval_metric
        print(f"Found a better model!")

        # Only one worker should save checkpoints
        if state.rank != 0:
            return

        state.best_model_state = {k: v.cpu() for k, v in state.model.state_dict().items()}

    def train(self, training_data, eval_data, model, metric_reporter, train_config, rank: int = 0):
        state = TrainingState(model=model, optimizer=self.optimizer, scheduler=self.scheduler, rank=rank)
        self.set_up_training(state, training_data)

        while self.continue_training(state):
            state.epoch += 1
            state.epochs_since_last_improvement += 1

            state.stage = Stage.TRAIN
            state.model.train()
            self.run_epoch(state, training_data, metric_reporter)

            state.stage = Stage.EVAL
            model.eval(Stage.EVAL)
            with torch.no_grad():
                eval_metric = self.run_epoch(state, eval_data, metric_reporter)

            if not self.config.do_eval:
                continue

            better_model = metric_reporter.compare_metric(eval_metric, state.best_model_metric)
            if better_model:
                self.update_best_model(state, train_config, eval_metric)

        return state.model, state.best_model_metric

    def run_epoch(self, state, data, metric_reporter):
        for batch_id, (inputs, targets, context) in enumerate(data):
            logits = state.model(*inputs)  # DistributedModel forward
            loss = state.model.get_loss(logits, targets, context)
            if state.stage == Stage.TRAIN:
                precision.backward(state.optimizer, loss)  # DDP gradient all-reduce
                state.optimizer.step()
        return metric_reporter.report_metric(
            state.model, state.stage, state.epoch, print_to_channels=(state.rank == 0)
        )


class TrainingState:
    epoch: int = 0
    rank: int = 0
    epochs_since_last_improvement: int = 0
    best_model_state: Any = None
    best_model_metric: Any = None

    def __init__(self, **kwargs):
        vars(self).update(kwargs)
