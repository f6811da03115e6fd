"""Process group and collective rules (RNK1xx)."""

from __future__ import annotations

from ranklint.rules.collectives.barrier_as_sync import BarrierAsSync
from ranklint.rules.collectives.global_root_with_subgroup import GlobalRootWithSubgroup
from ranklint.rules.collectives.ignored_process_group import IgnoredProcessGroup
from ranklint.rules.collectives.implicit_reduce_op import ImplicitReduceOp
from ranklint.rules.collectives.import_time_process_group import ImportTimeProcessGroup
from ranklint.rules.collectives.missing_root import MissingRoot
from ranklint.rules.collectives.partial_group_creation import PartialGroupCreation
from ranklint.rules.collectives.rank_dependent_root import RankDependentRoot
from ranklint.rules.collectives.rank_divergent_collective import RankDivergentCollective

__all__ = [
    "BarrierAsSync",
    "GlobalRootWithSubgroup",
    "IgnoredProcessGroup",
    "ImplicitReduceOp",
    "ImportTimeProcessGroup",
    "MissingRoot",
    "PartialGroupCreation",
    "RankDependentRoot",
    "RankDivergentCollective",
]
