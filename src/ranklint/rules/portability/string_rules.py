"""Shared by the RNK5xx string rules: a base class that skips docstrings and bare strings."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ranklint.analysis.context import FileContext
from ranklint.rules.base import PendingFinding, Rule


class _StringRule(Rule):
    """Skips docstrings and other bare string statements."""

    def __init__(self, ctx: FileContext, sink: Callable[[PendingFinding], None]) -> None:
        super().__init__(ctx, sink)
        self._skip: set[int] = set()

    def visit_Expr(self, node: cst.Expr) -> None:
        if isinstance(node.value, (cst.SimpleString, cst.ConcatenatedString)):
            self._skip.add(id(node.value))

    def skipped(self, node: cst.CSTNode) -> bool:
        return id(node) in self._skip
