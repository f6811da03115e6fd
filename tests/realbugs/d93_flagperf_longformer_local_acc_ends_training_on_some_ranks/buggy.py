"""Each rank checks its own, un-averaged eval accuracy against target_acc, so some ranks end training while others start another DDP epoch.

Report: https://github.com/flagos-ai/FlagPerf/issues/492
Class: D implicit framework collective

Static reach: partly; Evaluator.evaluate() returns a rank-local accuracy (no reduction), and
detect_training_status() sets end_training from it, so the `while not end_training` loop runs
a different number of times per rank. The collectives left waiting are the DDP forward/backward
of train_one_step() (the model is wrapped by adapter.model_to_ddp), which is framework knowledge.
"""

import torch
from torch.types import Device

from driver import Event


class Evaluator:
    def evaluate(self, trainer):
        model = trainer.model
        model.eval()

        total_output = 0.0
        num_examples = 0.0
        with torch.no_grad():
            for step, inputs in enumerate(self.eval_dataloader):
                inputs = self.process_batch(inputs, self.device)
                output = model(**inputs)

                mask = inputs["labels"] != -100
                outputs = torch.argmax(output["logits"], -1)[mask]
                num_examples += outputs.shape.numel()
                correct = (outputs == inputs["labels"][mask]).float()
                total_output += correct.sum()
        acc = total_output / num_examples
        return acc.item()


class Trainer:
    def init(self, train_dataloader):
        self.model.to(self.device)
        self.model = self.adapter.model_to_ddp(self.config, self.model)

    def train_one_epoch(self, dataloader):
        state = self.training_state
        for _, data in enumerate(dataloader):
            data = self.process_batch(data, self.device)
            state.global_steps += 1
            self.train_one_step(data)

        state.acc = self.evaluator.evaluate(self)
        self.driver.event(Event.EVALUATE, dict(global_steps=state.global_steps, acc=state.acc))
        self.detect_training_status(state)

    def train_one_step(self, data):
        state = self.training_state
        self.model.train()
        outputs = self.model(**data)
        state.loss = outputs["loss"].item()
        self.adapter.backward(self.config, state.global_steps, outputs["loss"], self.optimizer)
        self.lr_scheduler.step()

    def detect_training_status(self, state):
        if state.acc >= self.config.target_acc:
            state.converged_success()
            state.end_training = True

        if state.epoch >= self.config.max_epoch:
            state.end_training = True

        return state.end_training


def train(trainer, training_state, train_dataloader):
    epoch = 0
    while not training_state.end_training:
        training_state.epoch = epoch
        trainer.train_one_epoch(train_dataloader)  # expect: RNK102
        epoch += 1
    return training_state
