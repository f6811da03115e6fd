"""A rank that already sees rank 0's cache file skips the barrier rank 0 waits in.

Report: https://github.com/unslothai/unsloth-zoo/pull/967
Class: A rank-divergent collective

Static reach: partly; the branch tests the rank-local filesystem (`os.path.isfile`), not
a rank query; the inner `if dist.get_rank() == 0:` is not what skips the barrier.
"""

import os

import torch.distributed as dist


def create_new_function(name, source, cache_dir):
    path = os.path.join(cache_dir, name + ".py")
    if not os.path.isfile(path):
        if dist.get_rank() == 0:
            with open(path, "w") as f:
                f.write(source)
        dist.barrier()  # expect: RNK102 (medium)
    return import_from(path)
