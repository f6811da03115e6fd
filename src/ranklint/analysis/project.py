"""The project phase: call graph over all files' summaries and collective consistency.

Input: one :class:`~ranklint.analysis.summary.ModuleSummary` per file of the
run. This module names each file's module from its path (walking up
``__init__.py`` files), resolves call targets across files (imports, relative
imports, re-exports, ``self.method`` through base classes, constructors),
decides which project functions return a rank value, and computes for each
function the ordered collectives it issues, through its callees. On top of
that it finds collectives (RNK102) and group creations (RNK105) that only some
ranks of their group reach.

Output: :class:`ProjectFinding` objects naming call sites; the engine turns
them into positioned findings.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ranklint.analysis.catalog import CallKind
from ranklint.analysis.rank import GLOBAL_AXIS, axes_of_words, identifier_words
from ranklint.analysis.summary import (
    UNKNOWN,
    Branch,
    CallEvent,
    Collective,
    Cond,
    Event,
    Exit,
    FunctionSummary,
    Literal,
    Loop,
    ModuleSummary,
    Opaque,
    Site,
)

logger = logging.getLogger(__name__)

DIVERGENT_COLLECTIVE = "RNK102"
PARTIAL_GROUP_CREATION = "RNK105"
COROUTINE_NEVER_AWAITED = "RNK402"
MESH_DIMS_MISMATCH = "RNK507"

# Bounds that keep pathological call graphs cheap.
_MAX_LEAVES = 64
_MAX_DEPTH = 8
_MAX_RESOLVE = 6


@dataclass(frozen=True)
class Hop:
    """One step of a call chain: a call site and how it reads (``save_ckpt()``)."""

    path: str
    site: Site
    label: str


@dataclass(frozen=True)
class ProjectFinding:
    code: str
    path: str
    site: Site
    # ``{chain}`` is replaced by the located call chain.
    message: str
    chain: tuple[Hop, ...]
    # The hop the finding is placed at: the first call of the chain (a call
    # that reaches a collective), or the last (a sync reached from hot code).
    anchor: int = 0


@dataclass(frozen=True)
class _Leaf:
    """One collective a piece of code issues, with the chain that leads to it."""

    op: str
    group: str | None
    group_axes: frozenset[str] | None
    kind: CallKind
    chain: tuple[Hop, ...]
    lazy: bool = False

    @property
    def key(self) -> tuple[str, str | None]:
        return (self.op, self.group)


@dataclass(frozen=True)
class _RankCond:
    text: str
    axes: frozenset[str]
    membership: bool


@dataclass(frozen=True)
class FunctionRef:
    module: ModuleSummary
    function: FunctionSummary

    @property
    def key(self) -> tuple[str, str]:
        return (self.module.path, self.function.qualname)


def module_name(path: str) -> str:
    """Dotted module name of a file: its package chain by ``__init__.py`` files."""
    file = Path(path)
    parts = [] if file.stem == "__init__" else [file.stem]
    directory = file.parent
    while (directory / "__init__.py").is_file() and directory.name:
        parts.append(directory.name)
        if directory.parent == directory:
            break
        directory = directory.parent
    return ".".join(reversed(parts)) or file.stem


class ProjectIndex:
    """Resolves raw call targets to function summaries across the files of a run."""

    def __init__(self, summaries: Iterable[ModuleSummary]) -> None:
        self.summaries = list(summaries)
        self.modules: dict[str, ModuleSummary] = {}
        self.names: dict[str, str] = {}  # path -> module name
        self._by_last: dict[str, list[str]] = {}
        for summary in self.summaries:
            name = module_name(summary.path)
            self.names[summary.path] = name
            self.modules.setdefault(name, summary)
            self._by_last.setdefault(name.rsplit(".", 1)[-1], []).append(name)
        self._returns_rank: dict[tuple[str, str], tuple[frozenset[str], bool] | None] = {}

    # -- resolution ----------------------------------------------------------
    def resolve(
        self, target: str, module: ModuleSummary, context: FunctionSummary
    ) -> FunctionRef | None:
        if target.startswith("@self:"):
            if context.class_name is None:
                return None
            class_qualname = context.qualname.rsplit(".", 1)[0]
            return self._method(module, class_qualname, target[len("@self:") :], 0)
        if target.startswith("@local:"):
            return self._local(module, target[len("@local:") :], context)
        return self._qualified(self._absolute(target, module), 0)

    def _local(
        self, module: ModuleSummary, name: str, context: FunctionSummary
    ) -> FunctionRef | None:
        parts = context.qualname.split(".") if context.qualname != "<module>" else []
        for end in range(len(parts), -1, -1):
            candidate = ".".join((*parts[:end], name))
            found = self._symbol(module, candidate, 0)
            if found is not None:
                return found
        return None

    def _symbol(self, module: ModuleSummary, qualname: str, depth: int) -> FunctionRef | None:
        function = module.functions.get(qualname)
        if function is not None:
            return FunctionRef(module, function)
        if qualname in module.classes:
            return self._method(module, qualname, "__init__", depth)
        head, _, rest = qualname.partition(".")
        if head in module.exports and depth < _MAX_RESOLVE:
            target = module.exports[head] + ("." + rest if rest else "")
            return self._qualified(self._absolute(target, module), depth + 1)
        if "." in qualname:
            owner, _, method = qualname.rpartition(".")
            if owner in module.classes:
                return self._method(module, owner, method, depth)
        return None

    def _method(
        self, module: ModuleSummary, class_qualname: str, method: str, depth: int
    ) -> FunctionRef | None:
        if depth > _MAX_RESOLVE:
            return None
        function = module.functions.get(f"{class_qualname}.{method}")
        if function is not None:
            return FunctionRef(module, function)
        context = FunctionSummary(class_qualname, None, ())
        for base in module.classes.get(class_qualname, ()):
            owner = self._class(base, module, context, depth + 1)
            if owner is not None:
                found = self._method(owner[0], owner[1], method, depth + 1)
                if found is not None:
                    return found
        return None

    def _class(
        self, target: str, module: ModuleSummary, context: FunctionSummary, depth: int
    ) -> tuple[ModuleSummary, str] | None:
        if target.startswith("@local:"):
            name = target[len("@local:") :]
            return (module, name) if name in module.classes else None
        if target.startswith("@"):
            return None
        absolute = self._absolute(target, module)
        for owner, rest in self._splits(absolute):
            if rest in owner.classes:
                return owner, rest
            head, _, tail = rest.partition(".")
            if head in owner.exports and depth < _MAX_RESOLVE:
                again = owner.exports[head] + ("." + tail if tail else "")
                return self._class(again, owner, context, depth + 1)
        return None

    def _qualified(self, target: str, depth: int) -> FunctionRef | None:
        for owner, rest in self._splits(target):
            found = self._symbol(owner, rest, depth)
            if found is not None:
                return found
        return None

    def _splits(self, target: str) -> Iterator[tuple[ModuleSummary, str]]:
        """(module, rest) pairs for a dotted name, longest module first."""
        parts = target.split(".")
        for end in range(len(parts) - 1, 0, -1):
            name = ".".join(parts[:end])
            rest = ".".join(parts[end:])
            owner = self.modules.get(name)
            if owner is not None:
                yield owner, rest
                return
            # A module named by a longer package path than the run's roots.
            candidates = [
                full
                for full in self._by_last.get(parts[end - 1], ())
                if full == name or full.endswith("." + name) or name.endswith("." + full)
            ]
            if len(candidates) == 1:
                yield self.modules[candidates[0]], rest
                return

    def _absolute(self, target: str, module: ModuleSummary) -> str:
        if not target.startswith("."):
            return target
        dots = len(target) - len(target.lstrip("."))
        name = self.names.get(module.path, "")
        package = name.split(".")
        if not module.path.endswith("__init__.py"):
            package = package[:-1]
        if dots > 1:
            package = package[: len(package) - (dots - 1)]
        rest = target[dots:]
        return ".".join([*package, rest]) if rest else ".".join(package)

    # -- rank predicates -----------------------------------------------------
    def returns_rank(self, ref: FunctionRef, depth: int = 0) -> tuple[frozenset[str], bool] | None:
        """(axes, membership test) of the rank value ``ref`` returns, or ``None``."""
        key = ref.key
        if key in self._returns_rank:
            return self._returns_rank[key]
        self._returns_rank[key] = None  # cycle guard
        returns = ref.function.returns
        axes: set[str] | None = set(returns.axes) if returns.rank else None
        membership = returns.membership
        if axes is None and depth < _MAX_DEPTH:
            for target in sorted(returns.via):
                callee = self.resolve(target, ref.module, ref.function)
                if callee is None:
                    continue
                found = self.returns_rank(callee, depth + 1)
                if found is not None:
                    axes = set(found[0])
                    membership = membership or found[1]
                    break
        result = None
        if axes is not None:
            named = axes_of_words(identifier_words(ref.function.name))
            combined = frozenset(axes | named) or frozenset({GLOBAL_AXIS})
            if named and GLOBAL_AXIS in combined:
                combined = frozenset(named)
            result = (combined, membership)
        self._returns_rank[key] = result
        return result


class CollectiveAnalysis:
    """Finds collectives and group creations that only some ranks reach."""

    def __init__(self, index: ProjectIndex) -> None:
        self.index = index
        self.findings: list[ProjectFinding] = []
        self._reported: set[tuple[str, Site]] = set()
        self._balanced: set[str] = set()
        self._leaves: dict[tuple[str, str, tuple[tuple[str, bool], ...]], tuple[_Leaf, ...]] = {}
        self._active: set[tuple[str, str]] = set()

    def run(self) -> list[ProjectFinding]:
        for module in self.index.summaries:
            for function in (module.module, *module.functions.values()):
                self._check_function(module, function)
        return self.findings

    # -- sequences -----------------------------------------------------------
    def leaves_of(self, ref: FunctionRef, bindings: dict[str, Literal]) -> tuple[_Leaf, ...]:
        """The collectives a call of ``ref`` issues, with parameters bound to literals."""
        frozen = tuple(sorted(bindings.items(), key=lambda item: item[0]))
        key = (*ref.key, frozen)
        cached = self._leaves.get(key)
        if cached is not None:
            return cached
        if ref.key in self._active or len(self._active) >= _MAX_DEPTH:
            return ()
        self._active.add(ref.key)
        try:
            found, _ = self._flatten(ref.function.events, ref.module, ref.function, bindings, {})
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
    ) -> tuple[list[_Leaf], str | None]:
        """Collectives of ``events`` in order, and whether the code surely stops early.

        The second value is ``"function"`` (return, exit), ``"loop"`` (continue,
        break) or ``None``. ``bindings``: parameter values known at a call site;
        ``assume``: truth of canonical conditions (:class:`Cond` keys). Branches
        they decide take one arm; other branches contribute both arms.
        """
        out: list[_Leaf] = []
        for event in events:
            if len(out) >= _MAX_LEAVES:
                break
            if isinstance(event, Collective):
                out.append(_leaf(event, module.path))
            elif isinstance(event, CallEvent):
                out += self._call_leaves(event, module, function)
            elif isinstance(event, Branch):
                taken = _decide(event.cond, bindings, assume)
                if taken is None:
                    for arm in event.arms:
                        out += self._flatten(arm, module, function, bindings, assume)[0]
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
                if event.kind in _FUNCTION_EXITS:
                    return out[:_MAX_LEAVES], "function"
                if event.kind in ("continue", "break"):
                    return out[:_MAX_LEAVES], "loop"
        return out[:_MAX_LEAVES], None

    def _call_leaves(
        self, event: CallEvent, module: ModuleSummary, function: FunctionSummary
    ) -> list[_Leaf]:
        callee = self.index.resolve(event.target, module, function)
        if callee is None:
            return []
        bindings = _bindings(event, callee.function)
        hop = Hop(module.path, event.site, f"{event.label}()")
        return [
            _Leaf(leaf.op, leaf.group, leaf.group_axes, leaf.kind, (hop, *leaf.chain))
            for leaf in self.leaves_of(callee, bindings)
            if not leaf.lazy
        ]

    def _event_leaves(
        self,
        events: Sequence[Event],
        module: ModuleSummary,
        function: FunctionSummary,
        assume: dict[str, bool] | None = None,
    ) -> list[_Leaf]:
        return self._flatten(events, module, function, {}, assume or {})[0]

    def _relevant_leaves(
        self,
        events: Sequence[Event],
        module: ModuleSummary,
        function: FunctionSummary,
        cond: _RankCond,
        assume: dict[str, bool] | None = None,
    ) -> list[_Leaf]:
        """The collectives of ``events`` whose group ``cond`` can split."""
        return [
            leaf
            for leaf in self._event_leaves(events, module, function, assume)
            if _relevant(leaf, cond)
        ]

    # -- checks ----------------------------------------------------------------
    def _check_function(self, module: ModuleSummary, function: FunctionSummary) -> None:
        if function.rank_only is not None:
            cond = _RankCond(function.rank_only, frozenset({GLOBAL_AXIS}), False)
            hits = self._relevant_leaves(function.events, module, function, cond)
            if hits:
                self._report(
                    module,
                    hits[0],
                    f"{_subject(hits[0])} runs only on the rank that `{function.rank_only}` "
                    f"selects; the other ranks never call it and hang in their next "
                    f"collective",
                )
        self._balanced = self._balanced_keys(module, function)
        self._check_block(function.events, module, function)

    def _balanced_keys(self, module: ModuleSummary, function: FunctionSummary) -> set[str]:
        """Rank conditions under which the whole function issues the same collectives.

        ``if not is_main: barrier()`` ... ``if is_main: barrier()`` (main process
        first) is balanced: every rank calls barrier once, at different points.
        """
        conds: dict[str, _RankCond] = {}
        for cond in _conds(function.events):
            if cond.key in conds:
                continue
            rank = self._rank_cond(cond, module, function)
            if rank is not None:
                conds[cond.key] = rank
        balanced: set[str] = set()
        for key, rank in conds.items():
            sides = [
                [
                    leaf.key
                    for leaf in self._relevant_leaves(
                        function.events, module, function, rank, {key: value}
                    )
                ]
                for value in (True, False)
            ]
            if sides[0] == sides[1]:
                balanced.add(key)
        return balanced

    def _check_block(
        self,
        events: Sequence[Event],
        module: ModuleSummary,
        function: FunctionSummary,
    ) -> None:
        for index, event in enumerate(events):
            if isinstance(event, Branch):
                self._check_branch(event, events[index + 1 :], module, function)
            elif isinstance(event, Loop):
                cond = self._rank_cond(event.cond, module, function)
                if cond is not None:
                    hits = self._relevant_leaves(event.body, module, function, cond)
                    if hits:
                        self._report(
                            module,
                            hits[0],
                            f"{_subject(hits[0])} runs in a loop whose trip count depends on "
                            f"the rank (`{cond.text}`); ranks that iterate fewer times hang in "
                            f"it; make the trip count the same on every rank",
                        )
                self._check_block(event.body, module, function)
            elif isinstance(event, Opaque):
                self._check_block(event.body, module, function)

    def _check_branch(
        self,
        branch: Branch,
        rest: Sequence[Event],
        module: ModuleSummary,
        function: FunctionSummary,
    ) -> None:
        cond = self._rank_cond(branch.cond, module, function)
        if cond is not None and branch.cond is not None and branch.cond.key in self._balanced:
            cond = None
        if cond is not None:
            kinds = [_exit_kind(arm) for arm in branch.arms]
            if (kinds[0] is None) != (kinds[1] is None) and rest:
                # One arm leaves early: the code after the branch belongs to the other.
                exiting = 0 if kinds[0] is not None else 1
                kind = kinds[exiting] or "return"
                self._compare_paths(
                    branch,
                    cond,
                    module,
                    function,
                    exiting,
                    [*branch.arms[1 - exiting], *rest],
                    kind,
                    len(branch.arms[1 - exiting]),
                )
            else:
                self._compare_paths(
                    branch, cond, module, function, 0, list(branch.arms[1]), None, None
                )
        for arm in branch.arms:
            self._check_block(arm, module, function)

    def _compare_paths(
        self,
        branch: Branch,
        cond: _RankCond,
        module: ModuleSummary,
        function: FunctionSummary,
        first_arm: int,
        other_path: list[Event],
        exit_kind: str | None,
        other_arm_length: int | None,
    ) -> None:
        """Compare the collectives of arm ``first_arm`` with those of ``other_path``."""
        assume = dict(branch.cond.assumptions) if branch.cond is not None else {}
        first = self._relevant_leaves(branch.arms[first_arm], module, function, cond, assume)
        in_arm: list[_Leaf] = []
        if other_arm_length is not None:
            in_arm = self._event_leaves(other_path[:other_arm_length], module, function, assume)
        second = self._relevant_leaves(other_path, module, function, cond, assume)
        if [leaf.key for leaf in first] == [leaf.key for leaf in second]:
            return
        when_first = f"when `{cond.text}`" if first_arm == 0 else f"when `{cond.text}` is false"
        when_second = f"when `{cond.text}` is false" if first_arm == 0 else f"when `{cond.text}`"
        index = 0
        while index < len(first) and index < len(second) and first[index].key == second[index].key:
            index += 1
        if index < len(first) and index < len(second):
            leaf, other = first[index], second[index]
            self._report(
                module,
                leaf,
                f"ranks where `{cond.text}`{' is false' if first_arm else ''} call "
                f"{_subject(leaf)} here, the others call {_describe(other)}: the "
                f"collectives pair up wrongly or hang; issue the same collectives in the same "
                f"order on every rank",
            )
            return
        if index < len(first):
            leaf = first[index]
            when = when_first
        else:
            leaf = second[index]
            when = when_second
            after_exit = exit_kind is not None and not any(
                leaf.chain[0] == other.chain[0] for other in in_arm
            )
            if after_exit:
                assert exit_kind is not None
                self._report(
                    module,
                    leaf,
                    f"{_subject(leaf)} is skipped by ranks that {_EXIT_TEXT[exit_kind]} when "
                    f"`{cond.text}`{' is false' if first_arm else ''}; the ranks that reach "
                    f"it hang in it; move the collective before the early exit or make every "
                    f"rank reach it",
                )
                return
        self._report(
            module,
            leaf,
            f"{_subject(leaf)} is reached only {when}; ranks that skip it hang in their next "
            f"collective; call it on every rank, outside the rank-dependent branch",
        )

    def _rank_cond(
        self, cond: Cond | None, module: ModuleSummary, function: FunctionSummary
    ) -> _RankCond | None:
        if cond is None:
            return None
        taint = cond.taint
        if taint.rank:
            return _RankCond(cond.text, taint.axes or frozenset({GLOBAL_AXIS}), taint.membership)
        for target in sorted(taint.via):
            callee = self.index.resolve(target, module, function)
            if callee is None:
                continue
            returned = self.index.returns_rank(callee)
            if returned is not None:
                axes, membership = returned
                return _RankCond(cond.text, axes, taint.membership or membership)
        return None

    def _report(self, module: ModuleSummary, leaf: _Leaf, message: str) -> None:
        hop = leaf.chain[0]
        key = (hop.path, hop.site)
        if key in self._reported:
            return
        self._reported.add(key)
        code = (
            PARTIAL_GROUP_CREATION if leaf.kind is CallKind.GROUP_CREATION else DIVERGENT_COLLECTIVE
        )
        self.findings.append(ProjectFinding(code, hop.path, hop.site, message, leaf.chain))


# A rank-dependent `raise` is not treated as an exit: the rank fails with an
# error and the launcher tears the job down, there is no silent hang.
_FUNCTION_EXITS = frozenset({"return", "exit"})
_EXIT_TEXT = {
    "return": "return early",
    "raise": "raise",
    "exit": "exit",
    "continue": "skip to the next iteration",
    "break": "leave the loop",
}


def _exit_kind(events: Sequence[Event]) -> str | None:
    """The kind of an exit anywhere in ``events`` (not inside nested loops for continue/break)."""
    for event in events:
        if isinstance(event, Exit) and event.kind != "raise":
            return event.kind
        if isinstance(event, Branch):
            for arm in event.arms:
                kind = _exit_kind(arm)
                if kind is not None:
                    return kind
        elif isinstance(event, Loop):
            kind = _exit_kind(event.body)
            if kind in _FUNCTION_EXITS:
                return kind
    return None


def _leaf(event: Collective, path: str) -> _Leaf:
    return _Leaf(
        event.op,
        event.group,
        event.group_axes,
        event.kind,
        (Hop(path, event.site, f"{event.label}()"),),
        event.lazy,
    )


def _relevant(leaf: _Leaf, cond: _RankCond) -> bool:
    """Can ``cond`` differ between members of the leaf's group?"""
    if leaf.kind is CallKind.GROUP_CREATION:
        return True  # every rank must create every group
    if cond.membership and leaf.group is not None:
        return False  # `if rank in ranks: ... group=g`: members all take the branch
    if leaf.group_axes is None:
        # A group whose members cannot be told from its name (a DTensor's mesh,
        # `group=self.pg`): it may well consist of exactly the ranks that take
        # the branch (rank 0 and the inference engines of an RL trainer).
        return False
    if not leaf.group_axes or GLOBAL_AXIS in cond.axes:
        return True  # the default group, or a condition on the global rank
    return bool(cond.axes & leaf.group_axes)


