"""RNK108 ignored-process-group."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

import libcst as cst

from ranklint.analysis.walk.arguments import find_argument, has_unpacking
from ranklint.analysis.walk.catalog import CallSpec
from ranklint.analysis.walk.context import FileContext
from ranklint.findings import Applicability, Confidence, Evidence, Link, Severity
from ranklint.rules.base import PendingFinding, PendingFix, Rule
from ranklint.rules.codemods import keyword_argument, with_argument
from ranklint.rules.collectives._evidence import context_link
from ranklint.syntax import source_text

_N = TypeVar("_N", bound=cst.CSTNode)
HIGH, MEDIUM = Confidence.HIGH, Confidence.MEDIUM

# Keywords that pass a process group (or a mesh) to a call.
_GROUP_KEYWORDS = frozenset({"group", "pg", "process_group", "device_mesh", "mesh"})
_GROUP_ANNOTATION = re.compile(r"\b(ProcessGroup|DeviceMesh)\b")

# The collectives whose group must be a ProcessGroup (functional ones take meshes too).
_C10D_PREFIXES = ("torch.distributed.distributed_c10d.", "torch.distributed.")
_FUNCTIONAL = "torch.distributed._functional_collectives."

_WORLD_SIZE_QUERIES = frozenset(
    f"{prefix}.get_world_size"
    for prefix in ("torch.distributed", "torch.distributed.distributed_c10d", "deepspeed.comm")
)


class IgnoredProcessGroup(Rule):
    code = "RNK108"
    name = "ignored-process-group"
    severity = Severity.WARNING
    summary = "A function takes a process group but a collective inside uses the default group"
    what = """\
In a function with a process-group parameter, reports collectives that pass
no group. A parameter is a process group when the function uses it as one:
passes it as `group=`, `process_group=` or `pg=`, or as the group argument of
a collective, or annotates it `ProcessGroup`; a mesh parameter
(`DeviceMesh`-annotated, or whose `get_group()` is called) counts too. A name
alone decides nothing: `norm_group` lists and `samples_per_group` counts are
not groups. Dividing by `get_world_size()` without a group in a function
that reduces over its group parameter is reported too (averaging over the
wrong number of ranks); other uses of queries (`get_rank()`, logging the
world size) are not collectives and are not reported. Calls under a
condition that mentions the parameter (`if group is None:`) are not
reported: that is the usual default-group fallback.
"""
    why = """\
The caller passed a group because the work is meant for that group. The
call without `group=` silently runs on the default (world) group instead:
the sum includes ranks of other replicas, or the collective waits for ranks
that never call it — and it works in every test with a single group.
"""
    limits = """\
Wrappers from the catalog without a group parameter (accelerate, Lightning)
are not reported. A group parameter that the function only forwards to
project helpers under another keyword is not recognised.
"""
    tiers = """\
Each finding records why the parameter is a group (**group**) and what ignores
it (**reach**). High: the parameter is annotated `ProcessGroup`/`DeviceMesh`,
or is the group of a collective in the function. Medium: it is only passed on
as `group=` to other calls or asked for `get_group()` (a parallel-dims object
is no process group), or the call without a group is a `barrier`, often meant
for every rank (a barrier for everyone after a group gather).
"""
    runtime_check = """\
A helper that ignores its group parameter reduces over the whole world; when
only the group's members call it, the other ranks never issue the collective.

