"""trainer.save_model() (an FSDP state-dict all-gather) is called under `if is_main:`.

Report: https://github.com/kyuz0/amd-strix-halo-llm-finetuning/pull/6
Class: D implicit framework collective

Static reach: visible; `is_main = rank == 0` with `rank` from os.environ["RANK"], and
trainer.save_model() (Hugging Face Trainer, which gathers the sharded state dict under
FSDP) is only called inside `if is_main:`. The other rank leaves main() and rank 0
aborts in the all-gather.
"""

import argparse
import os
import time

from trl import SFTConfig, SFTTrainer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--strategy", type=str, choices=["ddp", "fsdp"], default="ddp")
    args = parser.parse_args()

    rank = int(os.environ.get("RANK", "0"))
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    is_distributed = world_size > 1
    is_main = rank == 0

    model, tokenizer, ds = load_everything(args)

    fsdp_args = {}
    if args.strategy == "fsdp" and is_distributed:
        fsdp_args["fsdp"] = "full_shard auto_wrap"

    training_args = SFTConfig(output_dir="output", save_strategy="epoch", **fsdp_args)
    trainer = SFTTrainer(
        model=model,
        args=training_args,
        train_dataset=ds["train"],
        eval_dataset=ds["test"],
        processing_class=tokenizer,
    )

    start_time = time.time()
    trainer.train()
    elapsed = time.time() - start_time

    if is_main:
        print("TRAINING COMPLETED")
        print(f"Time:   {elapsed:.2f}s")
        trainer.save_model()  # expect: RNK102

    full_cleanup(model, trainer)
