"""With drop_last=False some ranks get one more validation batch and hang in all_reduce.

Report: https://github.com/lhotse-speech/lhotse/pull/1277
Class: A rank-divergent collective

Static reach: visible; `cuts[rank::world]` has a per-rank length, so `len(batches)`,
the trip count of the loop around dist.all_reduce(), depends on the rank.
"""

import torch.distributed as dist


def validate(model, cuts, batch_size):
    rank, world = dist.get_rank(), dist.get_world_size()
    mine = cuts[rank::world]
    batches = [mine[i : i + batch_size] for i in range(0, len(mine), batch_size)]
    total = 0.0
    for b in batches:
        loss = model(b)
        dist.all_reduce(loss)  # expect: RNK102
        total += loss.item()
    return total
