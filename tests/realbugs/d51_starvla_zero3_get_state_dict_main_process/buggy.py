"""Under ZeRO-3, accelerator.get_state_dict() all-gathers parameters but only the main process calls it.

Report: https://github.com/starVLA/starVLA/pull/460
Class: D implicit framework collective

Static reach: visible; self.accelerator.get_state_dict(self.model) is under
`if self.accelerator.is_main_process:` and is followed by wait_for_everyone(). That
get_state_dict() runs DeepSpeed's GatheredParameters all-gather under ZeRO-3 is the
accelerate contract; rank 0 waits in the gather while the others wait in the barrier.
"""

import json
import os

import torch


class VLATrainer:
    def _save_checkpoint(self):
        """Save current training state."""
        if self.accelerator.is_main_process:
            checkpoint_path = os.path.join(self.checkpoint_dir, f"steps_{self.completed_steps}")

            state_dict = self.accelerator.get_state_dict(self.model)  # expect: RNK102
            torch.save(state_dict, checkpoint_path + "_pytorch_model.pt")

            summary_data = {"steps": self.completed_steps}
            with open(os.path.join(self.config.output_dir, "summary.jsonl"), "a") as f:
                f.write(json.dumps(summary_data) + "\n")
            self.accelerator.print(f"Checkpoint saved at {checkpoint_path}")

        self.accelerator.wait_for_everyone()
