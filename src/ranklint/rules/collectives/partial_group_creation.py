"""RNK105 partial-group-creation."""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from ranklint.analysis.project.facts import ProjectFacts
from ranklint.analysis.walk import catalog
from ranklint.analysis.walk.names import dotted_name
from ranklint.analysis.walk.sources import source_excerpt
from ranklint.findings import Confidence, Evidence, Link, Severity
from ranklint.rules.base import ProjectFinding, Rule
from ranklint.rules.collectives._divergence import divergence_findings
from ranklint.rules.collectives._evidence import DIVERGENCE_TIERS, context_link, source_link

HIGH = Confidence.HIGH


class PartialGroupCreation(Rule):
    code = "RNK105"
    name = "partial-group-creation"
    severity = Severity.ERROR
    project = True
    summary = "A process group or device mesh is created by only some ranks"
    what = """\
Reports `new_group`, `new_subgroups`, `new_subgroups_by_enumeration`,
`init_device_mesh` and `DeviceMesh(...)` calls that only some ranks reach
(the same reachability as RNK102: rank-dependent branches, loops, early exits,
rank-zero-only functions, project helpers called under rank conditions), that
rank-dependent branches make with different arguments, or whose ranks
argument depends on the calling rank (`new_group([rank, rank ^ 1])`).
"""
    why = """\
Creating a group is a collective over the default group: every rank must
call `new_group` for every group, in the same order, with the same ranks —
also the ranks that will not be members. A rank that skips one, or builds
only "its own" group, hangs the others in group creation or silently pairs
group N on one rank with group N+1 on another, so later collectives run on
the wrong ranks.
"""
    limits = """\
Same as RNK102 for reachability. Ranks arguments built from loop variables
(`for i in range(n): new_group(range(i * tp, (i + 1) * tp))`) are the correct
pattern and are not reported; nor is `new_group([dist.get_rank()])` (or
`[rank]`, `[global_rank]`), a one-rank group of the caller (a Megatron
idiom). `init_process_group` (with
the process's own `rank=` by design) is initialisation, not a subgroup.
Creation under `if self.x is None:` is lazy — whichever call comes first
creates it on every rank — and is not followed through calls.
"""
    tiers = DIVERGENCE_TIERS
    runtime_check = """\
Group creation is a collective of the whole world; the companion records
`new_group` with its ranks and reports the ranks that never call it.

```python
import pytest
import torch.distributed as dist
from ranklint.runtime import DivergenceError, run_ranks


def make_rollout_group(rank, world_size):
    if rank in (0, 1):
        dist.new_group([0, 1])  # ranks 2 and 3 never call it


with pytest.raises(DivergenceError, match="new_group"):
    run_ranks(make_rollout_group, 4)
```
"""
    valid = (
        """
        import torch.distributed as dist


        def build_groups(world_size, tp):
            rank = dist.get_rank()
            mine = None
            for start in range(0, world_size, tp):
                ranks = list(range(start, start + tp))
                group = dist.new_group(ranks)  # every rank creates every group
                if rank in ranks:
                    mine = group
            return mine
        """,
        """
        import os

        import torch.distributed as dist


        def setup():
            # The default group is created with the process's own rank by design.
            rank = int(os.environ["RANK"])
            dist.init_process_group("nccl", rank=rank, world_size=8)
            # A one-rank group of the caller (Megatron's fallback when no group is given).
            return dist.new_group(ranks=[dist.get_rank()])


        def solo_group(rank):
            # The same, spelled with the rank (torchrec metrics/tests/test_metric_module.py).
            return dist.new_group(ranks=[rank], backend="gloo")
        """,
        """
        import torch.distributed as dist
        from torch.distributed.device_mesh import init_device_mesh


        class Rollout:
            def __init__(self):
                self.mesh = None

            def start(self):
                self._ensure_mesh()  # every rank, first

            def _ensure_mesh(self):
                if self.mesh is None:  # lazily, once per object
                    self.mesh = init_device_mesh("cpu", (dist.get_world_size(),))

            def resume(self, rank):
                if rank == 0:
                    self._ensure_mesh()
        """,
    )
    invalid = (
        """
        import torch.distributed as dist


        def build_groups(rank):
            if rank < 4:
                return dist.new_group([0, 1, 2, 3])  # expect: RNK105 (medium)
            return dist.new_group([4, 5, 6, 7])


        def pair_group():
            rank = dist.get_rank()
            return dist.new_group([rank, rank ^ 1])  # expect: RNK105
        """,
        """
        import torch.distributed as dist
        from torch.distributed.device_mesh import init_device_mesh


        def setup(world_size):
            if dist.get_rank() == 0:
                return init_device_mesh("cuda", (world_size,))  # expect: RNK105
            return None
        """,
        """
        from datetime import timedelta

        import torch
        import torch.distributed as dist

        # https://github.com/pytorch/pytorch/issues/25390: each process looks up its
        # own pair and creates only that group; every rank must create every group.
        rank = dist.get_rank()
        world = dist.get_world_size()
        perm = torch.randperm(world, generator=torch.Generator().manual_seed(0))
        start = 0
        while rank not in perm[start : start + 2]:
            start += 2
        group = perm.tolist()[start : start + 2]
        pg = dist.new_group(group, timeout=timedelta(seconds=30))  # expect: RNK101, RNK105
        """,
        """
        import torch.distributed as dist


        def halves():
            # The ranks are chosen in a rank-dependent branch.
            if dist.get_rank() < 2:
                members = [0, 1]
            else:
                members = [2, 3]
            return dist.new_group(members)  # expect: RNK105
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        spec, _ = self.ctx.calls.classify(node)
        if spec is None or spec.kind is not catalog.CallKind.GROUP_CREATION:
            return
        rank = self.ctx.rank
        for arg in node.args:
            if _is_self_group(arg.value):
                continue
            taint = rank.taint(arg.value)
            if taint.rank:
                self.report(
                    node,
                    f"`{spec.short}` gets a ranks argument that depends on the calling rank: "
                    f"each rank builds a different group, but every rank must create every "
                    f"group with the same ranks; create all groups in a loop on every rank "
                    f"and keep the one that contains this rank",
                    evidence=self._evidence(node, arg.value, taint.sources),
                )
                return

    def _evidence(
        self, node: cst.Call, argument: cst.BaseExpression, sources: Iterable[tuple[str, str]]
    ) -> Evidence:
        """Where the ranks argument's rank-dependence comes from; the rest is certain:
        every rank creates the group, directly, with its own argument."""
        shown = source_excerpt(argument)
        return Evidence(
            source=source_link(sources, shown),
            guard=Link("ranks-argument", f"`{shown}` differs between the ranks", HIGH),
            group=Link("default-group", "group creation runs on every rank of the job", HIGH),
            reach=Link("direct", f"`{source_excerpt(node.func)}()`", HIGH),
            context=context_link(self.ctx.path),
        )

    @classmethod
    def check_project(cls, project: ProjectFacts) -> Iterable[ProjectFinding]:
        return divergence_findings(project, group_creation=True)


# Names that hold the caller's global rank itself (not a local or group rank).
_GLOBAL_RANK_NAMES = frozenset({"rank", "global_rank", "my_rank", "world_rank"})


def _is_self_group(node: cst.BaseExpression) -> bool:
    """``[dist.get_rank()]``, ``[rank]``: a one-rank group of the caller, a known idiom
    (Megatron's fallback; torchrec's metric tests)."""
    if not (isinstance(node, cst.List) and len(node.elements) == 1):
        return False
    member = node.elements[0].value
    if isinstance(member, cst.Name):
        return member.value in _GLOBAL_RANK_NAMES
    return isinstance(member, cst.Call) and (dotted_name(member.func) or "").endswith("get_rank")
