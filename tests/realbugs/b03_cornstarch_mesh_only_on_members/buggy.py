"""Non-member ranks `continue` past new_group(), so each group is created by its members only.

Report: https://github.com/cornstarch-org/Cornstarch/pull/76
Class: B partial group creation

Static reach: visible; `if my_rank not in modality_ranks: continue` is a rank-dependent
early exit before new_group().
"""

import torch.distributed as dist


def materialize(plan):
    my_rank = dist.get_rank()
    groups = {}
    for modality, modality_ranks in plan.items():
        if my_rank not in modality_ranks:
            continue
        groups[modality] = dist.new_group(ranks=modality_ranks)  # expect: RNK105
    return groups
