"""The project call graph: module names, call resolution across files, rank-valued helpers.

Input: one :class:`~ranklint.model.events.ModuleSummary` per file of the
run. :class:`ProjectIndex` names each file's module from its path (walking up
``__init__.py`` files), resolves raw call targets across files (imports,
relative imports, re-exports, ``self.method`` through base classes,
constructors) and decides which project functions return a rank value.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from ranklint.analysis.project.dependencies import module_name
from ranklint.analysis.walk.axes import GLOBAL_AXIS, axes_of_words, identifier_words
from ranklint.model.events import (
    Branch,
    CallEvent,
    Event,
    FunctionSummary,
    Loop,
    ModuleSummary,
    Opaque,
    Site,
)
from ranklint.model.taint import element_target

# Bounds that keep pathological call graphs cheap.
MAX_DEPTH = 8
# What a project function returns when it returns a rank value: the axes it
# varies along, whether it is a membership test, and where it comes from
# (Taint.sources).
RankReturn = tuple[frozenset[str], bool, frozenset[tuple[str, str]]]
_MAX_RESOLVE = 6


@dataclass(frozen=True)
class Hop:
    """One step of a call chain: a call site and how it reads (``save_ckpt()``)."""

    path: str
    site: Site
    label: str


@dataclass(frozen=True)
class FunctionRef:
    module: ModuleSummary
    function: FunctionSummary

    @property
    def key(self) -> tuple[str, str]:
        return (self.module.path, self.function.qualname)


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
        self._returns_rank: dict[tuple[str, str, int | None], RankReturn | None] = {}

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
        for base in module.classes.get(class_qualname, ()):
            owner = self.class_of(base, module, depth + 1)
            if owner is not None:
                found = self._method(owner[0], owner[1], method, depth + 1)
                if found is not None:
                    return found
        return None

    def class_of(
        self, target: str, module: ModuleSummary, depth: int
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
                return self.class_of(again, owner, depth + 1)
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

    def absolute(self, target: str, module: ModuleSummary) -> str:
        """``target`` as written in ``module``, relative dots resolved."""
        return self._absolute(target, module)

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
    def returns_rank(
        self, ref: FunctionRef, depth: int = 0, element: int | None = None
    ) -> RankReturn | None:
        """(axes, membership test, sources) of the rank value ``ref`` returns, or ``None``.

        With ``element``: of that element of the tuple it returns.
        """
        key = (*ref.key, element)
        if key in self._returns_rank:
            return self._returns_rank[key]
        self._returns_rank[key] = None  # cycle guard
        function = ref.function
        returns = function.returns
        if element is not None:
            parts = function.elements
            if not parts or not -len(parts) <= element < len(parts):
                return None
            returns = parts[element]
        axes: set[str] | None = set(returns.axes) if returns.rank else None
        membership = returns.membership
        sources = returns.sources
        if axes is None and depth < MAX_DEPTH:
            for raw in sorted(returns.via):
                found = self.via_rank(raw, ref.module, function, depth + 1)
                if found is not None:
                    axes = set(found[0])
                    membership = membership or found[1]
                    sources = sources | found[2]
                    break
        result = None
        if axes is not None:
            named = axes_of_words(identifier_words(function.name)) if element is None else set()
            combined = frozenset(axes | named) or frozenset({GLOBAL_AXIS})
            if named and GLOBAL_AXIS in combined:
                combined = frozenset(named)
            result = (combined, membership, sources)
        self._returns_rank[key] = result
        return result

    def via_rank(
        self, raw: str, module: ModuleSummary, function: FunctionSummary, depth: int = 0
    ) -> RankReturn | None:
        """What the project call (or element of its result) named by a ``via`` entry returns."""
        target, element = element_target(raw)
        callee = self.resolve(target, module, function)
        if callee is None:
            return None
        return self.returns_rank(callee, depth, element)


def call_events(events: Sequence[Event]) -> Iterator[CallEvent]:
    """Every call of a project function in ``events``, nested blocks included."""
    for event in events:
        if isinstance(event, CallEvent):
            yield event
        elif isinstance(event, Branch):
            for arm in event.arms:
                yield from call_events(arm)
        elif isinstance(event, (Loop, Opaque)):
            yield from call_events(event.body)
