"""The canonical form of a branch's test: the key the project phase matches tests by.

``if not rank == 0`` and ``if rank > 0`` are the same test, negated or not; a flag
that restates a rank test is keyed as that test. See :class:`ranklint.model.events.Cond`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from ranklint.analysis.walk.guards import literal_comparison_subject
from ranklint.analysis.walk.names import dotted_name

if TYPE_CHECKING:
    from ranklint.analysis.walk.rank import RankTaint


# (key, check, negated, subject): see Cond.
Canonical = tuple[str, str, bool, cst.BaseExpression | None]


def canonical_test(module: cst.Module, rank: RankTaint, test: cst.BaseExpression) -> Canonical:
    """(key, check, negated, subject) of a test; see :class:`Cond`."""
    negated = False
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        negated, test = not negated, test.expression
    if isinstance(test, cst.Name):
        restated = rank.predicate(test.value)
        if restated is not None:
            # `start_server = True; if rank > 0: start_server = False`: a test of
            # the flag is that rank test, keyed alike (see RankTaint.predicate).
            key, check, inner, subject = canonical_test(module, rank, restated[0])
            return key, check, inner != (restated[1] != negated), subject
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        operator, right = target.operator, target.comparator
        left_text = " ".join(module.code_for_node(test.left).split())
        if (
            isinstance(right, cst.Name)
            and right.value == "None"
            and isinstance(operator, (cst.Is, cst.IsNot))
        ):
            return (left_text, "is-none", negated != isinstance(operator, cst.IsNot), test.left)
        if isinstance(right, cst.Integer):
            value = right.value
            # Ranks are >= 0: `> 0` and `>= 1` are `!= 0`.
            if value == "0" and isinstance(operator, (cst.Equal, cst.NotEqual, cst.GreaterThan)):
                flip = not isinstance(operator, cst.Equal)
                return f"{left_text}==0", "truthy", negated != flip, None
            if value == "1" and isinstance(operator, cst.GreaterThanEqual):
                return f"{left_text}==0", "truthy", not negated, None
    dotted = dotted_name(test)
    if dotted is not None:
        return dotted, "truthy", negated, test
    text = " ".join(module.code_for_node(test).split())
    # `kind == "sharded"`: keyed by its text, its subject is the name tested.
    return text, "truthy", negated, literal_comparison_subject(test) or test
