"""FSDP generate() without synced_gpus stops at each rank's own EOS, so the all-gathers hang.

Report: https://github.com/huggingface/transformers/issues/30228
Class: A rank-divergent collective

Static reach: partly; each decode step's forward all-gathers FSDP parameters, and the
number of steps depends on this rank's prompts (`prompts_for_this_rank`), which is data.
"""

import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


def sample(fsdp_model: FSDP, tokenizer, prompts_for_this_rank):
    batch = tokenizer(prompts_for_this_rank, return_tensors="pt", padding=True)
    with FSDP.summon_full_params(fsdp_model, writeback=False, recurse=False):
        out = fsdp_model.module.generate(**batch.to("cuda"), max_new_tokens=128)  # expect: RNK102
    return tokenizer.batch_decode(out)
