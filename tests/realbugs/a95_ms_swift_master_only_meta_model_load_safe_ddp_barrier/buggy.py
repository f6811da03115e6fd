"""On save, only the master loads a dummy HF model, and that load enters safe_ddp_context's barriers, so the MiniMax save hangs.

Report: https://github.com/modelscope/ms-swift/pull/9171
Class: A rank-divergent collective

Static reach: partly; get_model_processor() runs under `if is_master() and ...`; for a remote-code
model it reaches transformers' get_cached_module_file, which swift patches to run inside
safe_ddp_context(), whose barriers pair up only when every rank enters it. That hop runs inside
swift/transformers and is not shown.
"""

from contextlib import contextmanager
from copy import copy

import torch
import torch.distributed as dist
from transformers import dynamic_module_utils

from swift.model import get_model_processor
from swift.utils import is_dist, is_local_master, is_master


@contextmanager
def safe_ddp_context(hash_id, use_barrier: bool = True):  # swift/utils/torch_utils.py
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
            with torch.device("meta"):
                self.hf_model = get_model_processor(  # expect: RNK102
                    args.model_dir, model_type=args.model_type, return_dummy_model=True)[0]

        if is_master():
            hf_config.save_pretrained(output_dir)
        dist.barrier()  # Ensure all weights are saved completely

    GPTBridge.save_weights = save_weights
