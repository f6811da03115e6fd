"""All broadcast groups of both directions are created first, in one globally sorted pass, so every rank issues new_group() in the same order.

Report: https://github.com/cmriat/Etha/pull/111
Class: B partial group creation
"""

from collections.abc import Iterable

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


def _broadcast_group_ranks(m2m: M2MMap) -> set[tuple[int, ...]]:
    groups: set[tuple[int, ...]] = set()
    for route in m2m.routes or []:
        if route.kind == Transport.BROADCAST:
            groups.add(tuple(sorted({route.src.rank} | {dst.rank for dst in route.dsts})))
    return groups


def prewarm_broadcast_groups(m2m_maps: Iterable[M2MMap | None]) -> None:
    """Create every broadcast group across the given maps in one canonical pass."""
    groups: set[tuple[int, ...]] = set()
    for m2m in m2m_maps:
        if m2m is not None:
            groups |= _broadcast_group_ranks(m2m)
    for group_ranks in sorted(groups):
        get_or_create_process_group(list(group_ranks))


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
    # Cache hits after prewarm_broadcast_groups().
    for group_ranks in sorted(_broadcast_group_ranks(m2m)):
        get_or_create_process_group(list(group_ranks))

    chunks: list[Chunk] = []
    for route in routes:
        chunks.extend(_route_chunks(route, rank, source_tensor, target_tensor, transfer_dtype))
    return chunks


class TensorBusAgent:
    def _handle_register_tensors(self, batch_state, grouped):
        # Both sides materialize local send before recv, which are opposite
        # directions. Create their union before either can first-touch a group.
        prewarm_broadcast_groups(
            m2m
            for pair_name in batch_state.pair_names
            for m2m in (self.pairs[pair_name].m2m_send, self.pairs[pair_name].m2m_recv)
        )

        all_send_chunks = []
        all_recv_chunks = []
        for pair_name in batch_state.pair_names:
            pair_state = self.pairs[pair_name]
            for tensor, transfer_dtype in self._load_tensors(pair_state, grouped[pair_name]):
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
