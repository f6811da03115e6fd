"""Parameters are broadcast from global rank 0 within a data-parallel group that may lack it.

Report: https://github.com/laekov/fastmoe/issues/119
Class: C group-local or invalid root

Static reach: partly; the literal root 0 with `group=comm` is visible, but that most
data-parallel groups do not contain global rank 0 is a runtime layout fact.
"""

import torch.distributed as dist
from torch._utils import _flatten_dense_tensors, _unflatten_dense_tensors


def broadcast_params(module, comm):
    params = [p.data for p in module.parameters()]
    coalesced = _flatten_dense_tensors(params)
    dist.broadcast(coalesced, 0, group=comm)  # expect: RNK110
    for buf, synced in zip(params, _unflatten_dense_tensors(coalesced, params)):
        buf.copy_(synced)
