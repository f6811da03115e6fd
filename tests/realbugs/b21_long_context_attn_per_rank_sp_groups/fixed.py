"""Every rank creates every ring and Ulysses group, in the same order, and keeps its own.

Report: https://github.com/feifeibear/long-context-attention/pull/12
Class: B partial group creation
"""

import torch
import torch.distributed as dist


def set_seq_parallel_pg(sp_ulysses_degree, sp_ring_degree, rank, world_size):
    num_ulysses_pgs = world_size // sp_ulysses_degree
    for i in range(num_ulysses_pgs):
        ulysses_ranks = list(range(i * sp_ulysses_degree, (i + 1) * sp_ulysses_degree))
        group = torch.distributed.new_group(ulysses_ranks)
        if rank in ulysses_ranks:
            ulyssess_pg = group

    num_ring_pgs = world_size // sp_ring_degree
    for i in range(num_ring_pgs):
        ring_ranks = list(range(i, world_size, num_ring_pgs))
        group = torch.distributed.new_group(ring_ranks)
        if rank in ring_ranks:
            ring_pg = group

    return ulyssess_pg, ring_pg


if __name__ == "__main__":
    dist.init_process_group("nccl")

    rank = dist.get_rank()
    world_size = dist.get_world_size()
    nheads = 2

    sp_ulysses_degree = min(nheads, world_size)
    sp_ring_degree = world_size // sp_ulysses_degree

    ulysses_pg, ring_pg = set_seq_parallel_pg(sp_ulysses_degree, sp_ring_degree, rank, world_size)

    attn = build_hybrid_attn(ulysses_pg, ring_pg)
    out = attn(torch.randn(2, 3816, nheads, 128, device=f"cuda:{rank}"))
