"""With DeepSpeed, every process calls accelerator.save_state(); pruning stays on the main one.

Report: https://github.com/bghira/SimpleTuner/issues/262
Class: A rank-divergent collective

"""

import os
import shutil

import torch
from accelerate import Accelerator


def main(args):
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps)
    use_deepspeed_optimizer = False
    if hasattr(accelerator.state, "deepspeed_plugin") and accelerator.state.deepspeed_plugin is not None:
        use_deepspeed_optimizer = True

    unet, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(
        build_unet(args), build_optimizer(args), build_dataloader(args), build_scheduler(args)
    )
    global_step = 0
    for epoch in range(args.num_train_epochs):
        for step, batch in enumerate(train_dataloader):
            with accelerator.accumulate(unet):
                loss = compute_loss(unet, batch)
                accelerator.backward(loss)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()

            if accelerator.sync_gradients:
                global_step += 1
                if global_step % args.checkpointing_steps == 0:
                    if accelerator.is_main_process:
                        # _before_ saving state, check if this save would set us over the `checkpoints_total_limit`
                        if args.checkpoints_total_limit is not None:
                            checkpoints = sorted(
                                (d for d in os.listdir(args.output_dir) if d.startswith("checkpoint")),
                                key=lambda x: int(x.split("-")[1]),
                            )
                            if len(checkpoints) >= args.checkpoints_total_limit:
                                num_to_remove = len(checkpoints) - args.checkpoints_total_limit + 1
                                for removing_checkpoint in checkpoints[0:num_to_remove]:
                                    shutil.rmtree(os.path.join(args.output_dir, removing_checkpoint))

                    if accelerator.is_main_process or use_deepspeed_optimizer:
                        save_path = os.path.join(args.output_dir, f"checkpoint-{global_step}")
                        accelerator.save_state(save_path)
                        for _, backend in StateTracker.get_data_backends().items():
                            backend["sampler"].save_state(state_path=os.path.join(save_path, "training_state.json"))

    accelerator.wait_for_everyone()
    accelerator.end_training()
