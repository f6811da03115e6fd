"""Source positions of reported nodes, computed only where findings are.

libcst's PositionProvider generates the code of the whole module while
recording a position for every node: about twice the cost of parsing the file.
Here only the top-level statements that hold findings go through it; the line
where each top-level statement starts comes from plain code generation, which
is about nine times cheaper. Columns need no offset: top-level statements start
at column 0.

With the source text at hand, no statement before is generated at all: a
statement is placed by searching the text for its code. A node in a statement
nested in a module-level one (a line of a method of a large class) is placed
through that innermost statement alone, its code rendered in its block's
indentation, so positions are computed for that statement, not for the class.

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

from ranklint.syntax import child_nodes

try:  # libcst's own state for positions: with it, a nested statement is placed alone
    from libcst.metadata.position_provider import PositionProvidingCodegenState
except ImportError:  # pragma: no cover (a libcst that moved it: module-level placing)
    PositionProvidingCodegenState = None  # type: ignore[assignment,misc]

# The line breaks libcst's PositionProvider (and Python's tokenizer) count.
# A line break as Python and libcst count them: \r\n, \r or \n.
NEWLINE = re.compile(r"\r\n?|\n")

# When most top-level statements hold findings, one pass over the module is cheaper.
_WHOLE_MODULE_SHARE = 0.5
# Past this many nested statements holding findings in one module-level statement,
# positions for the whole statement at once are cheaper.
_INNER_LIMIT = 8


def resolve_positions(
    module: cst.Module,
    wanted: Iterable[tuple[cst.CSTNode, cst.CSTNode | None]],
    *,
    text: str | None = None,
    whole_module_share: float = _WHOLE_MODULE_SHARE,
    inner_limit: int = _INNER_LIMIT,
) -> dict[cst.CSTNode, CodeRange]:
    """Positions of nodes, each given with the top-level statement that holds it.

    A node whose top-level statement is unknown (``None``) makes this fall back
    to positions for the whole module. ``text``: the source ``module`` was
    parsed from; with it, the line where a statement starts is found by
    searching the text for the statement's code, not by generating the code of
    every statement before it, and a node in a nested statement through that
    statement's code (``inner_limit``: at most that many per module-level
    statement).
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
        found = _by_search(module, by_statement, text, inner_limit)
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
    module: cst.Module,
    by_statement: dict[cst.CSTNode, list[cst.CSTNode]],
    text: str,
    inner_limit: int = _INNER_LIMIT,
) -> dict[cst.CSTNode, CodeRange] | None:
    """Positions of the nodes of each statement in ``by_statement``, each statement
    placed where its code (which libcst reproduces exactly) is in ``text``: searched
    from the end of the statement placed before it. ``None`` when a statement's code
    is not there once (an identical statement follows): then the search cannot tell
    which one it is.

    Within a module-level statement, a node is first placed through the innermost
    statement that holds it (with at most ``inner_limit`` of them per module-level
    statement): a method's line of a large class costs the code of that line, not
    positions for the whole class."""
    positions: dict[cst.CSTNode, CodeRange] = {}
    cursor, line = 0, 1  # an offset in the text, and its line
    remaining = len(by_statement)
    for statement in module.body:
        nodes = by_statement.get(statement)
        if nodes is None:
            continue
        searched = _Searched(text, cursor, line)
        nodes = _place_inner(module, statement, nodes, searched, positions, inner_limit)
        if nodes:
            code = module.code_for_node(statement)
            # Equivalent mutants (of the start, the bounds, find/rfind): searching from
            # `cursor` only saves time, a repeat anywhere after the first match makes the
            # search give up (and the slow path gives the same positions), and a
            # statement's code (never one repeated character) cannot recur one later.
            offset = text.find(code, cursor)  # pragma: no mutate
            if offset < 0 or text.find(code, offset + 1) >= 0:  # pragma: no mutate
                return None
            _place(module, statement, nodes, searched.line_at(offset), positions)
            searched.reached(offset + len(code))
        cursor, line = searched.cursor, searched.line_at(searched.cursor)
        remaining -= 1  # pragma: no mutate (stops the search early only)
        if remaining == 0:
            break
    return positions


class _Searched:
    """Lines of offsets in ``text`` at or after ``start`` (on line ``line``), and the
    furthest offset placed code has reached."""

    def __init__(self, text: str, start: int, line: int) -> None:
        self.text, self.start, self.line = text, start, line
        self.cursor = start

    def line_at(self, offset: int) -> int:
        return self.line + _line_breaks(self.text[self.start : offset])

    def reached(self, offset: int) -> None:
        self.cursor = max(self.cursor, offset)


