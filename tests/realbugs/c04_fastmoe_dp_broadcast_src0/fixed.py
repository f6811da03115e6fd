"""Parameters are broadcast from the group's first member, given as a global rank.

Report: https://github.com/laekov/fastmoe/issues/119
Class: C group-local or invalid root
"""

import torch.distributed as dist
from torch._utils import _flatten_dense_tensors, _unflatten_dense_tensors


def broadcast_params(module, comm):
    params = [p.data for p in module.parameters()]
    coalesced = _flatten_dense_tensors(params)
    root = dist.get_process_group_ranks(comm)[0]
    dist.broadcast(coalesced, root, group=comm)
    for buf, synced in zip(params, _unflatten_dense_tensors(coalesced, params)):
        buf.copy_(synced)
