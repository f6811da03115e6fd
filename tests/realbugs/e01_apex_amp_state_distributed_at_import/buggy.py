"""Whether the job is distributed is decided from WORLD_SIZE once, when the module is imported.

Report: https://github.com/NVIDIA/apex/issues/619
Class: E import-time distributed state

Static reach: visible; a module global of a library module (apex/amp/_amp_state.py in
the report) is set from `os.environ["WORLD_SIZE"]` at import, before mp.spawn children
or a non-env:// init_process_group can make it true.
"""

import os

import torch

distributed = False
if "WORLD_SIZE" in os.environ:
    distributed = int(os.environ["WORLD_SIZE"]) > 1  # expect: RNK111


def maybe_print(msg, rank0=False):
    if rank0:
        if distributed:
            if torch.distributed.get_rank() == 0:
                print(msg)
        else:
            print(msg)
    else:
        print(msg)
