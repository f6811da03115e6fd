"""The module refuses to load without a process group; callers import it only after init_process_group().

Report: https://github.com/NVIDIA/Star-Attention/pull/5
Class: E import-time distributed state

The fix moved `from model import ...` (and model.py's `from star_attention import
LlamaForCausalLM`) into load_model() / DistributedInferenceBaseModel.__init__, which run
after init_distributed(), and replaced the silent RANK = 0 / WORLD_SIZE = 1 fallback with
an error.
"""

from typing import Optional, Tuple

import torch
import torch.distributed as dist
from transformers.cache_utils import Cache
from transformers.models.llama.modeling_llama import LlamaFlashAttention2

if dist.is_initialized():
    RANK = dist.get_rank()
    WORLD_SIZE = dist.get_world_size()
else:
    raise RuntimeError('Distributed environment is not initialized!')


class StarLlamaFlashAttention2(LlamaFlashAttention2):
    def forward(
        self,
        hidden_states: torch.Tensor,
        attention_mask: Optional[torch.LongTensor] = None,
        position_ids: Optional[torch.LongTensor] = None,
        past_key_value: Optional[Cache] = None,
        output_attentions: bool = False,
        use_cache: bool = False,
        cache_position: Optional[torch.LongTensor] = None,
        position_embeddings: Optional[Tuple[torch.Tensor, torch.Tensor]] = None,
        num_ring_steps: int = 0,
        enable_star_attn: bool = False,
    ):
        if (
            enable_star_attn
            and RANK != WORLD_SIZE - 1
            and (past_key_value is None or past_key_value.get_seq_length(self.layer_idx) == 0)
        ):
            raise ValueError('With Star Attention, only the last rank should have a non-empty kv-cache')

        bsz, q_len, _ = hidden_states.size()
        query_states = self.q_proj(hidden_states)
        return query_states
