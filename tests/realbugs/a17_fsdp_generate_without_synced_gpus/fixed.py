"""generate(synced_gpus=True) keeps every rank stepping until all ranks are done.

Report: https://github.com/huggingface/transformers/issues/30228
Class: A rank-divergent collective
"""

import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


def sample(fsdp_model: FSDP, tokenizer, prompts_for_this_rank):
    batch = tokenizer(prompts_for_this_rank, return_tensors="pt", padding=True)
    with FSDP.summon_full_params(fsdp_model, writeback=False, recurse=False):
        out = fsdp_model.module.generate(**batch.to("cuda"), max_new_tokens=128, synced_gpus=True)
    return tokenizer.batch_decode(out)
