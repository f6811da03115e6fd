"""Source positions of reported nodes, computed only where findings are.

libcst's PositionProvider generates the code of the whole module while
recording a position for every node: about twice the cost of parsing the file.
Here only the top-level statements that hold findings go through it; the line
where each top-level statement starts comes from plain code generation, which
is about nine times cheaper. Columns need no offset: top-level statements start
at column 0.

The provider runs alone, not through ``MetadataWrapper.resolve``: that also
walks the whole module with libcst's batched visitor (which rebuilds every node
it passes) even when no batchable provider is asked for, at about the cost of
the code generation itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import libcst as cst
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider

# The line breaks libcst's PositionProvider (and Python's tokenizer) count.
# A line break as Python and libcst count them: \r\n, \r or \n.
NEWLINE = re.compile(r"\r\n?|\n")

# When most top-level statements hold findings, one pass over the module is cheaper.
_WHOLE_MODULE_SHARE = 0.5


def resolve_positions(
    module: cst.Module,
    wanted: Iterable[tuple[cst.CSTNode, cst.CSTNode | None]],
    *,
    text: str | None = None,
    whole_module_share: float = _WHOLE_MODULE_SHARE,
) -> dict[cst.CSTNode, CodeRange]:
    """Positions of nodes, each given with the top-level statement that holds it.

    A node whose top-level statement is unknown (``None``) makes this fall back
    to positions for the whole module. ``text``: the source ``module`` was
    parsed from; with it, the line where a statement starts is found by
    searching the text for the statement's code, not by generating the code of
    every statement before it.
    """
    by_statement: dict[cst.CSTNode, list[cst.CSTNode]] = {}
    for node, statement in wanted:
        if statement is None:
            return _whole_module(module)
        by_statement.setdefault(statement, []).append(node)
    # Picks the cheaper of two ways to the same positions.
    if len(by_statement) > whole_module_share * max(len(module.body), 1):  # pragma: no mutate
        return _whole_module(module)

    if text is not None:
        found = _by_search(module, by_statement, text)
        if found is not None:
            return found
    positions: dict[cst.CSTNode, CodeRange] = {}
    # Line 1 of the file is where the header's first line (or the first statement) is.
    line = 1 + sum(_line_breaks(module.code_for_node(empty)) for empty in module.header)
    remaining = len(by_statement)
    for statement in module.body:
        nodes = by_statement.get(statement)
        if nodes is not None:
            _place(module, statement, nodes, line, positions)
            remaining -= 1  # pragma: no mutate (stops code generation early only)
            if remaining == 0:  # statements after the last one with findings need no codegen
                break
        line += _line_breaks(module.code_for_node(statement))
    return positions


def _by_search(
    module: cst.Module, by_statement: dict[cst.CSTNode, list[cst.CSTNode]], text: str
) -> dict[cst.CSTNode, CodeRange] | None:
    """Positions of the nodes of each statement in ``by_statement``, each statement
    placed where its code (which libcst reproduces exactly) is in ``text``: searched
    from the end of the statement placed before it. ``None`` when a statement's code
    is not there once (an identical statement follows): then the search cannot tell
    which one it is."""
    positions: dict[cst.CSTNode, CodeRange] = {}
    cursor, line = 0, 1  # an offset in the text, and its line
    remaining = len(by_statement)
    for statement in module.body:
        nodes = by_statement.get(statement)
        if nodes is None:
            continue
        code = module.code_for_node(statement)
        # Equivalent mutants (of the start, the bounds, find/rfind): searching from
        # `cursor` only saves time, a repeat anywhere after the first match makes the
        # search give up (and the slow path gives the same positions), and a
        # statement's code (never one repeated character) cannot recur one later.
        offset = text.find(code, cursor)  # pragma: no mutate
        if offset < 0 or text.find(code, offset + 1) >= 0:  # pragma: no mutate
            return None
        line += _line_breaks(text[cursor:offset])
        _place(module, statement, nodes, line, positions)
        cursor = offset + len(code)
        line += _line_breaks(code)
        remaining -= 1  # pragma: no mutate (stops the search early only)
        if remaining == 0:
            break
    return positions


def _place(
    module: cst.Module,
    statement: cst.CSTNode,
    nodes: list[cst.CSTNode],
    line: int,
    positions: dict[cst.CSTNode, CodeRange],
) -> None:
    """Add the positions of ``nodes`` of the module-level ``statement`` whose code
    starts on ``line``: computed for the statement alone, then shifted there."""
    # The footer follows the statement: keeping it would not move a position.
    alone = module.with_changes(body=[statement], header=(), footer=())  # pragma: no mutate
    local = _all_positions(alone)
    for node in nodes:
        positions[node] = _shifted(local[node], line - 1)


def _whole_module(module: cst.Module) -> dict[cst.CSTNode, CodeRange]:
    return dict(_all_positions(module))


def _all_positions(module: cst.Module) -> Mapping[cst.CSTNode, CodeRange]:
    """libcst's PositionProvider positions of every node of ``module``."""
    provider = PositionProvider()
    # Either path gives the same positions; the provider alone is only faster.
    computed = vars(provider).get("_computed")  # pragma: no mutate
    if not isinstance(computed, dict):  # a libcst whose provider keeps them elsewhere
        return MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    provider._gen_impl(module)
    return computed


def _line_breaks(code: str) -> int:
    return len(NEWLINE.findall(code))


def _shifted(span: CodeRange, lines: int) -> CodeRange:
    return CodeRange(
        CodePosition(span.start.line + lines, span.start.column),
        CodePosition(span.end.line + lines, span.end.column),
    )
