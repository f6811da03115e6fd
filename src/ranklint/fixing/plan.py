"""Rules' pending fixes (node replacements) turned into text edits."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import libcst as cst
from libcst.metadata import CodeRange

from ranklint.findings import Fix
from ranklint.fixing.edits import Lines, smallest_edit
from ranklint.positions import resolve_positions
from ranklint.rules import PendingFinding, PendingFix

logger = logging.getLogger(__name__)


def fixes_of(
    module: cst.Module,
    text: str,
    pending: Sequence[PendingFinding],
    positions: Mapping[cst.CSTNode, CodeRange] | None = None,
) -> list[Fix | None]:
    """The fix of each pending finding, as text edits of ``text`` (``None`` where none).
    ``positions``: those of the fixes' nodes, when already resolved."""
    wanted = fix_nodes(pending)
    if not wanted:
        return [None] * len(pending)
    if positions is None:
        # Without `text` the same positions come the slower way (equivalent mutants).
        positions = resolve_positions(module, wanted, text=text)  # pragma: no mutate
    lines = Lines(text)
    made: list[Fix | None] = []
    for item in pending:
        fix = item.fix
        try:
            made.append(None if fix is None else _fix(module, text, lines, positions, fix))
        except Exception:  # a bug in one rule's fix must not cost the findings
            logger.debug("%s: fix failed", item.rule.code, exc_info=True)
            made.append(None)
    return made


def fix_nodes(pending: Sequence[PendingFinding]) -> list[tuple[cst.CSTNode, cst.CSTNode | None]]:
    """The (node to replace, module-level statement) of each pending fix."""
    return [(p.fix.old, p.top_statement) for p in pending if p.fix is not None]


def _fix(
    module: cst.Module,
    text: str,
    lines: Lines,
    positions: Mapping[cst.CSTNode, CodeRange],
    fix: PendingFix,
) -> Fix | None:
    """``fix`` as the smallest edit of ``text``; ``None`` if its node is not found there."""
    where = positions[fix.old]
    start = lines.offset(where.start.line, where.start.column + 1)
    end = lines.offset(where.end.line, where.end.column + 1)
    indent = _block_indent(module, fix.old, text, start, end)
    if indent is None:
        logger.debug("fix dropped: its node is not where expected")
        return None
    edit = smallest_edit(lines, start, end, _code(module, fix.new, indent))
    return None if edit is None else Fix(fix.applicability, fix.message, (edit,))


def _block_indent(
    module: cst.Module, node: cst.CSTNode, text: str, start: int, end: int
) -> str | None:
    """The indentation of the block holding ``node`` (its continuation lines carry
    it), found as the one with which its code is the text at ``start:end``; ``None``
    when there is none."""
    line_start = text.rfind("\n", 0, start) + 1  # pragma: no mutate (a start of None is 0)
    line_start = max(line_start, text.rfind("\r", 0, start) + 1)  # pragma: no mutate (None is 0)
    leading = text[line_start:start]
    leading = leading[: len(leading) - len(leading.lstrip(" \t"))]
    wanted = text[start:end]
    # The block's indentation is a prefix of the leading whitespace of the line
    # the node starts on (equal, unless that line is itself a continuation).
    for size in range(len(leading), -1, -1):  # pragma: no mutate (-1 retries a tried prefix)
        if _code(module, node, leading[:size]) == wanted:
            return leading[:size]
        if "\n" not in wanted and "\r" not in wanted:
            return None  # one line: no indentation in it to find
    return None


def _code(module: cst.Module, node: cst.CSTNode, indent: str) -> str:
    """The code of ``node`` (without parentheses around it) inside a block indented by
    ``indent``: what the text holds where positions place it."""
    node = _bare(node)
    if not indent:
        return module.code_for_node(node)
    try:
        from libcst._nodes.internal import CodegenState
    except ImportError:  # a libcst without it: only one-line code is found
        return module.code_for_node(node)
    state = CodegenState(
        default_indent=module.default_indent,
        default_newline=module.default_newline,
        indent_tokens=[indent],
    )
    node._codegen(state)
    return "".join(state.tokens)


def _bare(node: cst.CSTNode) -> cst.CSTNode:
    """``node`` without the parentheses around an expression or the semicolon after
    a small statement (positions leave them out; a statement's own parentheses, as
    in ``from m import (a, b)``, are in)."""
    # `and` for `or` is an equivalent mutant: libcst rejects parentheses on one side only.
    if isinstance(node, cst.BaseExpression) and (node.lpar or node.rpar):  # pragma: no mutate
        return node.with_changes(lpar=(), rpar=())
    if isinstance(node, cst.BaseSmallStatement) and isinstance(node.semicolon, cst.Semicolon):
        # `a; b`: positions end a small statement before its semicolon.
        return node.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
    return node
