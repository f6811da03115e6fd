"""Broadcast groups are created on first touch per direction, and the two sides of a pair walk the directions in opposite order, so the WORLD-collective new_group() calls are issued in different orders.

Report: https://github.com/cmriat/Etha/pull/111
Class: B partial group creation

Static reach: partly; m2m_to_chunks() creates the broadcast groups of one M2MMap (via
get_or_create_process_group -> dist.new_group) and the agent calls it for m2m_send before
m2m_recv. That one side's send map is the other side's recv map (so the two sides create
the same groups in opposite order once both directions broadcast) is a fact of the pairing.
"""

import torch
import torch.distributed as dist

from etha.comm.ir import Chunk, M2MMap, Transport

# Global cache for subgroup handles (avoid repeated collective new_group)
_PROCESS_GROUP_CACHE: dict[tuple[int, ...], dist.ProcessGroup] = {}


def get_or_create_process_group(ranks: list[int]) -> dist.ProcessGroup:
    key = tuple(sorted(ranks))
    if key not in _PROCESS_GROUP_CACHE:
        _PROCESS_GROUP_CACHE[key] = dist.new_group(ranks=list(key))
    return _PROCESS_GROUP_CACHE[key]


def m2m_to_chunks(
    m2m: M2MMap,
    rank: int,
    source_tensor: torch.Tensor | None = None,
    target_tensor: torch.Tensor | None = None,
    transfer_dtype: torch.dtype | None = None,
) -> list[Chunk]:
    """Materialize an ``M2MMap`` (topology) onto local tensors into chunks."""
    routes = m2m.routes
    if not routes:
        return []
    broadcast_groups = set()

    for route in routes:
        if route.kind == Transport.BROADCAST:
            group_ranks = (route.src.rank,) + tuple(sorted({d.rank for d in route.dsts}))
            broadcast_groups.add(group_ranks)
    for group_ranks in sorted(broadcast_groups):
        get_or_create_process_group(list(group_ranks))  # expect: RNK105

    chunks: list[Chunk] = []
    for route in routes:
        chunks.extend(_route_chunks(route, rank, source_tensor, target_tensor, transfer_dtype))
    return chunks


class TensorBusAgent:
    def _handle_register_tensors(self, batch_state, grouped):
        all_send_chunks = []
        all_recv_chunks = []
        for pair_name in batch_state.pair_names:
            pair_state = self.pairs[pair_name]
            for tensor, transfer_dtype in self._load_tensors(pair_state, grouped[pair_name]):
                # Each side walks its local send direction before its local recv direction.
                if pair_state.m2m_send is not None:
                    all_send_chunks.extend(
                        m2m_to_chunks(
                            pair_state.m2m_send,
                            rank=self.rank,
                            source_tensor=tensor,
                            transfer_dtype=transfer_dtype,
                        )
                    )
                if pair_state.m2m_recv is not None:
                    all_recv_chunks.extend(
                        m2m_to_chunks(
                            pair_state.m2m_recv,
                            rank=self.rank,
                            target_tensor=tensor,
                            transfer_dtype=transfer_dtype,
                        )
                    )
        return all_send_chunks, all_recv_chunks
