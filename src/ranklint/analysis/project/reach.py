"""Which more project files the findings of some files depend on, from their facts.

A finding located in a file depends on that file's facts and on the facts of
every project function its code reaches through calls: the callees, their
callees (a rank test's helper or a returned value's is called there too), the
base classes of its classes. :func:`files_to_load` follows those calls from the
given files through the call graph of the files loaded so far, records every
dotted name the call graph looks up on the way (the lookups go through
``ProjectIndex._splits``), and answers the project files those names may mean
that are not loaded yet. Loading them and asking again, until nothing is
missing, gives what the given files' findings need and nothing that is only
imported.

:class:`CallerSearch` goes the other way, for findings that need a file's
callers (a helper that now reaches a barrier, called under a rank test in
another file; a sync that is hot because another file's step loop calls it):
the functions of the given files that communicate, what a caller's source
must mention to call them, and, round by round, the loaded callers that lead
into them. What is left out, by design: an entry script imported by another
file, and checks that need every file of the project.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence

from ranklint.analysis.project.callgraph import FunctionRef, ProjectIndex, call_events
from ranklint.analysis.project.dependencies import ModuleMap
from ranklint.model.events import (
    Branch,
    Collective,
    Event,
    HostCost,
    Loop,
    ModuleSummary,
    Opaque,
    conditions,
)
from ranklint.model.taint import element_target


class _RecordingIndex(ProjectIndex):
    """A call graph that remembers every dotted name it looked up."""

    def __init__(self, summaries: Iterable[ModuleSummary]) -> None:
        super().__init__(summaries)
        self.asked: set[str] = set()

    def _splits(self, target: str) -> Iterator[tuple[ModuleSummary, str]]:
        self.asked.add(target)
        return super()._splits(target)


def files_to_load(
    summaries: Sequence[ModuleSummary],
    given: Collection[str],
    modules: ModuleMap,
    *,
    only: Collection[tuple[str, str]] | None = None,
    guards_only: bool = False,
) -> set[str]:
    """Files of ``modules`` not among ``summaries`` that the calls reached from
    the functions of the ``given`` files may lead into (``only``: from those of
    their functions, by (path, qualname)). ``guards_only``: only the calls that
    decide whether their tests depend on the rank (the project functions whose
    results a branch or loop test reads, and what those return)."""
    if guards_only:
        return _guard_files(summaries, given, modules, only)
    index = _RecordingIndex(summaries)
    work = [
        FunctionRef(summary, function)
        for summary in summaries
        if summary.path in given
        for function in (summary.module, *summary.functions.values())
        if only is None or (summary.path, function.qualname) in only
    ]
    seen: set[tuple[str, str]] = set()
    while work:
        ref = work.pop()
        if ref.key in seen:
            continue
        seen.add(ref.key)
        for target in sorted({event.target for event in call_events(ref.function.events)}):
            callee = index.resolve(target, ref.module, ref.function)
            if callee is not None:
                work.append(callee)
        for class_qualname, bases in ref.module.classes.items():
            if ref.function.qualname.startswith(class_qualname + "."):
                for base in bases:
                    index.class_of(
                        base,
                        ref.module,
                        0,  # pragma: no mutate  (any small starting depth looks up the same names)
                    )
    return _unloaded(index, modules)


def _unloaded(index: _RecordingIndex, modules: ModuleMap) -> set[str]:
    """The files the names ``index`` looked up may mean that it does not hold yet."""
    loaded = set(index.names)
    return {
        path
        for name in index.asked
        for path in modules.files_for(name, whole=False)
        if path not in loaded
    }


def _guard_files(
    summaries: Sequence[ModuleSummary],
    given: Collection[str],
    modules: ModuleMap,
    only: Collection[tuple[str, str]] | None,
) -> set[str]:
    """:func:`files_to_load` with ``guards_only``."""
    index = _RecordingIndex(summaries)
    work: list[tuple[FunctionRef, frozenset[str]]] = []
    for summary in summaries:
        if summary.path not in given:
            continue
        for function in (summary.module, *summary.functions.values()):
            if only is None or (summary.path, function.qualname) in only:
                tests = frozenset(
                    raw
                    for cond in conditions(function.events, every=True)
                    for raw in cond.taint.via
                )
                work.append((FunctionRef(summary, function), tests))
    seen: set[tuple[str, str]] = set()
    while work:
        ref, via = work.pop()
        for raw in sorted(via):
            callee = index.resolve(element_target(raw)[0], ref.module, ref.function)
            if callee is None or callee.key in seen:
                continue
            seen.add(callee.key)
            returned = set(callee.function.returns.via)
            for element in callee.function.elements or ():
                returned |= element.via
            work.append((callee, frozenset(returned)))
    return _unloaded(index, modules)


# -- callers: upwards from the given files ------------------------------------


def _communicates(events: Sequence[Event]) -> bool:
    """``events`` (nested blocks included) issue a collective or a host cost."""
    for event in events:
        if isinstance(event, (Collective, HostCost)):
            return True
        if isinstance(event, Branch) and any(_communicates(arm) for arm in event.arms):
            return True
        if isinstance(event, (Loop, Opaque)) and _communicates(event.body):
            return True
    return False


class CallerSearch:
    """Which project files may hold the callers of the given files' functions.

    A finding can depend on a file's callers: a helper that now reaches a
    barrier is a hang where another file calls it under a rank test, and a sync
    is hot where another file's step loop calls it. The search starts from the
    functions of the given files that communicate (issue a collective or a host
    cost, directly or through the files loaded so far) and says what a caller's
    source must mention to call one (:meth:`pending`): its name (a module-level
    function's, or a method's class, for its constructor and its subclasses),
    and its module's or package's name, through which it is imported. As files
    that mention both are loaded (:meth:`add`), the functions of the loaded
    files whose calls lead into a target become targets too, round by round.
    Tests (``test_*`` functions, ``Test*`` classes) are called by their runner,
    never by name: they are not searched for. The text search itself (no
    parse) is the caller's part.
    """

    def __init__(self, summaries: Iterable[ModuleSummary], given: Collection[str]) -> None:
        self._summaries = list(summaries)
        self._targets: set[tuple[str, str]] = set()
        self._named: set[tuple[str, frozenset[str]]] = set()
        self._pending: set[tuple[str, frozenset[str]]] = set()
        index = ProjectIndex(self._summaries)
        start = [
            FunctionRef(summary, function)
            for summary in self._summaries
            if summary.path in given
            for function in summary.functions.values()
        ]
        # Communicating functions of the given files, and those of them that reach one.
        reaching = {ref.key for ref in start if _communicates(ref.function.events)}
        changed = True
        while changed:
            changed = False
            for ref in start:
                if ref.key not in reaching and self._calls_into(index, ref, reaching):
                    reaching.add(ref.key)
                    changed = True
        self._extend([ref for ref in start if ref.key in reaching], index)

    @property
    def targets(self) -> frozenset[tuple[str, str]]:
        """The (path, qualname) of every function found to lead into the given files."""
        return frozenset(self._targets)

    def pending(self) -> set[tuple[str, frozenset[str]]]:
        """The (name, module words) not searched for yet, and marks them searched: a
        caller's source mentions the name and one of the words."""
        names, self._pending = self._pending, set()
        return names

    def add(self, summaries: Iterable[ModuleSummary]) -> None:
        """Loaded files that mention a name: their functions that call a target
        become targets, and their names are searched for next."""
        self._summaries += list(summaries)
        index = ProjectIndex(self._summaries)
        candidates = [
            FunctionRef(summary, function)
            for summary in self._summaries
            for function in (summary.module, *summary.functions.values())
        ]
        # Until no function of the loaded files calls a target it is not one of.
        changed = True
        while changed:
            found = [
                ref
                for ref in candidates
                if ref.key not in self._targets and self._calls_into(index, ref, self._targets)
            ]
            self._extend(found, index)
            changed = bool(found)

    @staticmethod
    def _calls_into(index: ProjectIndex, ref: FunctionRef, targets: set[tuple[str, str]]) -> bool:
        for event in call_events(ref.function.events):
            callee = index.resolve(event.target, ref.module, ref.function)
            if callee is not None and callee.key in targets:
                return True
        return False

    def _extend(self, refs: Iterable[FunctionRef], index: ProjectIndex) -> None:
        for ref in refs:
            self._targets.add(ref.key)
            function = ref.function
            if function.qualname == "<module>":
                continue  # code run at import: no caller calls it by name
            if function.class_name is not None:
                name = function.class_name.rsplit(".", 1)[-1]
                if name.startswith("Test"):
                    continue
            elif "." not in function.qualname and not function.qualname.startswith("test_"):
                name = function.qualname
            else:
                continue  # a nested function (only its outer one calls it), or a test
            # Its module's and its package's last names: the words an import uses.
            parts = index.names.get(ref.module.path, "").split(".")
            words = frozenset(part for part in parts[-2:] if part and part != "__init__")
            key = (name, words)
            if key not in self._named:
                self._named.add(key)
                self._pending.add(key)
