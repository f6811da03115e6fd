"""RNK110 group-local-root."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ranklint.analysis.walk import catalog
from ranklint.analysis.walk.arguments import find_argument
from ranklint.analysis.walk.axes import axes_of_expression
from ranklint.analysis.walk.context import FileContext
from ranklint.analysis.walk.function_nodes import FunctionNodes
from ranklint.findings import Applicability, Confidence, Evidence, Link, Severity
from ranklint.rules.base import PendingFinding, PendingFix, Rule
from ranklint.rules.codemods import argument_holding, as_keyword
from ranklint.rules.collectives._evidence import context_link, group_text_link
from ranklint.rules.collectives._group_local import (
    LocalRoot,
    MixedComparison,
    is_default_group,
    scan_scope,
)
from ranklint.syntax import placement, source_text


class GroupLocalRoot(Rule):
    code = "RNK110"
    name = "group-local-root"
    severity = Severity.ERROR
    default_enabled = False
    summary = "A rank numbered within a group is passed where torch expects a global rank"
    what = """\
Reports the `src`/`dst` of a rooted collective on a group other than the
default one when the value is a rank *within that group*:

- derived from a group query: `dist.get_rank(group)`, `group.rank()`,
  `dist.get_world_size(group)` (`for i in range(cp_size): broadcast(t, src=i,
  group=cp_group)`), `mesh.get_local_rank()`, `get_coordinate()`, or a
  `get_*_parallel_rank()` helper;
- a name or literal the same function compares with such a query
  (`if pg.rank() == rank:` ... `broadcast_object_list(objs, rank, group=pg)`;
  `if dist.get_rank(group) == 0:` ... `src=0, group=group`). Attributes set in
  one method (`self.coordinator_rank`) count in the others.

Also reports a comparison of a stored group-local rank with a value the same
function or class passes as a global root (`ctx.src != ctx.rank` where
`ctx.rank = dist.get_rank(group)` and `dist.reduce(t, ctx.src, group=group)`).
"""
    why = """\
