"""RNK108 ignored-process-group."""

from __future__ import annotations

import libcst as cst

from ranklint.analysis.summary import find_argument, has_unpacking
from ranklint.findings import Severity
from ranklint.rules.base import Rule

_GROUP_PARAMS = frozenset({"group", "pg", "process_group", "device_mesh", "mesh"})

_WORLD_SIZE_QUERIES = frozenset(
    f"{prefix}.get_world_size"
    for prefix in ("torch.distributed", "torch.distributed.distributed_c10d", "deepspeed.comm")
)

# Words that make a `*_group` parameter a count or an index, not a process group.
_NOT_A_GROUP = frozenset({"num", "n", "count", "size", "idx", "index", "id", "ids", "name"})


class IgnoredProcessGroup(Rule):
    code = "RNK108"
    name = "ignored-process-group"
    severity = Severity.WARNING
    summary = "A function takes a process group but a collective inside uses the default group"
    what = """\
In a function with a process-group parameter (`group`, `pg`,
`process_group`, `*_group`, `*_pg`, `device_mesh`, `mesh`; not counts such as
`num_samples_group`), reports collectives that pass no group, and — next to a
group parameter, not a mesh — `get_world_size()` without one (the classic
"average over the wrong number of ranks"). `get_rank()` without a group is
not reported: the global rank is often what is meant (logging on rank 0,
membership tests against global rank lists).
Calls under a condition that mentions the parameter (`if group is None:`)
are not reported: that is the usual default-group fallback.
"""
    why = """\
The caller passed a group because the work is meant for that group. The
call without `group=` silently runs on the default (world) group instead:
the sum includes ranks of other replicas, the rank is the global one, or the
collective waits for ranks that never call it — and it works in every test
with a single group.
"""
    limits = """\
Wrappers from the catalog without a group parameter (accelerate, Lightning)
are not reported.
"""
    valid = (
        """
        import torch.distributed as dist


        def average(t, group=None):
            if group is None:
                dist.all_reduce(t)
            else:
                dist.all_reduce(t, group=group)
            return t / dist.get_world_size(group)
        """,
    )
    invalid = (
        """
        import torch.distributed as dist


        def average(t, dp_group):
            dist.all_reduce(t, op=dist.ReduceOp.SUM)  # expect: RNK108
            return t / dist.get_world_size()  # expect: RNK108


        def scatter_counts(t, num_samples_per_group):
            dist.all_reduce(t, op=dist.ReduceOp.SUM)  # no group parameter here
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        frame = ctx.function
        if frame is None or not isinstance(frame.node, cst.FunctionDef):
            return
        params = [
            p.name.value
            for p in (
                *frame.node.params.posonly_params,
                *frame.node.params.params,
                *frame.node.params.kwonly_params,
            )
            if _is_group_param(p.name.value)
        ]
        if not params:
            return
        spec, target = ctx.calls.classify(node)
        if spec is not None:
            if spec.group is None or has_unpacking(node):
                return
            if find_argument(node, spec.group) is not None:
                return
            what = f"`{spec.short}`"
        elif target in _WORLD_SIZE_QUERIES:
            # A mesh is sized per dimension (`mesh.size(dim)`); the world size
            # next to a mesh parameter is often meant.
            params = [p for p in params if p not in ("mesh", "device_mesh")]
            if node.args or not params:
                return
            what = f"`{target.rsplit('.', 1)[-1]}()`"
        else:
            return
        mentioned = {
            name.value for condition in ctx.conditions for name in _names_in(condition.test)
        }
        if mentioned & set(params):
            return
        self.report(
            node,
            f"{what} uses the default group although this function takes "
            f"`{params[0]}`: it runs over all ranks instead of the caller's group; pass "
            f"`group={params[0]}` (for a mesh, `group={params[0]}.get_group(dim)`)",
        )


def _is_group_param(name: str) -> bool:
    if name in _GROUP_PARAMS:
        return True
    if not (name.endswith("_group") or name.endswith("_pg")):
        return False
    return not (set(name.lower().split("_")) & _NOT_A_GROUP)


def _names_in(node: cst.CSTNode) -> list[cst.Name]:
    found: list[cst.Name] = []
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name):
            found.append(current)
        stack.extend(current.children)
    return found
