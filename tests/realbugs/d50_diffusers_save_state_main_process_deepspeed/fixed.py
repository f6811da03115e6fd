"""Under DeepSpeed every process calls accelerator.save_state(); otherwise the main process only.

Report: https://github.com/huggingface/diffusers/issues/2606
Class: D implicit framework collective
"""

import os

from accelerate import Accelerator
from accelerate.utils import DistributedType


def train(args, unet, optimizer, train_dataloader, lr_scheduler, logger):
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps)
    unet, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(
        unet, optimizer, train_dataloader, lr_scheduler
    )
    global_step = 0
    for epoch in range(args.num_train_epochs):
        unet.train()
        for step, batch in enumerate(train_dataloader):
            with accelerator.accumulate(unet):
                loss = unet(batch)
                accelerator.backward(loss)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()

            if accelerator.sync_gradients:
                global_step += 1

                # DeepSpeed requires saving weights on every device; saving weights only on the main process would cause issues.
                if accelerator.distributed_type == DistributedType.DEEPSPEED or accelerator.is_main_process:
                    if global_step % args.checkpointing_steps == 0:
                        save_path = os.path.join(args.output_dir, f"checkpoint-{global_step}")
                        accelerator.save_state(save_path)
                        logger.info(f"Saved state to {save_path}")

            if global_step >= args.max_train_steps:
                break
