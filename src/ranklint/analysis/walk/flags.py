"""Assignments under rank tests that say less than they seem.

Boolean flags that restate a rank test: ``serve = True; if rank > 0: serve =
False``. A later ``if serve:`` is then the same test as ``if rank == 0:`` and
is keyed alike (:meth:`ranklint.analysis.walk.summary.FactsBuilder` asks
:meth:`ranklint.analysis.walk.rank.RankTaint.predicate`), so that a nested test of
the rank inside ``if serve: ... else:`` is decided by its enclosing arm.

Complementary assignments: the same value given under a rank test and under
its opposite reaches every rank (see ComplementaryAssignments).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import libcst as cst

from ranklint.model.taint import Taint
from ranklint.syntax import source_text


@dataclass(slots=True)
class RestatedFlags:
    """The flags of one function (or of the module body)."""

    # name -> literal it was last given outside any rank-dependent test
    literals: dict[str, bool] = field(default_factory=dict)
    # name -> (test, negated): the flag holds exactly where `test` holds
    # (negated: where it fails).
    predicates: dict[str, tuple[cst.BaseExpression | None, bool]] = field(default_factory=dict)

    def predicate(self, name: str) -> tuple[cst.BaseExpression, bool] | None:
        found = self.predicates.get(name)
        if found is None or found[0] is None:
            return None
        return found[0], found[1]

    def assigned(
        self,
        name: str,
        value: cst.BaseExpression,
        ranked: Sequence[tuple[cst.BaseExpression | None, int]],
    ) -> None:
        """``name = value`` under the rank tests ``ranked`` ((test, arm), outermost first).

        Only the shape `flag = <bool>` outside any rank test, then `flag = <the
        other bool>` under exactly one, makes a predicate; any other
        assignment forgets what was known of the name.
        """
        self.predicates.pop(name, None)
        literal = (
            value.value == "True"
            if isinstance(value, cst.Name) and value.value in ("True", "False")
            else None
        )
        if literal is None or len(ranked) > 1:
            self.literals.pop(name, None)
            return
        if not ranked:
            self.literals[name] = literal
            return
        test, arm = ranked[0]
        if self.literals.pop(name, None) == (not literal):
            # In the arm the flag takes `literal`; everywhere else its default.
            self.predicates[name] = (test, (arm == 1) != (not literal))


# Comparison operators and (the operator both sides are keyed by, whether
# this one is the opposite side).
_SIDES: dict[type[cst.BaseCompOp], tuple[str, bool]] = {
    cst.Equal: ("==", False),
    cst.NotEqual: ("==", True),
    cst.Is: ("is", False),
    cst.IsNot: ("is", True),
    cst.In: ("in", False),
    cst.NotIn: ("in", True),
}


def side_of(test: cst.BaseExpression) -> tuple[str, bool]:
    """(a key a test shares with its opposite, whether it is the opposite side).

    ``rank == 0`` / ``rank != 0``, ``x is None`` / ``x is not None`` and ``c`` /
    ``not c`` share their key.
    """
    negated = False
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, negated = test.expression, not negated
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        side = _SIDES.get(type(target.operator))
        if side is not None:
            key = f"{_text(test.left)} {side[0]} {_text(target.comparator)}"
            return key, negated != side[1]
    return _text(test), negated


def _opposite(first: tuple[str, bool], second: tuple[str, bool]) -> bool:
    """Whether two sides (see side_of) are a test and its opposite."""
    return first[0] == second[0] and first[1] != second[1]


def _text(node: cst.CSTNode) -> str:
    # (Keys are only compared with each other: any joiner does; not mutated.)
    return " ".join(source_text(node).split())  # pragma: no mutate


@dataclass(frozen=True, slots=True)
class _Side:
    depth: int  # enclosing tests of the `if`
    test: cst.BaseExpression
    value: cst.BaseExpression  # the expression assigned
    taint: Taint


@dataclass(slots=True)
class ComplementaryAssignments:
    """Names given one value under a rank test, then the same under its opposite.

    ``if rank == 0: store = Store(path)``, later ``if rank != 0: store =
    Store(path)`` (composer's object stores): every rank holds that value, so
    the tests do not make it rank-dependent. Keyed by (id of the environment,
    name); one instance per function.
    """

    sides: dict[tuple[int, str], _Side] = field(default_factory=dict)

    def ended_all(
        self,
        values: dict[tuple[int, str], tuple[dict[str, Taint], str, cst.BaseExpression]],
        depth: int,
        test: cst.BaseExpression,
    ) -> dict[tuple[int, str], Taint]:
        """The taint of each slot that the one-armed ``if test:`` at ``depth``
        completes; ``values`` maps the slots it assigned to (environment, name,
        value assigned)."""
        complete: dict[tuple[int, str], Taint] = {}
        for slot, (env, name, value) in values.items():
            both = self.ended(slot, depth, test, value, env[name])
            if both is not None:
                complete[slot] = both
        return complete

    def ended(
        self,
        slot: tuple[int, str],
        depth: int,
        test: cst.BaseExpression,
        value: cst.BaseExpression,
        taint: Taint,
    ) -> Taint | None:
        """A one-armed rank test ``if test:`` at ``depth`` assigned ``value`` (taint
        ``taint``) to ``slot``: the name's taint if an earlier opposite test in the
        same block assigned the same value, else None (and this side is kept).

        Sources are compared only when there is an earlier side (rarely).
        """
        earlier = self.sides.pop(slot, None)
        if (
            earlier is not None
            and earlier.depth == depth
            and _opposite(side_of(earlier.test), side_of(test))
            and _text(earlier.value) == _text(value)
        ):
            return earlier.taint | taint
        self.sides[slot] = _Side(depth, test, value, taint)
        return None

    def written(self, slot: tuple[int, str], innermost: cst.BaseExpression | None) -> None:
        """``slot`` is assigned, ``innermost`` the nearest enclosing test: forget its
        side unless that test is the opposite one (whose end then decides)."""
        side = self.sides.get(slot)
        if side is None:
            return
        if innermost is not None and _opposite(side_of(side.test), side_of(innermost)):
            return
        del self.sides[slot]

    def left(self, depth: int) -> None:
        """A block ended with ``depth`` tests still open: the sides recorded inside it
        can no longer be completed (`if a: if rank == 0: ...` then `if b: ...`)."""
        for slot in [slot for slot, side in self.sides.items() if side.depth > depth]:
            del self.sides[slot]
