"""A group-local leader index is passed as the global `src` of broadcast_object_list.

Report: https://github.com/meta-pytorch/torchrec/pull/4601
Class: C group-local or invalid root

Static reach: visible; `rank` is compared with `pg.rank()` (a group-local rank) and then
passed positionally as `src` together with `group=pg`.
"""

import torch.distributed as dist


def invoke_on_rank_and_broadcast_result(pg, rank, func, *args):
    if pg.rank() == rank:
        object_list = [func(*args)]
    else:
        object_list = [None]
    dist.broadcast_object_list(object_list, rank, group=pg)  # expect: RNK110
    return object_list[0]
