"""Object state set under a rank test and read earlier in the class's source order.

The walk reads a class's methods once, in source order, so ``self.last`` read in
``push`` before ``push`` (or a later method) sets it under ``if dist.get_rank()
== 0:`` was clean when read:

    def push(self, step, t):
        if step != self.last:      # rank 0 has moved on; the others have not
            dist.all_reduce(t)
        if dist.get_rank() == 0:
            self.last = step

Before a class body is walked, :func:`late_attributes` finds the attributes its
methods assign under a rank-dependent ``if`` (and not in its ``else``), and the
class's environment holds them at the start of every method: a read of such an
attribute depends on the rank until the method assigns it itself, and an
assignment in another method (the constructor's ``self.last = -1``) does not
make it uniform again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import libcst as cst

from ranklint.model.taint import CLEAN, Taint
from ranklint.syntax import block_statements, suite_statements


class LateEnv(dict[str, Taint]):
    """A class's attribute taints, where the attributes some method sets under a rank
    test depend on the rank again at the start of every method (the state may come
    from any earlier call), until the method assigns them itself."""

    def __init__(self, late: dict[str, Taint]) -> None:
        super().__init__(late)
        self.late = late

    def enter_method(self) -> None:
        for name, taint in self.late.items():
            self[name] = self[name] | taint


def late_attributes(node: cst.ClassDef, taint_of: Callable[[cst.BaseExpression], Taint]) -> LateEnv:
    """The attributes ``node``'s methods assign under a rank-dependent ``if`` test
    (with that test's taint, by ``taint_of``: the walk's, where the class begins),
    as the class's starting environment."""
    late: dict[str, Taint] = {}
    for statement in suite_statements(node.body):
        if not isinstance(statement, cst.FunctionDef):
            continue
        for test, arm, other in _ifs(suite_statements(statement.body)):
            taint = taint_of(test)
            if not taint.rank:
                continue
            for name in _assigned(arm) - _assigned(other):
                late[name] = late.get(name, CLEAN) | taint
    return LateEnv(late)


def _ifs(
    statements: Sequence[cst.BaseStatement],
) -> Iterator[tuple[cst.BaseExpression, list[cst.BaseStatement], list[cst.BaseStatement]]]:
    """Each ``if`` in ``statements`` and the blocks under them (not in nested
    functions or classes): its test, its body, and its ``else``/``elif`` chain."""
    for statement in statements:
        if isinstance(statement, cst.If):
            arm = suite_statements(statement.body)
            other = _orelse(statement)
            yield statement.test, arm, other
            yield from _ifs(arm)
            yield from _ifs(other)
        elif isinstance(statement, (cst.For, cst.While, cst.With, cst.Try)):
            yield from _ifs(block_statements(statement))


def _orelse(statement: cst.If) -> list[cst.BaseStatement]:
    orelse = statement.orelse
    if isinstance(orelse, cst.If):
        return [orelse]
    if isinstance(orelse, cst.Else):
        return suite_statements(orelse.body)
    return []


def _assigned(statements: Sequence[cst.BaseStatement]) -> set[str]:
    """The ``self.`` attributes ``statements`` assign, at any depth of their blocks."""
    names: set[str] = set()
    for statement in statements:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                names.update(_targets(small))
        elif isinstance(statement, (cst.If, cst.For, cst.While, cst.With, cst.Try)):
            names |= _assigned(block_statements(statement))
    return names


def _targets(small: cst.BaseSmallStatement) -> Iterator[str]:
    if isinstance(small, cst.Assign):
        targets = [target.target for target in small.targets]
    elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
        targets = [small.target]
    else:
        return
    for target in targets:
        if (
            isinstance(target, cst.Attribute)
            and isinstance(target.value, cst.Name)
            and target.value.value == "self"
        ):
            yield target.attr.value
