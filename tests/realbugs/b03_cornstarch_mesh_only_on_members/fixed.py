"""Every rank creates every modality group; only members keep theirs.

Report: https://github.com/cornstarch-org/Cornstarch/pull/76
Class: B partial group creation
"""

import torch.distributed as dist


def materialize(plan):
    my_rank = dist.get_rank()
    groups = {}
    for modality, modality_ranks in plan.items():
        g = dist.new_group(ranks=modality_ranks)
        if my_rank in modality_ranks:
            groups[modality] = g
    return groups
