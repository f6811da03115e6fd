"""Rank 0 decides whether to write the file and broadcasts the decision to every rank.

Report: https://github.com/unslothai/unsloth-zoo/pull/967
Class: A rank-divergent collective
"""

import os

import torch.distributed as dist


def create_new_function(name, source, cache_dir):
    path = os.path.join(cache_dir, name + ".py")
    decision = [not os.path.isfile(path)]
    dist.broadcast_object_list(decision, src=0)
    if decision[0]:
        if dist.get_rank() == 0:
            with open(path, "w") as f:
                f.write(source)
        dist.barrier()
    return import_from(path)
