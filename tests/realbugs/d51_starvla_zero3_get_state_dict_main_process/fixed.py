"""Every rank takes part in get_state_dict(); only the main process writes the file.

Report: https://github.com/starVLA/starVLA/pull/460
Class: D implicit framework collective
"""

import json
import os

import torch


class VLATrainer:
    def _save_checkpoint(self):
        """Save current training state."""
        # All ranks must take part in the ZeRO-3 parameter gather.
        state_dict = self.accelerator.get_state_dict(self.model)

        if self.accelerator.is_main_process:
            checkpoint_path = os.path.join(self.checkpoint_dir, f"steps_{self.completed_steps}")
            torch.save(state_dict, checkpoint_path + "_pytorch_model.pt")

            summary_data = {"steps": self.completed_steps}
            with open(os.path.join(self.config.output_dir, "summary.jsonl"), "a") as f:
                f.write(json.dumps(summary_data) + "\n")
            self.accelerator.print(f"Checkpoint saved at {checkpoint_path}")

        self.accelerator.wait_for_everyone()
