"""accelerator.save_state() runs on the main process only; under DeepSpeed it is a collective.

Report: https://github.com/huggingface/diffusers/issues/2606
Class: D implicit framework collective

Static reach: visible; accelerator.save_state() sits under
`if accelerator.is_main_process:`. That save_state() calls DeepSpeed's
engine.save_checkpoint() (which gathers and barriers) is the accelerate/DeepSpeed
contract, not visible in the script.
"""

import os

from accelerate import Accelerator


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

                if accelerator.is_main_process:
                    if global_step % args.checkpointing_steps == 0:
                        save_path = os.path.join(args.output_dir, f"checkpoint-{global_step}")
                        accelerator.save_state(save_path)  # expect: RNK102
                        logger.info(f"Saved state to {save_path}")

            if global_step >= args.max_train_steps:
                break
