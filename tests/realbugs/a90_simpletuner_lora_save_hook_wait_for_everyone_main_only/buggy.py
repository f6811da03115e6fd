"""Only the main process calls save_state(), so the LoRA save hook's wait_for_everyone() has no partners.

Report: https://github.com/bghira/SimpleTuner/pull/1900
Class: A rank-divergent collective

Static reach: partly; the trainer calls checkpoint_state_save() under
`if self.accelerator.is_main_process or ...use_deepspeed_optimizer:`, and the barrier sits in
save_model_hook(), which accelerate's save_state() runs through register_save_state_pre_hook();
that save_state() invokes the registered hook is the accelerate contract, not visible here.
"""

import os

from accelerate.utils import DistributedType


class SaveHookManager:
    def save_model_hook(self, models, weights, output_dir):
        distributed_type = DistributedType.NO
        is_main_process = True
        if self.accelerator is not None:
            distributed_type = getattr(self.accelerator, "distributed_type", DistributedType.NO)
            is_main_process = getattr(self.accelerator, "is_main_process", True)

        if "lora" in self.args.model_type and self.args.lora_type == "standard":
            if is_main_process:
                self._save_lora(models=models, weights=weights, output_dir=output_dir)
            if self.accelerator is not None and distributed_type != DistributedType.NO:
                self.accelerator.wait_for_everyone()  # expect: RNK102
            return


class Trainer:
    def init_hooks(self):
        self.model_hooks = SaveHookManager()
        self.accelerator.register_save_state_pre_hook(self.model_hooks.save_model_hook)

    def checkpoint_state_save(self, output_dir, suffix=None):
        save_path = os.path.join(output_dir, f"checkpoint-{self.state['global_step']}")
        if suffix:
            save_path = f"{save_path}-{suffix}"
        self.accelerator.save_state(save_path)

    def _maybe_checkpoint(self):
        if self.accelerator.is_main_process and self.config.checkpoints_total_limit is not None:
            self.checkpoint_state_cleanup(self.config.output_dir, self.config.checkpoints_total_limit)

        if self.accelerator.is_main_process or self.config.use_deepspeed_optimizer or self.config.fsdp_enable:
            self.checkpoint_state_save(self.config.output_dir)
