"""Collective consistency: which collectives and group creations only some ranks reach.

On the project call graph (:mod:`ranklint.analysis.project.callgraph`) this computes,
for each function, the ordered collectives it issues through its callees, with
parameters bound to literal arguments, and compares the paths that ranks can
take: a rank-dependent branch's arms (and the code after an arm that exits
early), rank-dependent loop trip counts, functions a decorator runs on one
rank. Each place ranks disagree is one :class:`Divergence` (one per call site).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ranklint.analysis.project.callgraph import MAX_DEPTH, FunctionRef, Hop, ProjectIndex
from ranklint.analysis.project.decisions import (
    call_bindings,
    decide,
    parameter,
    passed_parameters,
    plain_flag,
)
from ranklint.analysis.project.sequences import (
    NO_TAIL,
    OPEN,
    CollectiveLeaf,
    Divergence,
    DivergenceKind,
    RankCond,
    Tail,
    agree,
    alone_on_its_side,
    argument_keys,
    first_difference,
    issued,
    leaf_of,
    relevant,
    unknown_members,
    wrapped_forward,
)
from ranklint.analysis.project.wrappers import DecoratorJudge
from ranklint.analysis.walk.axes import GLOBAL_AXIS
from ranklint.analysis.walk.framework import removed_hook
from ranklint.analysis.walk.membership import EVERY_RANK
from ranklint.model.events import (
    FLAG_PREFIX,
    FUNCTION_EXITS,
    Branch,
    CallEvent,
    Collective,
    Cond,
    Event,
    Exit,
    ExitKind,
    FunctionSummary,
    Literal,
    Loop,
    ModuleSummary,
    Opaque,
    Site,
    conditions,
    context_partner,
    exit_kind,
    exiting_conditions,
)
from ranklint.model.kinds import CallKind

_MAX_LEAVES = 64
# Most paths through one side of a rank test followed one by one (see _paths).
_MAX_PATHS = 32
_TOO_MANY = object()


class CollectiveAnalysis:
    """Finds collectives and group creations that only some ranks reach."""

    def __init__(self, index: ProjectIndex) -> None:
        self.index = index
        self.divergences: list[Divergence] = []
        self._reported: set[tuple[str, Site]] = set()
        self._balanced: set[str] = set()
        self._leaves: dict[
            tuple[str, str, tuple[tuple[str, bool], ...]], tuple[CollectiveLeaf, ...]
        ] = {}
        self._active: set[tuple[str, str]] = set()
        self._decorators = DecoratorJudge(index, self._rank_cond)

    def run(self) -> list[Divergence]:
        for module in self.index.summaries:
            for function in (module.module, *module.functions.values()):
                self._check_function(module, function)
        return self.divergences

    # -- sequences -----------------------------------------------------------
    def leaves_of(
        self, ref: FunctionRef, bindings: dict[str, Literal]
    ) -> tuple[CollectiveLeaf, ...]:
        """The collectives a call of ``ref`` issues, with parameters bound to literals."""
        frozen = tuple(sorted(bindings.items(), key=lambda item: item[0]))
        key = (*ref.key, frozen)
        cached = self._leaves.get(key)
        if cached is not None:
            return cached
        if ref.key in self._active or len(self._active) >= MAX_DEPTH:
            return ()
        self._active.add(ref.key)
        try:
            flags = dict(ref.module.flags)
            found, _ = self._flatten(ref.function.events, ref.module, ref.function, bindings, flags)
        finally:
            self._active.discard(ref.key)
        out = tuple(found)
        self._leaves[key] = out
        return out

    def _flatten(
        self,
        events: Sequence[Event],
        module: ModuleSummary,
        function: FunctionSummary,
        bindings: dict[str, Literal],
        assume: dict[str, bool],
    ) -> tuple[list[CollectiveLeaf], str | None]:
        """Collectives of ``events`` in order, and whether the code surely stops early.

        The second value is ``"function"`` (return, exit), ``"loop"`` (continue,
        break) or ``None``. ``bindings``: parameter values known at a call site;
        ``assume``: truth of canonical conditions (:class:`Cond` keys). Branches
        they decide take one arm; other branches contribute both arms.
        """
        out: list[CollectiveLeaf] = []
        opened = False
        for event in events:
            if len(out) >= _MAX_LEAVES:
                break
            if (
                not opened
                and isinstance(event, Branch)
                and event.cond is not None
                and event.cond.received
            ):
                opened = True
                out.append(OPEN)
            if isinstance(event, Collective):
                out.append(leaf_of(event, module.path))
            elif isinstance(event, CallEvent):
                forward = wrapped_forward(event, bindings, module.path)
                if forward is not None:
                    out.append(forward)  # `model(x)` of a parameter passed a DDP model
                else:
                    out += self._call_leaves(event, module, function, assume, bindings)
            elif isinstance(event, Branch):
                taken = decide(event.cond, bindings, assume)
                if taken is None:
                    keys = argument_keys(event.cond)
                    for arm in event.arms:
                        found = self._flatten(arm, module, function, bindings, assume)[0]
                        out += [leaf.under_test(keys) for leaf in found]
                else:
                    found, stop = self._flatten(
                        event.arms[0 if taken else 1], module, function, bindings, assume
                    )
                    out += found
                    if stop is not None:
                        return out[:_MAX_LEAVES], stop
            elif isinstance(event, Loop):
                found, stop = self._flatten(event.body, module, function, bindings, assume)
                out += found
                if stop == "function":
                    return out[:_MAX_LEAVES], stop
            elif isinstance(event, Exit):
                if event.kind in FUNCTION_EXITS:
                    return out[:_MAX_LEAVES], "function"
                if event.kind in (ExitKind.CONTINUE, ExitKind.BREAK):
                    return out[:_MAX_LEAVES], "loop"
        return out[:_MAX_LEAVES], None

    def _call_leaves(
        self,
        event: CallEvent,
        module: ModuleSummary,
        function: FunctionSummary,
        assume: dict[str, bool],
        known: dict[str, Literal] | None = None,
    ) -> list[CollectiveLeaf]:
        """``known``: the caller's own parameter values, for flags it passes on."""
        callee = self.index.resolve(event.target, module, function)
        if callee is None:
            return []
        bindings = call_bindings(event, callee.function, assume, known or {})
        if event.target.startswith("@self:"):
            # A method of the same object: the caller's tests of `self.` state hold.
            for key, truth in (*assume.items(), *(known or {}).items()):
                if key.startswith("self."):
                    bindings.setdefault(key, truth)
        if callee.function.qualname.startswith(function.qualname + "."):
            # A closure reads the caller's flags: the caller's test decides them.
            for key, truth in assume.items():
                name = key[len(FLAG_PREFIX) :]
                if key.startswith(FLAG_PREFIX) and "." not in name:
                    bindings.setdefault(name, truth)
        hop = Hop(module.path, event.site, f"{event.label}()")
        leaves = self.leaves_of(callee, bindings)
        # Parameters this call passes a value the analysis cannot evaluate (only
        # where a leaf is under a test in the callee that one of them could decide).
        unknown = (
            passed_parameters(event, callee.function) - bindings.keys()
            if any(leaf.under for leaf in leaves)
            else set()
        )
        # `group=None` (passed, or a default left alone) is the default group.
        groups = {name: EVERY_RANK for name, value in bindings.items() if value is None}
        for position, keyword, how in event.group_args:
            name = parameter(callee.function, position, keyword)
            if name is not None:
                groups[name] = how
        return [
            leaf.on_passed_group(groups).called_from(hop, unknown)
            for leaf in leaves
            if not leaf.lazy and not (event.lazy and leaf.kind is CallKind.GROUP_CREATION)
        ]

    def _event_leaves(
        self,
        events: Sequence[Event],
        module: ModuleSummary,
        function: FunctionSummary,
        assume: dict[str, bool] | None = None,
    ) -> list[CollectiveLeaf]:
        return self._flatten(events, module, function, {}, assume or {})[0]

    def _relevant_leaves(
        self,
        events: Sequence[Event],
        module: ModuleSummary,
        function: FunctionSummary,
        cond: RankCond,
        assume: dict[str, bool] | None = None,
    ) -> list[CollectiveLeaf]:
        """The collectives of ``events`` whose group ``cond`` can split."""
        return [
            leaf
            for leaf in self._event_leaves(events, module, function, assume)
            if relevant(leaf, cond)
        ]

    # -- checks ----------------------------------------------------------------
    def _check_function(self, module: ModuleSummary, function: FunctionSummary) -> None:
        if function.single_process:
            return  # `Trainer(devices=1)`: one process, no other rank to wait for
        if removed_hook(module, function):
            return  # a callback hook the imported Lightning never calls
        cond = self._decorators.rank_only(module, function)
        if cond is not None:
            hits = issued(self._relevant_leaves(function.events, module, function, cond))
            if hits:
                self._report(Divergence(DivergenceKind.RANK_ONLY_FUNCTION, hits[0], cond))
        self._balanced = self._balanced_keys(module, context_partner(module, function))
        self._check_block(function.events, module, function, dict(module.flags))

    def _is_balanced(self, cond: Cond) -> bool:
        if cond.key in self._balanced:
            return True
        return cond.rank_part is not None and cond.rank_part[0] in self._balanced

    def _balanced_keys(self, module: ModuleSummary, function: FunctionSummary) -> set[str]:
        """Rank conditions under which the whole function issues the same collectives.

        ``if not is_main: barrier()`` ... ``if is_main: barrier()`` (main process
        first) is balanced: every rank calls barrier once, at different points.
        A test with an early exit in an arm is not (``if is_main: if stale >
        patience: return``): the flattened sides below would not show the exit.
        """
        conds: dict[str, RankCond] = {}
        exiting = set(exiting_conditions(function.events))
        for cond in conditions(function.events):
            if cond.key in conds or cond.key in exiting:
                continue
            rank = self._rank_cond(cond, module, function)
            if rank is not None:
                conds[cond.key] = rank
        balanced: set[str] = set()
        for key, rank in conds.items():
            sides = [
                [
                    leaf
                    for leaf in self._relevant_leaves(
                        function.events, module, function, rank, {key: value}
                    )
                ]
                for value in (True, False)
            ]
            if agree(sides[0], sides[1]):
                balanced.add(key)
        return balanced

    def _check_block(
        self,
        events: Sequence[Event],
        module: ModuleSummary,
        function: FunctionSummary,
        context: dict[str, bool] | None = None,
        tail: Tail = NO_TAIL,
    ) -> None:
        """``context``: truth of the uniform tests enclosing ``events`` (the arm
        taken); ``tail``: the code that runs after ``events`` end."""
        context = context or {}
        for index, event in enumerate(events):
            rest = events[index + 1 :]
            if isinstance(event, Branch):
                self._check_branch(event, rest, module, function, context, tail)
            elif isinstance(event, Loop):
                cond = self._rank_cond(event.cond, module, function)
                if cond is not None:
                    hits = issued(
                        self._relevant_leaves(event.body, module, function, cond, context)
                    )
                    if hits:
                        self._report(Divergence(DivergenceKind.LOOP_TRIP_COUNT, hits[0], cond))
                self._check_block(event.body, module, function, context, tail.into_loop(rest))
            elif isinstance(event, Opaque):
                self._check_block(event.body, module, function, context, tail.after(rest))
            elif isinstance(event, CallEvent) and event.rank_args and not event.unpacking:
                self._check_arguments(event, module, function, context)

    def _check_arguments(
        self,
        event: CallEvent,
        module: ModuleSummary,
        function: FunctionSummary,
        context: dict[str, bool],
    ) -> None:
        """A rank-dependent value passed for a parameter the callee tests
        (`exchange(t, rank == 0)` with `if go: dist.barrier()` inside): the
        callee's collectives with the parameter true and false are compared."""
        callee = self.index.resolve(event.target, module, function)
        if callee is None:
            return
        bindings = call_bindings(event, callee.function, context, {})
        passed = passed_parameters(event, callee.function) - bindings.keys()
        hop = Hop(module.path, event.site, f"{event.label}()")
        for position, keyword, text, taint in event.rank_args:
            name = parameter(callee.function, position, keyword)
            cond = self._rank_cond(Cond(text, taint, text), module, function)
            if name is None or cond is None:
                continue
            unknown = passed - {name}
            first, second = (
                [
                    leaf.called_from(hop, unknown)
                    for leaf in self.leaves_of(callee, {**bindings, name: value})
                    if not leaf.lazy and relevant(leaf, cond)
                ]
                for value in (True, False)
            )
            if not agree(first, second):
                self._report_first_difference(first, second, cond)
                return

    def _report_first_difference(
        self,
        first: Sequence[CollectiveLeaf],
        second: Sequence[CollectiveLeaf],
        cond: RankCond,
        *,
        flipped: bool = False,
    ) -> None:
        """Report where ``first`` (the ranks where ``cond`` holds, or fails where
        ``flipped``) and ``second`` (the other ranks) part."""
        index = first_difference(first, second)
        if index < len(first) and index < len(second):
            leaf, other = first[index], second[index]
            self._report(Divergence(DivergenceKind.MISMATCH, leaf, cond, flipped, other=other))
        elif index < len(first):
            self._report(Divergence(DivergenceKind.ONE_SIDE_ONLY, first[index], cond, flipped))
        elif index < len(second):
            self._report(Divergence(DivergenceKind.ONE_SIDE_ONLY, second[index], cond, not flipped))

    def _check_branch(
        self,
        branch: Branch,
        rest: Sequence[Event],
        module: ModuleSummary,
        function: FunctionSummary,
        context: dict[str, bool],
        tail: Tail,
    ) -> None:
        """``rest``: the events after ``branch`` in its block; ``tail``: the code after that."""
        cond = self._rank_cond(branch.cond, module, function)
        if cond is not None and branch.cond is not None and self._is_balanced(branch.cond):
            cond = None
        if cond is not None and decide(branch.cond, {}, context) is not None:
            # Inside an arm of a test of the same rank (`if rank == 0:` ...
            # `if rank > 0:`): every rank that gets here takes the same arm.
            cond = None
        if cond is not None:
            kinds = [exit_kind(arm) for arm in branch.arms]
            exiting = 0 if kinds[0] is not None else 1
            kind = kinds[exiting] or ExitKind.RETURN
            one_exits = (kinds[0] is None) != (kinds[1] is None)
            skipped = [*rest, *tail.skipped(kind)] if one_exits else []
            if skipped:
                # One arm leaves early: the code after the branch belongs to the other.
                self._compare_paths(
                    branch,
                    cond,
                    module,
                    function,
                    exiting,
                    [*branch.arms[1 - exiting], *skipped],
                    kind,
                    len(branch.arms[1 - exiting]),
                    context,
                )
            else:
                self._compare_paths(
                    branch, cond, module, function, 0, list(branch.arms[1]), None, None, context
                )
        uniform = branch.cond if cond is None and plain_flag(branch.cond) else None
        if cond is not None and _single_test(branch.cond):
            uniform = branch.cond  # a plain rank test: its arms fix it as well
        for index, arm in enumerate(branch.arms):
            inner = context
            if uniform is not None:
                # Inside `if self.pipe_parallel:` ... `else:`, that flag is known.
                inner = {**context, uniform.key: (index == 0) != uniform.negated}
            self._check_block(arm, module, function, inner, tail.after(rest))

    def _compare_paths(
        self,
        branch: Branch,
        cond: RankCond,
        module: ModuleSummary,
        function: FunctionSummary,
        first_arm: int,
        other_path: list[Event],
        exit_kind: ExitKind | None,
        other_arm_length: int | None,
        context: dict[str, bool],
    ) -> None:
        """Compare the collectives of arm ``first_arm`` with those of ``other_path``."""
        assume = {**context, **dict(branch.cond.assumptions if branch.cond is not None else ())}
        first = self._relevant_leaves(branch.arms[first_arm], module, function, cond, assume)
        in_arm: list[CollectiveLeaf] = []
        if other_arm_length is not None:
            in_arm = self._event_leaves(other_path[:other_arm_length], module, function, assume)
        second = self._relevant_leaves(other_path, module, function, cond, assume)
        if agree(first, second):
            return
        pair = self._differing_paths(
            branch.arms[first_arm], other_path, module, function, cond, assume
        )
        if pair is None:
            return  # every path through either side issues the same collectives
        if pair is not _TOO_MANY:
            first, second = pair
        index = first_difference(first, second)
        if exit_kind is not None and len(first) <= index < len(second):
            # Only the path after the early exit reaches it: the exiting ranks skip
            # it (unless the other arm issues it itself).
            leaf = second[index]
            if not any(other.chain and leaf.chain[0] == other.chain[0] for other in in_arm):
                surely = self._flatten(branch.arms[first_arm], module, function, {}, assume)[1]
                self._report(
                    Divergence(
                        DivergenceKind.SKIPPED_AFTER_EXIT,
                        leaf,
                        cond,
                        when_false=first_arm == 1,
                        exit_kind=exit_kind,
                        exit_on_some_paths=surely is None,
                    )
                )
                return
        self._report_first_difference(first, second, cond, flipped=first_arm == 1)

    def _differing_paths(
        self,
        one: Sequence[Event],
        other: Sequence[Event],
        module: ModuleSummary,
        function: FunctionSummary,
        cond: RankCond,
        assume: dict[str, bool],
    ) -> tuple[list[CollectiveLeaf], list[CollectiveLeaf]] | object | None:
        """Two paths, one through each side, that issue different collectives.

        Branches the function does not decide are followed arm by arm (a
        `barrier(); return` in each arm is one barrier on every path, not two
        in a row). ``None``: every path issues the same sequence; ``_TOO_MANY``:
        too many paths to tell (the caller keeps its flattened comparison).
        """
        sides = []
        for events in (one, other):
            paths = self._paths(events, module, function, assume)
            if paths is None:
                return _TOO_MANY
            sides.append([[leaf for leaf in path if relevant(leaf, cond)] for path in paths])
        for first in sides[0]:
            for second in sides[1]:
                if not agree(first, second):
                    return first, second
        return None

    def _paths(
        self,
        events: Sequence[Event],
        module: ModuleSummary,
        function: FunctionSummary,
        assume: dict[str, bool],
    ) -> list[list[CollectiveLeaf]] | None:
        """The collectives of each path through ``events`` (``None``: over _MAX_PATHS)."""
        walked = self._walk_paths(events, module, function, assume)
        return None if walked is None else [leaves for leaves, _ in walked]

    def _walk_paths(
        self,
        events: Sequence[Event],
        module: ModuleSummary,
        function: FunctionSummary,
        assume: dict[str, bool],
    ) -> list[tuple[list[CollectiveLeaf], bool]] | None:
        """Each path through ``events``: its collectives, and whether it left early."""
        paths: list[tuple[list[CollectiveLeaf], bool]] = [([], False)]
        for index, event in enumerate(events):
            if all(stopped for _, stopped in paths):
                break
            if isinstance(event, Branch) and event.cond is not None and event.cond.received:
                # From a test of a received value on, the sender decides: one
                # flattened, uncompared tail (see CollectiveLeaf.peer).
                found, stop = self._flatten(events[index:], module, function, {}, assume)
                return [
                    (leaves, True) if stopped else (leaves + found, stop is not None)
                    for leaves, stopped in paths
                ]
            if isinstance(event, Branch):
                taken = decide(event.cond, {}, assume)
                arms = event.arms if taken is None else (event.arms[0 if taken else 1],)
                ends: list[tuple[list[CollectiveLeaf], bool]] = []
                for arm in arms:
                    walked = self._walk_paths(arm, module, function, assume)
                    if walked is None:
                        return None
                    ends += walked
            else:
                found, stop = self._flatten([event], module, function, {}, assume)
                ends = [(found, stop is not None)]
            grown: list[tuple[list[CollectiveLeaf], bool]] = []
            for leaves, stopped in paths:
                if stopped:
                    grown.append((leaves, stopped))
                else:
                    grown += [(leaves + tail, stop) for tail, stop in ends]
            if len(grown) > _MAX_PATHS:
                return None
            paths = grown
        return paths

    def _rank_cond(
        self, cond: Cond | None, module: ModuleSummary, function: FunctionSummary
    ) -> RankCond | None:
        if cond is None:
            return None
        taint = cond.taint
        keys = frozenset({cond.key, *(key for key, _ in cond.assumptions)})
        if taint.rank:
            axes = taint.axes or frozenset({GLOBAL_AXIS})
            return RankCond(
                cond.text, axes, taint.membership, cond.rank_test, taint.sources, keys=keys
            )
        for target in sorted(taint.via):
            returned = self.index.via_rank(target, module, function)
            if returned is not None:
                axes, membership, sources = returned
                return RankCond(
                    cond.text,
                    axes,
                    taint.membership or membership,
                    # A test of what a project call returns: of the global rank only if so.
                    cond.rank_test if GLOBAL_AXIS in axes else None,
                    taint.sources | sources,
                    via=target,
                    keys=keys,
                )
        return None

    def _report(self, divergence: Divergence) -> None:
        other = divergence.other
        if unknown_members(divergence.leaf) and other is not None and not unknown_members(other):
            # A mismatch against a collective on a known group: report that one.
            divergence = replace(
                divergence, leaf=other, other=divergence.leaf, when_false=not divergence.when_false
            )
        if unknown_members(divergence.leaf) and not alone_on_its_side(divergence):
            return  # the group may hold exactly the ranks that reach it
        hop = divergence.leaf.chain[0]
        key = (hop.path, hop.site)
        if key in self._reported:
            return
        self._reported.add(key)
        self.divergences.append(divergence)


def _single_test(cond: Cond | None) -> bool:
    """A test of one condition (no `and`/`or` parts), whose arms fix its truth."""
    return cond is not None and not cond.parts and cond.rank_part is None and not cond.assumptions
