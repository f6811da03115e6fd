"""Boolean flags that restate a rank test: ``serve = True; if rank > 0: serve = False``.

A later ``if serve:`` is then the same test as ``if rank == 0:`` and is keyed
alike (:meth:`ranklint.analysis.summary.FactsBuilder` asks
:meth:`ranklint.analysis.rank.RankTaint.predicate`), so that a nested test of
the rank inside ``if serve: ... else:`` is decided by its enclosing arm.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import libcst as cst


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
