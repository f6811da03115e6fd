"""Placing project findings: the positions of their call sites, and the Finding objects.

The project phase names places by :class:`~ranklint.model.events.Site`; a
second walk of a file finds the nodes of the sites that ended in a finding
(calls by their ordinal, other recorded nodes through the facts builder), and
positions are computed for those alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ranklint.analysis.walk.context import FileContext
from ranklint.analysis.walk.summary import PlacedNode
from ranklint.analysis.walk.visitor import NodeVisitor
from ranklint.findings import Finding, TraceStep
from ranklint.model.events import Site
from ranklint.results import Span, finding_at
from ranklint.rules.base import ProjectFinding, Rule


class Locator(NodeVisitor):
    """Finds call nodes by :class:`Site` on a second walk of a file."""

    where = "engine locator"

    def __init__(self, ctx: FileContext, sites: set[Site]) -> None:
        super().__init__(ctx)
        self.sites = sites
        self.found: dict[Site, PlacedNode] = {}

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        site = Site(ctx.top_index, ctx.call_ordinal)
        if site in self.sites:
            self.found[site] = (node, ctx.statement, ctx.top_statement)


@dataclass
class Located:
    """The text of a file (None: it could not be read again) and its located sites."""

    text: str | None
    sites: dict[Site, Span]


def project_finding(
    rule: type[Rule], finding: ProjectFinding, located: dict[str, Located]
) -> Finding | None:
    """The positioned finding, or None when a hop of its chain could not be located."""
    spans: list[Span] = []
    for hop in finding.chain:
        span = located[hop.path].sites.get(hop.site)
        if span is None:
            return None
        spans.append(span)
    first = spans[finding.anchor]
    message = finding.message
    if "{chain}" in message:
        last_hop, last_span = finding.chain[-1], spans[-1]
        chain = " -> ".join(hop.label for hop in finding.chain)
        message = message.replace("{chain}", f"{chain} at {last_hop.path}:{last_span.line}")
    trace: tuple[TraceStep, ...] = ()
    if len(spans) > 1:
        last = len(spans) - 1
        trace = tuple(
            TraceStep(
                hop.path,
                span.line,
                span.col,
                f"`{hop.label}` here" if index == last else f"calls `{hop.label}`",
            )
            for index, (hop, span) in enumerate(zip(finding.chain, spans, strict=True))
        )
    return finding_at(rule, message, finding.path, first, trace, evidence=finding.evidence)
