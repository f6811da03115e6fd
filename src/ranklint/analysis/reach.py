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

What this leaves out, by design: findings that need a file's callers (a
helper that is hot because another file's step loop calls it, an entry
script imported by another file) and checks that need every file of the
project.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence

from ranklint.analysis.callgraph import FunctionRef, ProjectIndex, call_events
from ranklint.analysis.dependencies import ModuleMap
from ranklint.analysis.events import ModuleSummary


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
    loaded = set(index.names)
    return {
        path
        for name in index.asked
        for path in modules.files_for(name, whole=False)
        if path not in loaded
    }
