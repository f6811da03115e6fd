"""The dataset reads its rank in __init__, before the Trainer initializes torch.distributed.

Report: https://github.com/talmolab/sleap-nn/pull/184
Class: E import-time distributed state

Static reach: no; get_rank() falls back to 0 when the process group is not initialized,
and that __init__ runs before the Trainer's init_process_group is decided elsewhere.
The state is captured too early in an instance attribute, not in a module global.
"""

import torch.distributed as dist


def get_rank():
    return dist.get_rank() if dist.is_initialized() else 0


class CachedDataset:
    def __init__(self, labels, cache_dir):
        self.rank = get_rank()  # expect: RNK111
        if self.rank == 0:
            build_npz_cache(labels, cache_dir)
        self.cache_dir = cache_dir
