"""Tests with a known meaning: ``if __name__ == "__main__":``, ``if TYPE_CHECKING:``,
flags and lazy-initialisation tests, and rank tests that are the same on every rank."""

from __future__ import annotations

import libcst as cst

from ranklint.analysis.walk.names import dotted_name


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


def is_plain_test(test: cst.BaseExpression) -> bool:
    """``flag``, ``not self.flag``, ``x is None``: tests that are matched by key."""
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test = test.expression
    if isinstance(test, cst.Comparison):
        if not (
            len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, (cst.Is, cst.IsNot))
        ):
            return False
        test = test.left
    return isinstance(test, (cst.Name, cst.Attribute))


def literal_comparison_subject(test: cst.BaseExpression) -> cst.BaseExpression | None:
    """``kind == "sharded"``, ``self.mode != 2``: the name compared with a literal."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    target = test.comparisons[0]
    if not isinstance(target.operator, (cst.Equal, cst.NotEqual)):
        return None
    if not isinstance(target.comparator, (cst.SimpleString, cst.Integer)):
        return None
    return test.left if isinstance(test.left, (cst.Name, cst.Attribute)) else None


def is_keyed_test(test: cst.BaseExpression) -> bool:
    """A plain test, or a name compared with a literal: both are matched by their text."""
    return is_plain_test(test) or literal_comparison_subject(test) is not None


def is_lazy_test(test: cst.BaseExpression) -> bool:
    """A test that a cache is still empty (possibly in an ``and``): ``self.x is None``,
    ``not _groups``, ``len(_groups) == 0``, ``key not in self._groups``."""
    if isinstance(test, cst.BooleanOperation):
        return is_lazy_test(test.left) or is_lazy_test(test.right)
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return is_cache(test.expression)
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return False
    operator, right = test.comparisons[0].operator, test.comparisons[0].comparator
    if isinstance(operator, cst.Is):
        return isinstance(right, cst.Name) and right.value == "None" and is_cache(test.left)
    if isinstance(operator, cst.NotIn):
        return is_cache(right)
    if isinstance(operator, cst.Equal):
        left = test.left
        return (
            isinstance(right, cst.Integer)
            and right.value == "0"
            and isinstance(left, cst.Call)
            and isinstance(left.func, cst.Name)
            and left.func.value == "len"
            and len(left.args) == 1
            and is_cache(left.args[0].value)
        )
    return False


def is_cache(node: cst.BaseExpression) -> bool:
    """State that outlives the call: an attribute of ``self`` or a module-level
    name by convention (``_groups``, ``GROUPS``)."""
    name = dotted_name(node) or ""
    if name.startswith("self."):
        return True
    return "." not in name and (name.startswith("_") or (name.isupper() and len(name) > 1))


# `rank != -1`, `local_rank >= 0`: "is this a distributed run", the same on
# every rank (ranks are never negative; -1 means "not launched distributed").
_SAME_ON_EVERY_RANK: dict[type[cst.BaseCompOp], str] = {
    cst.Equal: "-1",
    cst.NotEqual: "-1",
    cst.GreaterThanEqual: "0",
    cst.LessThan: "0",
    cst.GreaterThan: "-1",
    cst.LessThanEqual: "-1",
}


def same_on_every_rank(node: cst.Comparison) -> bool:
    """``x != -1``, ``x >= 0`` and the like (``x``: a rank, checked by the caller)."""
    if len(node.comparisons) != 1:
        return False
    target = node.comparisons[0]
    literal = _SAME_ON_EVERY_RANK.get(type(target.operator))
    comparator = target.comparator
    if isinstance(comparator, cst.UnaryOperation) and isinstance(comparator.operator, cst.Minus):
        text = "-" + (
            comparator.expression.value if isinstance(comparator.expression, cst.Integer) else "?"
        )
    else:
        text = comparator.value if isinstance(comparator, cst.Integer) else None
    return literal is not None and text == literal


def first_and_last_stage(node: cst.BooleanOperation) -> bool:
    """``is_pipeline_first_stage() and is_pipeline_last_stage()``: true on every
    rank without pipeline parallelism and on none with it, so rank-invariant."""
    if not isinstance(node.operator, cst.And):
        return False
    names = set()
    for side in (node.left, node.right):
        if not isinstance(side, cst.Call):
            return False
        func = side.func
        name = func.attr.value if isinstance(func, cst.Attribute) else dotted_name(func)
        names.add(name)
    return names == {"is_pipeline_first_stage", "is_pipeline_last_stage"}
