"""A fully sharded model's state_dict(), which synchronizes, is taken on process zero only.

Report: https://github.com/huggingface/transformers/pull/10596
Class: D implicit framework collective

Static reach: partly; state_dict() under `if self.is_world_process_zero():` is visible,
but that self.model is a sharded wrapper whose state_dict() is a collective is not.
"""

import torch
import torch.distributed as dist


class Trainer:
    def save_model(self, output_dir):
        if self.is_world_process_zero():
            state_dict = self.model.state_dict()  # expect: RNK102
            torch.save(state_dict, f"{output_dir}/pytorch_model.bin")
        if self.args.local_rank != -1:
            dist.barrier()
