"""Each rank builds only the ring and Ulysses groups it belongs to, so new_group() args differ.

Report: https://github.com/feifeibear/long-context-attention/pull/12
Class: B partial group creation

Static reach: visible; `ring_ranks` and `ulysses_ranks` are filled by a loop whose test
compares `i` with this process's `rank`, so every rank passes its own lists to new_group().
"""

import torch
import torch.distributed as dist

if __name__ == "__main__":
    dist.init_process_group("nccl")

    rank = dist.get_rank()
    world_size = dist.get_world_size()
    nheads = 2

    # prepare process group for hybrid sequence parallelism
    use_ring_low_dim = True

    sp_ulysses_degree = min(nheads, world_size)
    sp_ring_degree = world_size // sp_ulysses_degree

    ulysses_ranks = []
    ring_ranks = []
    for i in range(world_size):
        if use_ring_low_dim:
            if i // sp_ring_degree == rank // sp_ring_degree:
                ring_ranks.append(i)

            if i % sp_ring_degree == rank % sp_ring_degree:
                ulysses_ranks.append(i)
        else:
            if i // sp_ulysses_degree == rank // sp_ulysses_degree:
                ulysses_ranks.append(i)

            if i % sp_ulysses_degree == rank % sp_ulysses_degree:
                ring_ranks.append(i)

    assert len(ring_ranks) == sp_ring_degree
    assert len(ulysses_ranks) == sp_ulysses_degree

    ring_pg = dist.new_group(ranks=ring_ranks)  # expect: RNK105
    ulysses_pg = dist.new_group(ranks=ulysses_ranks)  # expect: RNK105

    attn = build_hybrid_attn(ulysses_pg, ring_pg)
    out = attn(torch.randn(2, 3816, nheads, 128, device=f"cuda:{rank}"))
