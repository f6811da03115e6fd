"""RNK113 root-not-a-rank."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ranklint.analysis.walk.arguments import find_argument
from ranklint.analysis.walk.context import FileContext
from ranklint.findings import Severity
from ranklint.rules.base import PendingFinding, Rule

_RANK_LISTS = frozenset(
    {
        "torch.distributed.get_process_group_ranks",
        "torch.distributed.distributed_c10d.get_process_group_ranks",
    }
)


class RootNotARank(Rule):
    code = "RNK113"
    name = "root-not-a-rank"
    severity = Severity.ERROR
    summary = "The root of a collective is a list of ranks, not one rank"
    what = """\
Reports a `src`, `dst`, `group_src` or `group_dst` that is the whole list
`dist.get_process_group_ranks(group)` returns (directly, or through a name
the same function assigned it to), rather than one of its elements.
"""
    why = """\
A root is one integer rank. torch rejects a list with a `TypeError`
("incompatible function arguments") as soon as the collective is called;
where the call sits on a rarely taken path (a fallback, a resharding step),
the job dies there after hours. The intended root is almost always one
member: `ranks[0]`, the group's first (global) rank.
"""
    limits = """\
Only the list from `get_process_group_ranks` is recognised. A tensor root is
not reported: torch accepts an integer 0-d tensor through `__index__`
(measured on gloo, torch 2.13), at the cost of a device-to-host copy.
"""
    valid = (
        """
        import torch.distributed as dist


        def share(t, group):
            ranks = dist.get_process_group_ranks(group)
            dist.broadcast(t, src=ranks[0], group=group)
            dist.broadcast(t, src=dist.get_process_group_ranks(group)[0], group=group)
        """,
    )
    invalid = (
        """
        import torch.distributed as dist


        def share(t, group):
            ranks = dist.get_process_group_ranks(group)
            dist.broadcast(t, src=ranks, group=group)  # expect: RNK113
            dist.reduce(t, dst=dist.get_process_group_ranks(group), group=group)  # expect: RNK113
        """,
    )

    def __init__(self, ctx: FileContext, sink: Callable[[PendingFinding], None]) -> None:
        super().__init__(ctx, sink)
        # Names bound to a rank list, per enclosing function (innermost last).
        self._lists: list[set[str]] = [set()]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._lists.append(set())

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._lists.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        names = self._lists[-1]
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                if self._is_rank_list_call(node.value):
                    names.add(target.target.value)
                else:
                    names.discard(target.target.value)

    def _is_rank_list_call(self, node: cst.BaseExpression) -> bool:
        return isinstance(node, cst.Call) and self.ctx.resolve(node.func) in _RANK_LISTS

    def visit_Call(self, node: cst.Call) -> None:
        spec, _ = self.ctx.calls.classify(node)
        if spec is None or not spec.roots:
            return
        for root in spec.roots:
            value = find_argument(node, root)
            if value is None:
                continue
            named = isinstance(value, cst.Name) and value.value in self._lists[-1]
            if named or self._is_rank_list_call(value):
                self.report(
                    value,
                    f"`{root.keyword}` of `{spec.short}` is the list of the group's ranks, not "
                    f"one rank: torch raises TypeError when the call runs; pass one member "
                    f"(`{root.keyword}=ranks[0]`)",
                )
