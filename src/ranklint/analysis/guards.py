"""Recognised guards: ``if __name__ == "__main__":`` and ``if TYPE_CHECKING:``."""

from __future__ import annotations

import libcst as cst

from ranklint.analysis.names import dotted_name


def guard_kind(test: cst.BaseExpression) -> str | None:
    """``"main"`` / ``"not-main"`` for ``__name__`` guards, ``"type-checking"``, else None."""
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        sides = {_literal_or_name(test.left), _literal_or_name(target.comparator)}
        if sides == {"name:__name__", "str:__main__"}:
            if isinstance(target.operator, cst.Equal):
                return "main"
            if isinstance(target.operator, cst.NotEqual):
                return "not-main"
        return None
    name = dotted_name(test)
    if name is not None and name.rpartition(".")[2] == "TYPE_CHECKING":
        return "type-checking"
    return None


def _literal_or_name(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return f"name:{node.value}"
    if isinstance(node, cst.SimpleString) and node.value in ('"__main__"', "'__main__'"):
        return "str:__main__"  # raw token: evaluating the literal would compile it
    return None


def is_main_guard(test: cst.BaseExpression) -> bool:
    return guard_kind(test) == "main"
