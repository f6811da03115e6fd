"""The group's leader (group rank 0) broadcasts with src=0, a global rank not in the group.

Report: https://github.com/pytorch/pytorch/issues/155680
Class: C group-local or invalid root

Static reach: visible; the leader is chosen by `dist.get_rank(group) == 0` and the same 0
is then passed as the global `src=` together with `group=group`.
"""

import torch.distributed as dist


def share_param_keys(key_obj_list, group):
    if dist.get_rank(group) == 0:
        key_obj_list[0] = collect_keys()
    dist.broadcast_object_list(key_obj_list, src=0, group=group)  # expect: RNK110
    return key_obj_list[0]
