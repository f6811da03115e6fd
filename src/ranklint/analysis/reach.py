"""Which more project files the findings of some files depend on, from their facts.

A finding located in a file depends on that file's facts and on the facts of
every project function its code reaches through calls: the callees, their
callees, the helpers a rank test or a returned value goes through, the base
classes of its classes. :func:`files_to_load` follows those calls from the
given files through the call graph of the files loaded so far, records every
dotted name the call graph looks up on the way (the lookups go through
``ProjectIndex._splits``), and answers the project files those names may mean
that are not loaded yet. Loading them and asking again, until nothing is
missing, gives what the given files' findings need and nothing that is only
imported.

What this leaves out, by design: findings that need a file's callers (a
helper that is hot because another file's step loop calls it, an entry
script imported by another file) and checks that need every file of the
project.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Iterator, Sequence

from ranklint.analysis.callgraph import FunctionRef, ProjectIndex
from ranklint.analysis.dependencies import ModuleMap
from ranklint.analysis.events import CallEvent, FunctionSummary, ModuleSummary
from ranklint.analysis.rank import element_target
from ranklint.analysis.taint import Taint


class _RecordingIndex(ProjectIndex):
    """A call graph that remembers every dotted name it looked up."""

    def __init__(self, summaries: Iterable[ModuleSummary]) -> None:
        super().__init__(summaries)
        self.asked: set[str] = set()

    def _splits(self, target: str) -> Iterator[tuple[ModuleSummary, str]]:
        self.asked.add(target)
        return super()._splits(target)


def files_to_load(
    summaries: Sequence[ModuleSummary], given: Collection[str], modules: ModuleMap
) -> set[str]:
    """Files of ``modules`` not among ``summaries`` that the calls reached from
    the functions of the ``given`` files may lead into."""
    index = _RecordingIndex(summaries)
    work = [
        FunctionRef(summary, function)
        for summary in summaries
        if summary.path in given
        for function in (summary.module, *summary.functions.values())
    ]
    seen: set[tuple[str, str]] = set()
    while work:
        ref = work.pop()
        if ref.key in seen:
            continue
        seen.add(ref.key)
        for target in sorted(_targets(ref.function)):
            callee = index.resolve(target, ref.module, ref.function)
            if callee is not None:
                work.append(callee)
        for class_qualname, bases in ref.module.classes.items():
            if ref.function.qualname.startswith(class_qualname + "."):
                for base in bases:
                    index.class_of(base, ref.module, ref.function, 0)
    loaded = set(index.names)
    return {
        path
        for name in index.asked
        for path in modules.files_for(name, whole=False)
        if path not in loaded
    }


def _targets(function: FunctionSummary) -> set[str]:
    """Every call target in a function's facts: its project calls, and the calls
    its rank values go through (``Taint.via``), wherever the facts keep them."""
    found: set[str] = set()
    stack: list[object] = [function]
    while stack:
        value = stack.pop()
        if isinstance(value, CallEvent):
            found.add(value.target)
        if isinstance(value, Taint):
            found.update(element_target(raw)[0] for raw in value.via)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            stack.extend(getattr(value, field.name) for field in dataclasses.fields(value))
        elif isinstance(value, (list, tuple, frozenset, set)):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
    return found
