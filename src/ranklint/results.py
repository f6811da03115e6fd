"""What linting one file produces: findings, internal errors, facts, located sites.

A leaf module shared by the engine (which builds results) and the cache
(which stores them), so that neither imports the other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import libcst as cst
from libcst.metadata import CodeRange

from ranklint.analysis.events import ModuleSummary, Site
from ranklint.analysis.summary import PlacedNode
from ranklint.findings import Finding, InternalError, Severity, TraceStep
from ranklint.positions import resolve_positions


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


def span_of(
    positions: Mapping[cst.CSTNode, CodeRange],
    node: cst.CSTNode,
    statement: cst.CSTNode | None,
) -> Span:
    """1-based span of ``node``; suppression lines include its statement's first and last."""
    where = positions[node]
    lines = {where.start.line, where.end.line}
    if statement is not None:
        lines |= {positions[statement].start.line, positions[statement].end.line}
    return Span(
        where.start.line,
        where.start.column + 1,
        where.end.line,
        where.end.column + 1,
        sorted(lines),
    )


def spans_of(module: cst.Module, placed: Sequence[PlacedNode]) -> list[Span]:
    """The span of each placed node, positions computed only for their statements."""
    wanted = [(node, top) for node, _, top in placed]
    wanted += [(statement, top) for _, statement, top in placed if statement is not None]
    positions = resolve_positions(module, wanted)
    return [span_of(positions, node, statement) for node, statement, _ in placed]


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    errors: list[InternalError] = field(default_factory=list)
    # Facts for the project phase (None when the file was not analysed).
    summary: ModuleSummary | None = None
    # Positions of call sites located for project findings (kept in the cache).
    located: dict[Site, Span] = field(default_factory=dict)


def finding_at(
    rule: RuleMetadata, message: str, path: str, span: Span, trace: tuple[TraceStep, ...] = ()
) -> Finding:
    """The finding of ``rule`` with ``message`` at ``span`` of ``path``."""
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
    )
