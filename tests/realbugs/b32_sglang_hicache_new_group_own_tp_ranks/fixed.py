"""Every rank gathers all ranks' TP groups and creates each of them, keeping its own.

Report: https://github.com/sgl-project/sglang/pull/15805
Class: B partial group creation
"""

import logging
from typing import List, Optional

import torch

logger = logging.getLogger(__name__)


def create_custom_parallel_group(
    group_ranks: List[int], backend: str = "gloo"
) -> Optional[torch.distributed.ProcessGroup]:
    assert torch.distributed.is_initialized()

    world_size = torch.distributed.get_world_size()
    rank = torch.distributed.get_rank()

    local_config = sorted(list(set(group_ranks)))
    gathered_configs = [None for _ in range(world_size)]

    torch.distributed.all_gather_object(gathered_configs, local_config)

    unique_groups = []
    seen_signatures = set()

    for config in gathered_configs:
        config_tuple = tuple(config)
        if config_tuple not in seen_signatures:
            seen_signatures.add(config_tuple)
            unique_groups.append(list(config_tuple))

    unique_groups.sort(key=lambda x: x[0])

    my_new_group = None

    for g_ranks in unique_groups:
        group = torch.distributed.new_group(ranks=g_ranks, backend=backend)

        if set(g_ranks) == set(local_config):
            my_new_group = group
            logger.debug(f"Rank {rank} successfully created/joined custom group: {g_ranks}")

    return my_new_group


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
                self.prefetch_tp_group = create_custom_parallel_group(group_ranks=group_ranks, backend="gloo")

        self.load_cache_event = load_cache_event