def _subject(leaf: _Leaf) -> str:
    if len(leaf.chain) == 1:
        return _describe(leaf)
    return f"`{leaf.chain[0].label}` (which reaches {_describe(leaf)}: {{chain}})"


def _describe(leaf: _Leaf) -> str:
    if leaf.kind is CallKind.GROUP_CREATION:
        arguments = leaf.group or ""
        if len(arguments) > 40:
            arguments = arguments[:37] + "..."
        return f"`{leaf.op}({arguments})`"
    if leaf.group is None:
        return f"`{leaf.op}`"
    return f"`{leaf.op}` on `{leaf.group}`"


def _bindings(event: CallEvent, callee: FunctionSummary) -> dict[str, Literal]:
    """Parameter values a call fixes: literal arguments, and defaults it leaves alone."""
    if event.unpacking:
        return {}
    params = callee.params
    offset = 1 if callee.class_name is not None and params[:1] in (("self",), ("cls",)) else 0
    out: dict[str, Literal] = dict(callee.defaults)
    for position, keyword, value in event.args:
        name = keyword
        if name is None and position is not None and position + offset < len(params):
            name = params[position + offset]
        if name is None:
            continue
        if value == UNKNOWN:
            out.pop(name, None)
        else:
            out[name] = value
    return out


def _decide(
    cond: Cond | None, bindings: dict[str, Literal], assume: dict[str, bool]
) -> bool | None:
    """Which arm a branch takes under ``bindings``/``assume``: True, False, or unknown."""
    if cond is None:
        return None
    if cond.key in assume:
        return assume[cond.key] != cond.negated
    if cond.key in bindings:
        return cond.holds(bindings[cond.key])
    return None


