"""Rank 0 broadcasts its checkpoint decision, so every process enters the checkpoint save together.

Report: https://github.com/speechbrain/speechbrain/pull/2192
Class: A rank-divergent collective
"""

import logging
import os
import time

import torch

from speechbrain.utils.distributed import if_main_process

INTRA_EPOCH_CKPT_FLAG = "brain_intra_epoch_ckpt"


class Checkpointer:
    def save_checkpoint(self, meta={}, end_of_epoch=True, name=None, verbosity=logging.INFO):
        ckpt_dir = None
        if if_main_process():
            ckpt_dir = self._new_checkpoint_dirpath()
            os.makedirs(ckpt_dir, exist_ok=True)
            self._save_checkpoint_metafile(ckpt_dir / "CKPT.yaml", meta, end_of_epoch)

        # Communicate ckpt_dir to all procs
        communication_list = [ckpt_dir]
        if torch.distributed.is_initialized():
            torch.distributed.broadcast_object_list(communication_list, src=0)
        ckpt_dir = communication_list[0]
        for name, obj in self.recoverables.items():
            self.custom_save_hooks[name](obj, ckpt_dir / f"{name}.ckpt")

    def save_and_keep_only(self, meta={}, end_of_epoch=True, num_to_keep=1, ckpt_predicate=None, verbosity=logging.INFO):
        self.save_checkpoint(meta=meta, end_of_epoch=end_of_epoch, verbosity=verbosity)
        self.delete_checkpoints(num_to_keep=num_to_keep, ckpt_predicate=ckpt_predicate, verbosity=verbosity)


class Brain:
    def _fit_train(self, train_set, epoch, enable):
        self.modules.train()
        # Time since last intra-epoch checkpoint
        last_ckpt_time = time.time()
        steps_since_ckpt = 0
        for batch in train_set:
            self.step += 1
            steps_since_ckpt += 1
            loss = self.fit_batch(batch)
            self.avg_train_loss = self.update_average(loss, self.avg_train_loss)

            if self._should_save_intra_epoch_ckpt(last_ckpt_time, steps_since_ckpt):
                # Checkpointer class will handle running this on main only
                self._save_intra_epoch_ckpt()
                last_ckpt_time = time.time()
                steps_since_ckpt = 0

    def _should_save_intra_epoch_ckpt(self, last_ckpt_time, steps_since_ckpt):
        if self.checkpointer is None:
            return False

        # Check if we've run for the requested amount of time
        elapsed_minutes = (time.time() - last_ckpt_time) / 60.0
        decision = 0 < self.ckpt_interval_minutes < elapsed_minutes

        # Save after requested # of steps
        decision = decision or 0 < self.ckpt_interval_steps <= steps_since_ckpt

        # If the program is not distributed, just return
        if not torch.distributed.is_initialized():
            return decision

        # Otherwise, broadcast decision to all processes from main (rank 0)
        # This solves synchronization issues where main gets a different
        # timing result than the other processes.
        else:
            broadcast_list = [decision]
            torch.distributed.broadcast_object_list(broadcast_list, src=0)
            return broadcast_list[0]

    def _save_intra_epoch_ckpt(self):
        """Saves a CKPT with specific intra-epoch flag."""
        self.checkpointer.save_and_keep_only(
            end_of_epoch=False,
            num_to_keep=1,
            ckpt_predicate=lambda c: INTRA_EPOCH_CKPT_FLAG in c.meta,
            meta={INTRA_EPOCH_CKPT_FLAG: True},
            verbosity=logging.DEBUG,
        )