def _place_inner(
    module: cst.Module,
    statement: cst.CSTNode,
    nodes: list[cst.CSTNode],
    searched: _Searched,
    positions: dict[cst.CSTNode, CodeRange],
    inner_limit: int,
) -> list[cst.CSTNode]:
    """Place the ``nodes`` held by statements nested in the module-level ``statement``
    through the innermost such statement whose code (rendered in its block's
    indentation) occurs once in the rest of the text: the one holding them, else
    the next one out (a method whose line recurs in another method); the nodes
    left to place."""
    by_inner = _innermost_statements(statement, nodes, module.default_indent)
    # A node of the statement's own (its header, a decorator) needs positions for
    # the whole statement, which then place every other node as well.
    if any(not chain for chain, _ in by_inner.values()) or len(by_inner) > inner_limit:
        return nodes
    placed: dict[cst.CSTNode, CodeRange] = {}
    end = searched.start
    for chain, held in by_inner.values():
        for inner, indents in chain:
            rendered = _positions_alone(module, inner, indents)
            if rendered is None:
                return nodes
            code, local = rendered
            # Equivalent mutants: as in `_by_search` (the code of a nested statement
            # starts after its module-level statement's first line, never at offset 0).
            offset = searched.text.find(code, searched.start)
            if offset >= 0 and searched.text.find(code, offset + 1) < 0:  # pragma: no mutate
                break
        else:  # then the whole statement is placed at once
            return nodes
        lines = searched.line_at(offset) - 1
        for node in held:
            placed[node] = _shifted(local[node], lines)
        end = max(end, offset + len(code))
    positions.update(placed)
    searched.reached(end)
    return [node for node in nodes if node not in placed]


# The statements nested in a module-level one that hold a node, innermost first,
# each with the indentation of its block.
Chain = tuple[tuple[cst.CSTNode, tuple[str, ...]], ...]


def _innermost_statements(
    statement: cst.CSTNode, nodes: list[cst.CSTNode], default_indent: str
) -> dict[cst.CSTNode, tuple[Chain, list[cst.CSTNode]]]:
    """For each of ``nodes``, the statements that hold it and start a line of their
    own, nested in ``statement``, innermost first, with the indentation of their
    block: ``{innermost: (chain, nodes)}``, where the innermost is ``statement``
    itself (and the chain empty) for a node of its own. An ``elif`` is not one
    (alone, its code says ``if``): its nodes go to the ``if`` before it."""
    wanted = {id(node) for node in nodes}
    found: dict[cst.CSTNode, tuple[Chain, list[cst.CSTNode]]] = {}
    left = len(wanted)
    elifs: set[int] = set()
    # (node, the statements holding it, the indentation of its block)
    stack: list[tuple[cst.CSTNode, Chain, tuple[str, ...]]] = [(statement, (), ())]
    while stack and left:
        node, chain, indents = stack.pop()
        nested = node is not statement and isinstance(node, cst.BaseStatement)
        if nested and id(node) not in elifs:
            chain = ((node, indents), *chain)
        if isinstance(node, cst.If) and isinstance(node.orelse, cst.If):
            elifs.add(id(node.orelse))
        if id(node) in wanted:
            innermost = chain[0][0] if chain else statement
            found.setdefault(innermost, (chain, []))[1].append(node)
            left -= 1  # pragma: no mutate (stops the walk early only; tested with two nodes)
        # The two nodes that indent what they hold: a block, and a match's cases.
        if isinstance(node, (cst.IndentedBlock, cst.Match)):
            indents = (*indents, default_indent if node.indent is None else node.indent)
        stack.extend((child, chain, indents) for child in child_nodes(node))
    return found


def _positions_alone(
    module: cst.Module, statement: cst.CSTNode, indents: tuple[str, ...]
) -> tuple[str, Mapping[cst.CSTNode, CodeRange]] | None:
    """The code of a nested ``statement`` in its block's indentation, and the
    positions of its nodes counted from its first line; ``None`` with a libcst
    whose position provider works differently."""
    fresh = _provider()
    if fresh is None or PositionProvidingCodegenState is None:
        return None
    provider, computed = fresh
    state = PositionProvidingCodegenState(
        default_indent=module.default_indent,
        default_newline=module.default_newline,
        provider=provider,
        indent_tokens=list(indents),
    )
    statement._codegen(state)
    return "".join(state.tokens), computed


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
    # Either path gives the same positions; the provider alone is only faster.
    fresh = _provider()  # pragma: no mutate
    if fresh is None:
        return MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    provider, computed = fresh
    provider._gen_impl(module)
    return computed


def _provider() -> tuple[PositionProvider, dict[cst.CSTNode, CodeRange]] | None:
    """A new PositionProvider and the dict it fills; ``None`` with a libcst whose
    provider keeps its positions elsewhere (then it runs only through the wrapper)."""
    provider = PositionProvider()
    computed = vars(provider).get("_computed")  # pragma: no mutate
    return (provider, computed) if isinstance(computed, dict) else None


def _line_breaks(code: str) -> int:
    return len(NEWLINE.findall(code))


def _shifted(span: CodeRange, lines: int) -> CodeRange:
    return CodeRange(
        CodePosition(span.start.line + lines, span.start.column),
        CodePosition(span.end.line + lines, span.end.column),
    )
