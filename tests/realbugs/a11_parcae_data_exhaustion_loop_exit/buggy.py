"""The rank with the fewest shards leaves the loop first; the others hang in all_reduce.

Report: https://github.com/sandyresearch/parcae/issues/12
Class: A rank-divergent collective

Static reach: visible in shape; `files[rank::world]` gives each rank its own shards,
so the trip count of `for batch in loader` (and of the collectives in it) is per rank.
"""

import torch.distributed as dist


def train(model, files, optimizer):
    rank, world = dist.get_rank(), dist.get_world_size()
    loader = make_loader(files[rank::world])
    for batch in loader:
        loss = model(batch)
        loss.backward()
        dist.all_reduce(loss.detach())  # expect: RNK102
        optimizer.step()
        optimizer.zero_grad()