```python
import pytest
import torch
import torch.distributed as dist
from ranklint.runtime import DivergenceError, run_ranks


def sync(tensor, group):
    dist.all_reduce(tensor)  # the group parameter is ignored: the world reduces


def step(rank, world_size):
    low = dist.new_group([0, 1])
    dist.new_group([2, 3])
    if rank in (0, 1):
        sync(torch.ones(1), group=low)


with pytest.raises(DivergenceError, match="ranks 2, 3 never issued it"):
    run_ranks(step, 4)
```
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
        """
        import torch.distributed as dist


        def clip(parameters, norm_group, max_norm):
            # `norm_group` is a list of parameters, never used as a process group.
            total = sum(p.grad.norm() ** 2 for p in norm_group)
            dist.all_reduce(total, op=dist.ReduceOp.SUM)
            return total


        def log_rank(t, group):
            # A query is not a collective.
            print(dist.get_rank(), dist.get_world_size())
            dist.broadcast(t, src=0, group=group)
        """,
    )
    invalid = (
        """
        import torch.distributed as dist
        from torch.distributed import ProcessGroup


        def average(t, dp_group):
            dist.all_reduce(t, op=dist.ReduceOp.SUM)  # expect: RNK108
            dist.all_reduce(t, op=dist.ReduceOp.SUM, group=dp_group)
            return t / dist.get_world_size()  # expect: RNK108


        def sync(t, pg: ProcessGroup):
            dist.barrier()  # expect: RNK108 (medium)


        def scatter_counts(t, num_samples_per_group):
            dist.all_reduce(t, op=dist.ReduceOp.SUM)  # no group parameter here
        """,
    )

    fix_applicability = frozenset({Applicability.UNSAFE})
    fix_safety = """\
Where the function has one process-group parameter, and it is a process
group for certain (passed as the group of a collective, or annotated
`ProcessGroup`; not a mesh), the fix passes it to the `torch.distributed`
collective that left it out: `group=dp_group`. Rooted collectives
(`broadcast(t, src=0)`, `reduce`, `gather`, `scatter`) get no fix: their
root is a global rank chosen for the default group, which may be no member of
the caller's group, and which member is meant only the author knows. Nor
do collectives under a rank-dependent test (`if dist.get_rank() == 0:`):
there the group decides which ranks must reach the call, and a group that
cannot be seen would turn a reported hang into a silent one. It is unsafe: the collective
then runs over the caller's group instead of all ranks, which is the point
but changes what it computes and who must call it. The division by
`get_world_size()` gets no fix (which size is meant is the author's call).
"""
    fixes = (
        (
            """
            import torch.distributed as dist


            def average(t, dp_group):
                dist.all_reduce(t, op=dist.ReduceOp.SUM)
                dist.all_reduce(t, op=dist.ReduceOp.SUM, group=dp_group)
            """,
            """
            import torch.distributed as dist


            def average(t, dp_group):
                dist.all_reduce(t, op=dist.ReduceOp.SUM, group=dp_group)
                dist.all_reduce(t, op=dist.ReduceOp.SUM, group=dp_group)
            """,
        ),
    )

    def __init__(self, ctx: FileContext, sink: Callable[[PendingFinding], None]) -> None:
        super().__init__(ctx, sink)
        # id(function node) -> (group parameters, those passed to a collective)
        self._groups: dict[int, tuple[tuple[str, ...], frozenset[str]]] = {}

    def visit_Call(self, node: cst.Call) -> None:
        spec, _ = self.ctx.calls.classify(node)
        if spec is None or spec.group is None or has_unpacking(node):
            return
        if find_argument(node, spec.group) is not None:
            return
        params = self._params()[0]
        if params:
            root = ""
            if spec.roots:
                keyword = spec.roots[0].keyword
                root = (
                    f"; its root must then be a member of that group "
                    f"(`group_{keyword}=` names it within the group)"
                )
            self._report(
                node,
                f"`{spec.short}`",
                params,
                self._fix(node, spec, params),
                root,
                barrier=spec.short == "barrier",
            )

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if isinstance(node.operator, cst.Divide):
            self._check_divisor(node.right)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, cst.DivideAssign):
            self._check_divisor(node.value)

    def _check_divisor(self, node: cst.BaseExpression) -> None:
        """``t / get_world_size()`` after reducing ``t`` over a group parameter."""
        if not isinstance(node, cst.Call) or node.args:
            return
        _, target = self.ctx.calls.classify(node)
        if target not in _WORLD_SIZE_QUERIES:
            return
        params, reduced_over = self._params()
        params = tuple(p for p in params if p in reduced_over)
        if params:
            self._report(node, f"`{target.rpartition('.')[2]}()`", params)

    def _params(self) -> tuple[tuple[str, ...], frozenset[str]]:
        frame = self.ctx.function
        if frame is None or not isinstance(frame.node, cst.FunctionDef):
            return (), frozenset()
        # A cache per function: a miss costs only time.
        groups = self._groups.get(id(frame.node))  # pragma: no mutate
        if groups is None:
            groups = self._groups[id(frame.node)] = _group_params(  # pragma: no mutate
                frame.node, self.ctx
            )
        return groups

    def _fix(self, node: cst.Call, spec: CallSpec, params: tuple[str, ...]) -> PendingFix | None:
        """``group=<the parameter>`` for a c10d collective, when the one group
        parameter is a process group for certain."""
        qualified = self.ctx.names.resolve(node.func)
        frame = self.ctx.function
        # (Not mutated: visit_Call passes a group spec, and params only inside a function.)
        if len(params) != 1 or spec.group is None or frame is None:  # pragma: no mutate
            return None
        if qualified is None or not qualified.startswith(_C10D_PREFIXES):
            return None
        if qualified.startswith(_FUNCTIONAL):
            return None
        if any(self._rank_dependent(condition.test) for condition in self.ctx.conditions):
            # Under a rank test the group decides which ranks must reach the call:
            # with `group=` added, an unknown group may hide a hang RNK102 sees now.
            return None
        if spec.roots:
            # Its `src`/`dst` is a global rank chosen for the default group: with
            # `group=` added it may name no member of the group, and which member
            # is meant is the author's decision.
            return None
        name = params[0]
        if not isinstance(frame.node, cst.FunctionDef) or _is_mesh(frame.node, name):
            return None
        keyword = spec.group.keyword
        return PendingFix(
            f"Pass the function's group: `{keyword}={name}`",
            node,
            with_argument(node, keyword_argument(keyword, cst.Name(name))),
            Applicability.UNSAFE,
        )

    def _rank_dependent(self, test: cst.BaseExpression) -> bool:
        taint = self.ctx.rank.taint(test)
        return taint.possible or taint.data

    def _report(
        self,
        node: cst.CSTNode,
        what: str,
        params: tuple[str, ...],
        fix: PendingFix | None = None,
        root: str = "",
        *,
        barrier: bool = False,
    ) -> None:
        mentioned = {
            name.value
            for condition in self.ctx.conditions
            for name in _nodes_in(condition.test, cst.Name)
        }
        if mentioned & set(params):
            return
        self.report(
            node,
            f"{what} uses the default group although this function takes "
            f"`{params[0]}`: it runs over all ranks instead of the caller's group; pass "
            f"`group={params[0]}` (for a mesh, `group={params[0]}.get_group(dim)`){root}",
            fix=fix,
            evidence=self._evidence(params[0], what, barrier=barrier),
        )

    def _evidence(self, param: str, what: str, *, barrier: bool) -> Evidence:
        """How sure it is that ``param`` is a group and that ``what`` means it.

        A parameter annotated as a group or passed as the group of a collective
        is one for certain. One only passed on as `group=` to other calls, or
        whose `get_group()` is called, may be a parallel-dims object: medium.
        A barrier without a group is often meant for every rank (a barrier for
        everyone after a group gather): medium.
        """
        frame = self.ctx.function
        annotated = (
            frame is not None
            and isinstance(frame.node, cst.FunctionDef)
            and any(
                node.name.value == param and _annotated_as_group(node)
                for node in _all_params(frame.node)
            )
        )
        if annotated:
            group = Link("group-parameter", f"`{param}` is annotated as a group", HIGH)
        elif param in self._params()[1]:
            group = Link("group-parameter", f"`{param}` is the group of a collective here", HIGH)
        else:
            group = Link(
                "group-like-parameter",
                f"`{param}` is passed on as a group or asked for one (`get_group()`)",
                MEDIUM,
            )
        if barrier:
            reach = Link("direct", f"{what}, which may be meant for every rank", MEDIUM)
        else:
            reach = Link("direct", what, HIGH)
        return Evidence(group=group, reach=reach, context=context_link(self.ctx.path))


