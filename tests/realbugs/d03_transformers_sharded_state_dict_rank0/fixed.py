"""Every process takes the state dict; process zero alone writes it.

Report: https://github.com/huggingface/transformers/pull/10596
Class: D implicit framework collective
"""

import torch
import torch.distributed as dist


class Trainer:
    def save_model(self, output_dir):
        state_dict = self.model.state_dict()
        if self.is_world_process_zero():
            torch.save(state_dict, f"{output_dir}/pytorch_model.bin")
        if self.args.local_rank != -1:
            dist.barrier()
