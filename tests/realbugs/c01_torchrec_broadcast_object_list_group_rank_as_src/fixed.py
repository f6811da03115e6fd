"""The group-local leader index is passed as `group_src`.

Report: https://github.com/meta-pytorch/torchrec/pull/4601
Class: C group-local or invalid root
"""

import torch.distributed as dist


def invoke_on_rank_and_broadcast_result(pg, rank, func, *args):
    if pg.rank() == rank:
        object_list = [func(*args)]
    else:
        object_list = [None]
    dist.broadcast_object_list(object_list, group=pg, group_src=rank)
    return object_list[0]
