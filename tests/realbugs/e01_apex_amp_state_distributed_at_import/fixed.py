"""Whether the job is distributed is decided at each call, from the initialized process group.

Report: https://github.com/NVIDIA/apex/issues/619
Class: E import-time distributed state
"""

import torch


def maybe_print(msg, rank0=False):
    distributed = (
        torch.distributed.is_available()
        and torch.distributed.is_initialized()
        and torch.distributed.get_world_size() > 1
    )
    if rank0:
        if distributed:
            if torch.distributed.get_rank() == 0:
                print(msg)
        else:
            print(msg)
    else:
        print(msg)