def _conds(events: Sequence[Event]) -> Iterator[Cond]:
    for event in events:
        if isinstance(event, Branch):
            if event.cond is not None:
                yield event.cond
            for arm in event.arms:
                yield from _conds(arm)
        elif isinstance(event, Loop):
            yield from _conds(event.body)


def analyze(
    summaries: Sequence[ModuleSummary], mesh_axes: frozenset[str] = frozenset()
) -> list[ProjectFinding]:
    """All project-phase findings for the files of one run (``mesh_axes``: `mesh-axes`)."""
    # Imported here: the hot-path analysis builds on this module's index.
    from ranklint.analysis.hot_path import HotPathAnalysis

    index = ProjectIndex(summaries)
    return [
        *CollectiveAnalysis(index).run(),
        *HotPathAnalysis(index).run(),
        *discarded_coroutines(index),
        *undeclared_mesh_dims(index, mesh_axes),
    ]


def undeclared_mesh_dims(
    index: ProjectIndex, axes: frozenset[str] = frozenset()
) -> list[ProjectFinding]:
    """``mesh["name"]`` where no mesh construction of the project declares ``name`` (RNK507).

    Names in ``axes`` (the configured `mesh-axes`) are always accepted.
    """
    declared: set[str] = set(axes)
    constructed = False
    for module in index.summaries:
        if module.mesh_dynamic:
            return []  # some mesh is built from computed names: the set is not known
        declared |= module.mesh_names
        constructed = constructed or bool(module.mesh_names)
    if not constructed:
        return []  # meshes come from elsewhere: nothing to check against
    known = ", ".join(f'"{name}"' for name in sorted(declared))
    found = []
    for module in index.summaries:
        for site, name in module.mesh_uses:
            if name in declared:
                continue
            message = (
                f'mesh dimension "{name}" is not declared by any mesh this project builds '
                f"({known}): indexing raises at run time; check the spelling or add the "
                f"dimension to `mesh_dim_names`"
            )
            hop = Hop(module.path, site, f'mesh["{name}"]')
            found.append(ProjectFinding(MESH_DIMS_MISMATCH, module.path, site, message, (hop,)))
    return found


