"""Ranks shard an uneven file list, so their step counts differ and a barrier deadlocks.

Report: https://github.com/argonne-lcf/dlio_benchmark/pull/339
Class: A rank-divergent collective

Static reach: visible; `files[rank::world]` gives each rank a different length, so
`steps` and the trip count of the loop around dist.barrier() depend on the rank.
"""

import torch.distributed as dist


def run(files, batch_size, epochs):
    rank, world = dist.get_rank(), dist.get_world_size()
    my_files = files[rank::world]
    steps = len(my_files) // batch_size
    for epoch in range(epochs):
        for step in range(steps):
            train_step(my_files[step * batch_size : (step + 1) * batch_size])
            dist.barrier()  # expect: RNK102