def _group_params(
    function: cst.FunctionDef, ctx: FileContext
) -> tuple[tuple[str, ...], frozenset[str]]:
    """The parameters ``function`` uses as process groups or meshes, in order, and
    those it passes as the group of a collective."""
    all_params = _all_params(function)
    names = {p.name.value for p in all_params}
    used: set[str] = set()
    reduced_over: set[str] = set()
    for param in all_params:
        if _annotated_as_group(param):
            used.add(param.name.value)
    for call in _nodes_in(function.body, cst.Call, skip=_SCOPES):
        for arg in call.args:
            if (
                arg.keyword is not None
                and arg.keyword.value in _GROUP_KEYWORDS
                and isinstance(arg.value, cst.Name)
                and arg.value.value in names
            ):
                used.add(arg.value.value)
        func = call.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value == "get_group"
            and isinstance(func.value, cst.Name)
            and func.value.value in names
        ):
            used.add(func.value.value)
        spec, _ = ctx.calls.peek(call)  # ahead of the walk: must not fix what it finds
        if spec is not None and spec.group is not None:
            value = find_argument(call, spec.group)
            if isinstance(value, cst.Name) and value.value in names:
                used.add(value.value)
                reduced_over.add(value.value)
    ordered = tuple(p.name.value for p in all_params if p.name.value in used)
    return ordered, frozenset(reduced_over)


_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def _annotated_as_group(param: cst.Param) -> bool:
    """``param`` is annotated ``ProcessGroup`` or ``DeviceMesh``."""
    annotation = param.annotation
    return annotation is not None and bool(
        _GROUP_ANNOTATION.search(source_text(annotation.annotation))
    )


def _all_params(function: cst.FunctionDef) -> tuple[cst.Param, ...]:
    params = function.params
    return (*params.posonly_params, *params.params, *params.kwonly_params)


def _is_mesh(function: cst.FunctionDef, name: str) -> bool:
    """``name`` is used as a mesh in ``function``: annotated ``DeviceMesh``, or its
    ``get_group()`` is called."""
    for param in _all_params(function):
        annotation = param.annotation
        if param.name.value == name and annotation is not None:
            return "DeviceMesh" in source_text(annotation.annotation)
    return any(
        node.attr.value == "get_group"
        and isinstance(node.value, cst.Name)
        and node.value.value == name
        for node in _nodes_in(function.body, cst.Attribute, skip=_SCOPES)
    )


def _nodes_in(
    node: cst.CSTNode, kind: type[_N], *, skip: tuple[type[cst.CSTNode], ...] = ()
) -> list[_N]:
    """Nodes of type ``kind`` in ``node``, not entering nodes of the types in ``skip``."""
    found: list[_N] = []
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, kind):
            found.append(current)
        stack.extend(child for child in current.children if not isinstance(child, skip))
    return found
