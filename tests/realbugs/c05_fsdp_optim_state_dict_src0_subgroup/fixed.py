"""The group's leader is named with group_src=0.

Report: https://github.com/pytorch/pytorch/issues/155680
Class: C group-local or invalid root
"""

import torch.distributed as dist


def share_param_keys(key_obj_list, group):
    if dist.get_rank(group) == 0:
        key_obj_list[0] = collect_keys()
    dist.broadcast_object_list(key_obj_list, group=group, group_src=0)
    return key_obj_list[0]
