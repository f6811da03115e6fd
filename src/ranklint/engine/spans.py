"""Spans of reported nodes: positions computed only for the statements that hold them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import libcst as cst
from libcst.metadata import CodeRange

from ranklint.analysis.walk.summary import PlacedNode
from ranklint.positions import resolve_positions
from ranklint.results import Span


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


def spans_of(
    module: cst.Module, placed: Sequence[PlacedNode], text: str | None = None
) -> list[Span]:
    """The span of each placed node, positions computed only for their statements
    (``text``: the source of ``module``, which makes finding them cheaper)."""
    positions = placed_positions(module, placed, text)
    return [span_of(positions, node, statement) for node, statement, _ in placed]


def placed_positions(
    module: cst.Module,
    placed: Sequence[PlacedNode],
    text: str | None = None,
    extra: Sequence[tuple[cst.CSTNode, cst.CSTNode | None]] = (),
) -> Mapping[cst.CSTNode, CodeRange]:
    """Positions of the placed nodes and their statements, and of the ``extra``
    (node, module-level statement) pairs, in one pass over their statements."""
    wanted = [(node, top) for node, _, top in placed]
    wanted += [(statement, top) for _, statement, top in placed if statement is not None]
    return resolve_positions(module, [*wanted, *extra], text=text)
