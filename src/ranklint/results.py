"""What linting one file produces: findings, internal errors, facts, located sites.

A leaf module shared by the engine (which builds results) and the cache
(which stores them), so that neither imports the other.
"""

from __future__ import annotations

import pickle
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ranklint.findings import Evidence, Finding, Fix, InternalError, Severity, TraceStep
from ranklint.model.events import ModuleSummary, Site


class RuleMetadata(Protocol):
    """What a finding takes from its rule."""

    code: str
    name: str
    severity: Severity


@dataclass
class Span:
    """1-based start and end of a reported node."""

    line: int
    col: int
    end_line: int
    end_col: int
    # Lines whose suppression comments apply (the call's and its statement's).
    lines: list[int]


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    errors: list[InternalError] = field(default_factory=list)
    # Facts for the project phase (None when the file was not analysed, or
    # while they are still packed: read them with :meth:`module_summary`).
    summary: ModuleSummary | None = None
    # Positions of call sites located for project findings (kept in the cache).
    located: dict[Site, Span] = field(default_factory=dict)
    # The summary as the cache stored it, unpickled only when the project phase
    # needs it (a warm run whose project phase is cached never does).
    packed_summary: bytes | None = field(default=None, compare=False, repr=False)
    # RNK002 findings for codes of project-phase rules (with the code each
    # judges): stale only if the project phase suppresses nothing with them
    # either, which only a run over the whole project can tell.
    unused_candidates: list[tuple[str, Finding]] = field(default_factory=list)
    # The cache key of the file's path and bytes, when it went through a cache.
    cache_key: str | None = field(default=None, compare=False, repr=False)

    def module_summary(self) -> ModuleSummary | None:
        """The facts for the project phase, unpacked on first use."""
        if self.summary is None and self.packed_summary is not None:
            self.summary = pickle.loads(self.packed_summary)
            self.packed_summary = None  # pragma: no mutate (frees the bytes; never read again)
        return self.summary


def finding_at(
    rule: RuleMetadata,
    message: str,
    path: str,
    span: Span,
    trace: tuple[TraceStep, ...] = (),
    fix: Fix | None = None,
    evidence: Evidence | None = None,
) -> Finding:
    """The finding of ``rule`` with ``message`` at ``span`` of ``path`` (and its
    ``fix`` and ``evidence``)."""
    return Finding(
        code=rule.code,
        name=rule.name,
        severity=rule.severity,
        message=message,
        path=path,
        line=span.line,
        col=span.col,
        end_line=span.end_line,
        end_col=span.end_col,
        trace=trace,
        fix=fix,
        evidence=evidence,
    )


def add_project_findings(results: Sequence[FileResult], made: Mapping[str, list[Finding]]) -> None:
    """Add the project phase's findings (by path) to the results of their files."""
    for result in results:
        if result.path in made:
            result.findings.extend(made[result.path])
            result.findings.sort(key=Finding.sort_key)
