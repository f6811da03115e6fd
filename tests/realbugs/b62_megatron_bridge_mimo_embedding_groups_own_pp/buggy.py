"""The MIMO embedding groups are built from the caller's own pipeline group, so ranks of
different PP groups call dist.new_group() with different rank lists.

Report: https://github.com/NVIDIA-NeMo/Megatron-Bridge/pull/4985
Class: B partial group creation

Static reach: visible; populate_embedding_and_position_groups() takes this rank's
`pp_group`, reads its ranks with dist.get_process_group_ranks(), and passes the first
stage (and last stage) of that group to dist.new_group(); every global rank must create
every such group, in the same order.
"""

from typing import Optional, Tuple

import torch.distributed as dist


def populate_embedding_and_position_groups(
    pp_group: dist.ProcessGroup,
) -> Tuple[Optional[dist.ProcessGroup], Optional[dist.ProcessGroup]]:
    """Create embedding-related process groups from PP group ranks.

    IMPORTANT: This calls dist.new_group which is a collective operation.
    Must be called on all ranks that could participate.
    """
    if pp_group is None:
        return None, None

    pp_ranks = sorted(dist.get_process_group_ranks(pp_group))

    # Position embeddings only on first PP stage
    pos_embd_ranks = [pp_ranks[0]]
    pos_embd_pg = dist.new_group(ranks=pos_embd_ranks)  # expect: RNK105

    # Word embeddings on first and last PP stages (for tied embeddings)
    embd_ranks = [pp_ranks[0]]
    if len(pp_ranks) > 1 and pp_ranks[-1] != pp_ranks[0]:
        embd_ranks.append(pp_ranks[-1])
    embd_pg = dist.new_group(ranks=embd_ranks)

    return pos_embd_pg, embd_pg


class MegatronMIMOProvider:
    def _get_pg_collections_from_grids(self, grids):
        pg_collections = {}
        for module_name, grid in grids.items():
            pp_group = grid.get_pg(["pp"])

            # dist.new_group() is a collective on the default PG — all ranks must
            # call it in the same global order regardless of module membership.
            pos_embd_pg, embd_pg = populate_embedding_and_position_groups(pp_group)
            pg_collections[module_name] = (pos_embd_pg, embd_pg)
        return pg_collections