`src` and `dst` are *global* ranks even when `group=` is given; torch maps
them into the group. A rank numbered within the group agrees with the global
one only for a group that starts at global rank 0 (the first tensor- or
data-parallel group, a one-node test). On every other group the collective
names a rank that is not a member ("rank is not part of group") or, worse, a
different member: the wrong rank's data is broadcast, or gathered results
land on a rank that discards them (pytorch#155680, torchrec#4601).

Fix: since torch 2.6, `group_src=`/`group_dst=` take the rank within the
group (`dist.broadcast(t, group_src=i, group=g)`); on older versions map it
with `dist.get_global_rank(g, i)`. A comparison must compare ranks of the
same numbering: keep `dist.get_rank()` (global) next to a global root.
"""
    limits = """\
Only values visibly tied to a group query in the same function (or, for
`self.`/`ctx.` attributes, the same class) are reported; a group-local rank
passed in from a caller is not followed across calls. A literal root
(`src=0, group=g`) is reported only when the function itself compares that
literal with a rank of the same group; otherwise whether global rank 0
belongs to `g` depends on the layout (RNK109, opt-in, reviews those). Ranks
mapped back to global numbering (`dist.get_global_rank(g, i)`,
`dist.get_process_group_ranks(g)[i]`) and products (`pp_rank * tp_size +
tp_rank`, a global rank built from axis ranks) are not group-local.
"""
    tiers = """\
Each finding records the group query the rank is numbered by (**source**) and
the group (**group**): the code itself numbers the rank within that group, so
the findings are high whatever is known of its members. A comparison inside
an `assert` (`assert group.rank() == 0` under a global rank-0 test) checks the
root rather than choosing it and is not read as numbering a literal root.
"""
    fix_applicability = frozenset({Applicability.UNSAFE})
    fix_safety = """\
Where the root is passed as `src=`/`dst=` (or as the last positional
argument) to a `torch.distributed` collective that takes `group_src`/
`group_dst`, the fix passes the same value as `group_src=`/`group_dst=`, the
parameter that takes a rank within the group. It is unsafe: it changes which
rank is the root (that is the point), and `group_src`/`group_dst` exist only
since torch 2.6; on older torch the call raises `TypeError`, so map the rank
with `dist.get_global_rank(group, rank)` there instead. Comparisons of mixed
numberings get no fix: which side to map is the author's call.
"""
    fixes = (
        (
            """
            import torch.distributed as dist


            def chain(state, cp_group):
                cp_size = dist.get_world_size(cp_group)
                for i in range(cp_size):
                    dist.broadcast(state, src=i, group=cp_group)
            """,
            """
            import torch.distributed as dist


            def chain(state, cp_group):
                cp_size = dist.get_world_size(cp_group)
                for i in range(cp_size):
                    dist.broadcast(state, group_src=i, group=cp_group)
            """,
        ),
    )
    runtime_check = """\
A group-local rank passed as a global root names another rank (or none in the
group); the companion shows which rank raised, or, where the rank exists, whose
data arrived.

```python
import pytest
import torch
import torch.distributed as dist
from ranklint.runtime import RankFailure, run_ranks


def share_from_leader(rank, world_size):
    groups = [dist.new_group([0, 1]), dist.new_group([2, 3])]
    group = groups[rank // 2]
    leader = 0  # the leader's rank *within* the group
    dist.broadcast(torch.ones(1), src=leader, group=group)  # src is a global rank


with pytest.raises(RankFailure, match="Global rank 0 is not part of group"):
    run_ranks(share_from_leader, 4)
```
"""
    valid = (
        """
        import torch.distributed as dist


        def invoke_on_rank_and_broadcast(pg, rank, func):
            out = [func() if pg.rank() == rank else None]
            dist.broadcast_object_list(out, group=pg, group_src=rank)
            return out[0]


        def chain(state, cp_group):
            cp_size = dist.get_world_size(cp_group)
            for i in range(cp_size):
                dist.broadcast(state, src=dist.get_global_rank(cp_group, i), group=cp_group)
        """,
        """
        import torch.distributed as dist


        def share(keys, group):
            # The leader is chosen within the group and named by its global rank.
            if dist.get_rank(group) == 0:
                keys[0] = "leader"
            leader = dist.get_process_group_ranks(group)[0]
            dist.broadcast_object_list(keys, src=leader, group=group)


        def everyone(t, rank):
            # No group: `src` is global and so is the rank it is compared with.
            if dist.get_rank() == rank:
                t.fill_(1)
            dist.broadcast(t, src=rank)
        """,
        """
        import torch.distributed as dist


        class Wrapper:
            def __init__(self, group, coordinator_rank=0):
                self.group = group
                self.coordinator = dist.get_global_rank(group, coordinator_rank)
                self.rank = dist.get_rank()

            def broadcast(self, obj):
                lst = [obj] if self.rank == self.coordinator else [None]
                dist.broadcast_object_list(lst, src=self.coordinator, group=self.group)
                return lst[0]
        """,
    )
    invalid = (
        """
        import torch.distributed as dist


        def invoke_on_rank_and_broadcast(pg, rank, func):
            # https://github.com/meta-pytorch/torchrec/pull/4601
            out = [func() if pg.rank() == rank else None]
            dist.broadcast_object_list(out, rank, group=pg)  # expect: RNK110
            return out[0]


        def chain(state, cp_group):
            # https://github.com/OpenPipe/ART/issues/919
            cp_size = dist.get_world_size(cp_group)
            for i in range(cp_size):
                dist.broadcast(state, src=i, group=cp_group)  # expect: RNK110


        def share(keys, group):
            # https://github.com/pytorch/pytorch/issues/155680
            if dist.get_rank(group) == 0:
                keys[0] = "leader"
            dist.broadcast_object_list(keys, src=0, group=group)  # expect: RNK110
        """,
        """
        import torch
        import torch.distributed as dist


        class _Broadcast(torch.autograd.Function):
            # https://github.com/pytorch/pytorch/issues/130515
            @staticmethod
            def forward(ctx, src, group, tensor):
                ctx.src, ctx.group = src, group
                ctx.rank = dist.get_rank(group=group)
                dist.broadcast(tensor, src, group=group)
                return tensor

            @staticmethod
            def backward(ctx, grad):
                dist.reduce(grad, ctx.src, group=ctx.group)
                if ctx.src != ctx.rank:  # expect: RNK110
                    grad.zero_()
                return None, None, grad
        """,
    )

    def __init__(self, ctx: FileContext, sink: Callable[[PendingFinding], None]) -> None:
        super().__init__(ctx, sink)
        # A rooted collective on a group other than the default one was walked.
        # (A gate that saves the reading: without one, it finds nothing; not mutated.)
        self._rooted = False  # pragma: no mutate
        self._functions = FunctionNodes(ctx, nested=True)
        # Classes and functions, in the order the walk reached them.
        self._scopes: list[cst.ClassDef | cst.FunctionDef] = []

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._scopes.append(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.append(node)
        self._functions.enter(node)

    def visit_Call(self, node: cst.Call) -> None:
        self._functions.add(node)
        if self._rooted:
            return
        spec, _ = self.ctx.calls.classify(node)
        if spec is not None and spec.roots and spec.group is not None:
            self._rooted = not is_default_group(find_argument(node, spec.group))

    def visit_Assign(self, node: cst.Assign) -> None:
        self._functions.add(node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._functions.add(node)

    def visit_Assert(self, node: cst.Assert) -> None:
        self._functions.add(node)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self._functions.add(node)

    def visit_For(self, node: cst.For) -> None:
        self._functions.add(node)

    def leave_Module(self, node: cst.Module) -> None:
        # Read once the walk is over, and only in modules with such a collective.
        if not self._rooted:
            return
        resolve = self.ctx.resolve
        read: set[int] = set()
        reported: set[int] = set()
        for scope in self._scopes:
            # (Saves reading a class's methods again alone: what that finds, the
            # class's reading found and `reported` drops; not mutated.)
            if id(scope) in read:  # pragma: no mutate
                continue
            # By qualified name: the walk's classifier depends on where it was.
            found, functions = scan_scope(
                scope,
                self._functions.nodes,
                resolve,
                lambda call: catalog.lookup(resolve(call.func)),
            )
            read.update(id(function) for function in functions)  # pragma: no mutate  (the same)
            # A nested function is read with its outer one, and again alone.
            for root in found.roots:
                if id(root.value) not in reported:
                    reported.add(id(root.value))
                    self._report_root(node, root)
            for mixed in found.comparisons:
                if id(mixed.node) not in reported:
                    reported.add(id(mixed.node))
                    self._report_comparison(node, mixed)

    def _report_root(self, module: cst.Module, root: LocalRoot) -> None:
        local = root.local
        self.report(
            root.value,
            f"`{root.keyword}={_short(root.value)}` of `{root.call}` is a rank within "
            f"`{root.group}` ({local.how} `{local.source}`), but `{root.keyword}` is a global "
            f"rank: it names the wrong rank, or none, on every group that does not start "
            f"at global rank 0; pass `group_{root.keyword}=` (torch >= 2.6) or "
            f"`dist.get_global_rank({root.group}, ...)`",
            where=placement(module, root.value),
            fix=self._fix(root),
            evidence=Evidence(
                source=Link("rank-query", f"`{local.source}`", HIGH),
                group=_group_link(root.group_node),
                context=context_link(self.ctx.path),
            ),
        )

    def _fix(self, root: LocalRoot) -> PendingFix | None:
        """``group_src=``/``group_dst=`` for ``src=``/``dst=``, where torch takes it."""
        call = root.node
        qualified = self.ctx.resolve(call.func)
        spec = catalog.lookup(qualified) if qualified is not None else None
        keyword = f"group_{root.keyword}"
        if spec is None or not qualified or not qualified.startswith("torch.distributed."):
            return None
        if all(param.keyword != keyword for param in spec.roots):
            return None
        arg = argument_holding(call, root.value)
        if arg is None or any(
            other.keyword is not None and other.keyword.value == keyword for other in call.args
        ):
            return None
        fixed = as_keyword(call, arg, keyword)
        if fixed is None:
            return None
        return PendingFix(
            f"Pass it as `{keyword}=` (a rank within the group; torch >= 2.6)",
            call,
            fixed,
            Applicability.UNSAFE,
        )

    def _report_comparison(self, module: cst.Module, mixed: MixedComparison) -> None:
        self.report(
            mixed.node,
            f"compares `{mixed.root_side}`, a global root (`{mixed.call}` takes it as "
            f"`src`/`dst`), with `{mixed.local_side}`, a rank within a group (from "
            f"`{mixed.local.source}`): the two are numbered differently, so the test is "
            f"wrong on every group that does not start at global rank 0; compare with "
            f"`dist.get_rank()` or map one side with `dist.get_global_rank`",
            where=placement(module, mixed.node),
            evidence=Evidence(
                source=Link("rank-query", f"`{mixed.local.source}`", HIGH),
                group=_group_link(_parsed(mixed.local.source)),
                context=context_link(self.ctx.path),
            ),
        )


def _parsed(text: str) -> cst.BaseExpression | None:
    try:
        return cst.parse_expression(text)
    except cst.ParserSyntaxError:
        return None


def _group_link(group: cst.BaseExpression | None) -> Link:
    """What is known of the group the rank is numbered in. Its members need not
    be known: the code itself numbers the rank within that group (a query of
    the group), which is what the finding is about."""
    if group is None:
        return Link("unknown-members", "the group is not in view", HIGH)
    link = group_text_link(source_text(group), axes_of_expression(group) or None)
    return Link(link.kind, link.detail, HIGH)


HIGH = Confidence.HIGH


def _short(node: cst.BaseExpression) -> str:
    text = source_text(node)
    return text if len(text) <= 40 else text[:37] + "..."
