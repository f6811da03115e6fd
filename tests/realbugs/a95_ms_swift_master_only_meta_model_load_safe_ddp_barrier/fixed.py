"""The master-only dummy-model load runs with safe_ddp_context's barriers disabled, so it issues no collective.

Report: https://github.com/modelscope/ms-swift/pull/9171
Class: A rank-divergent collective
"""

from contextlib import contextmanager
from copy import copy

import torch
import torch.distributed as dist
from transformers import dynamic_module_utils

from swift.model import get_model_processor
from swift.utils import is_dist, is_local_master, is_master

_DISABLE_USE_BARRIER = False


@contextmanager
def disable_safe_ddp_context_use_barrier():  # swift/utils/torch_utils.py
    global _DISABLE_USE_BARRIER
    _DISABLE_USE_BARRIER = True
    try:
        yield
    finally:
        _DISABLE_USE_BARRIER = False


@contextmanager
def safe_ddp_context(hash_id, use_barrier: bool = True):  # swift/utils/torch_utils.py
    if _DISABLE_USE_BARRIER:
        use_barrier = False
    if use_barrier and dist.is_initialized():
        if is_dist():
            if not is_master():
                dist.barrier()
            if not is_local_master():
                dist.barrier()
        yield
        if is_dist():
            if is_master():
                dist.barrier()
            if is_local_master():
                dist.barrier()
    else:
        yield


@contextmanager
def patch_get_dynamic_module():  # swift/model/patcher.py
    origin_get_cached_module_file = dynamic_module_utils.get_cached_module_file

    def new_get_cached_module_file(pretrained_model_name_or_path, *args, **kwargs):
        with safe_ddp_context(hash_id=str(pretrained_model_name_or_path)):
            return origin_get_cached_module_file(pretrained_model_name_or_path, *args, **kwargs)

    dynamic_module_utils.get_cached_module_file = new_get_cached_module_file
    try:
        yield
    finally:
        dynamic_module_utils.get_cached_module_file = origin_get_cached_module_file


def _patch_mcore_bridge():  # swift/megatron/init.py
    from mcore_bridge import GPTBridge
    origin_save_weights = GPTBridge.save_weights

    def save_weights(self, mg_models, output_dir, peft_format=False, max_shard_size="5GB", args=None, processor=None):
        origin_save_weights(self, mg_models, output_dir, peft_format=peft_format, max_shard_size=max_shard_size)
        if processor is None or args is None:
            return
        hf_config = copy(self.config.hf_config)
        if is_master() and not hasattr(self, "hf_model"):
            with torch.device("meta"), disable_safe_ddp_context_use_barrier():
                self.hf_model = get_model_processor(
                    args.model_dir, model_type=args.model_type, return_dummy_model=True)[0]

        if is_master():
            hf_config.save_pretrained(output_dir)
        dist.barrier()  # Ensure all weights are saved completely

    GPTBridge.save_weights = save_weights
