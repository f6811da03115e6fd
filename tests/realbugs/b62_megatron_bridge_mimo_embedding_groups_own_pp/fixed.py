"""Every rank walks all PP rank groups in global order and creates every embedding group,
keeping the ones it belongs to.

Report: https://github.com/NVIDIA-NeMo/Megatron-Bridge/pull/4985
Class: B partial group creation
"""

from typing import Optional, Tuple

import torch.distributed as dist


def populate_embedding_and_position_groups(
    pp_rank_groups: list[list[int]] | None,
) -> Tuple[Optional[dist.ProcessGroup], Optional[dist.ProcessGroup]]:
    """Create embedding-related process groups from globally enumerated PP ranks."""
    if not pp_rank_groups:
        return None, None

    current_rank = dist.get_rank()
    local_pos_embd_pg = None
    local_embd_pg = None
    for pp_rank_group in pp_rank_groups:
        pp_ranks = sorted(pp_rank_group)

        # Every global rank must create every derived group in the same order.
        pos_embd_ranks = [pp_ranks[0]]
        pos_embd_pg = dist.new_group(ranks=pos_embd_ranks)

        embd_ranks = [pp_ranks[0]]
        if len(pp_ranks) > 1 and pp_ranks[-1] != pp_ranks[0]:
            embd_ranks.append(pp_ranks[-1])
        embd_pg = dist.new_group(ranks=embd_ranks)

        if current_rank in pos_embd_ranks:
            local_pos_embd_pg = pos_embd_pg
        if current_rank in embd_ranks:
            local_embd_pg = embd_pg

    return local_pos_embd_pg, local_embd_pg


class MegatronMIMOProvider:
    def _get_pg_collections_from_grids(self, grids):
        pg_collections = {}
        for module_name, grid in grids.items():
            pos_embd_pg, embd_pg = populate_embedding_and_position_groups(grid.get_rank_enum(["pp"]))
            pg_collections[module_name] = (pos_embd_pg, embd_pg)
        return pg_collections
