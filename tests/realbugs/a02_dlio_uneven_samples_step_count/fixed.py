"""Every rank keeps the same number of samples, so every rank runs the same steps.

Report: https://github.com/argonne-lcf/dlio_benchmark/pull/339
Class: A rank-divergent collective
"""

import torch.distributed as dist


def run(files, batch_size, epochs):
    rank, world = dist.get_rank(), dist.get_world_size()
    per_rank = len(files) // world
    my_files = files[rank::world][:per_rank]
    steps = per_rank // batch_size
    for epoch in range(epochs):
        for step in range(steps):
            train_step(my_files[step * batch_size : (step + 1) * batch_size])
            dist.barrier()