def discarded_coroutines(index: ProjectIndex) -> list[ProjectFinding]:
    """Calls of project ``async def`` functions whose coroutine is thrown away (RNK402)."""
    found: list[ProjectFinding] = []
    for module in index.summaries:
        for function in (module.module, *module.functions.values()):
            for event in _call_events(function.events):
                if not event.discarded:
                    continue
                callee = index.resolve(event.target, module, function)
                if callee is None or not callee.function.is_async:
                    continue
                name = callee.function.qualname
                message = (
                    f"`{event.label}()` calls the coroutine function `{name}` and throws the "
                    f"coroutine away: its body never runs; `await` it, or schedule it with "
                    f"`asyncio.create_task(...)` (and keep a reference to the task)"
                )
                hop = Hop(module.path, event.site, f"{event.label}()")
                found.append(
                    ProjectFinding(
                        COROUTINE_NEVER_AWAITED, module.path, event.site, message, (hop,)
                    )
                )
    return found


def _call_events(events: Sequence[Event]) -> Iterator[CallEvent]:
    for event in events:
        if isinstance(event, CallEvent):
            yield event
        elif isinstance(event, Branch):
            for arm in event.arms:
                yield from _call_events(arm)
        elif isinstance(event, (Loop, Opaque)):
            yield from _call_events(event.body)
