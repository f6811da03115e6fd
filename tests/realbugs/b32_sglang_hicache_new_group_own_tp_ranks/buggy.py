"""Each TP group creates only its own gloo group, so ranks on different nodes call new_group() with different ranks.

Report: https://github.com/sgl-project/sglang/pull/15805
Class: B partial group creation

Static reach: visible; `group_ranks` is this rank's own TP group
(get_process_group_ranks(tp_group)), so with PP2 TP8 ranks 0-7 call new_group([0..7])
while ranks 8-15 call new_group([8..15]); no rank creates the other TP group and
process-group creation hangs at HiCacheController init.
"""

import torch


class HiCacheController:
    def __init__(
        self,
        token_to_kv_pool_allocator,
        mem_pool_host,
        page_size: int,
        tp_group: torch.distributed.ProcessGroup,
        load_cache_event=None,
        write_policy: str = "write_through_selective",
        io_backend: str = "",
        storage_backend=None,
        prefetch_threshold: int = 256,
    ):
        self.mem_pool_device_allocator = token_to_kv_pool_allocator
        self.mem_pool_device = token_to_kv_pool_allocator.get_kvcache()
        self.mem_pool_host = mem_pool_host
        self.write_policy = write_policy
        self.page_size = page_size
        self.io_backend = io_backend

        self.enable_storage = False
        if storage_backend is not None:
            self.enable_storage = True
            # todo: threshold policy for prefetching
            self.prefetch_threshold = max(prefetch_threshold, self.page_size)
            # create a new communication group for synchronizing storage operations across TP workers
            self.tp_world_size = torch.distributed.get_world_size(group=tp_group)
            if self.tp_world_size > 1:
                group_ranks = torch.distributed.get_process_group_ranks(tp_group)
                self.prefetch_tp_group = torch.distributed.new_group(group_ranks, backend="gloo")  # expect: RNK105

        self.load_cache_event = load_cache_event
