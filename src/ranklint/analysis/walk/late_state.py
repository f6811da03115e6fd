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

A module global works alike (:func:`late_globals`): a function that declares
``global _LAST`` and assigns it under a rank test makes ``_LAST`` depend on the
rank at the start of every function the module defines after it is read:

    def push(step, t):
        global _LAST
        if step != _LAST:          # set by an earlier call, on some ranks only
            dist.broadcast(t, src=0)
        if dist.get_rank() > 0:
            _LAST = step
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import libcst as cst

from ranklint.analysis.walk.definitions import declared_global, self_attribute
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
            for name in _assigned(arm, self_attribute) - _assigned(other, self_attribute):
                late[name] = late.get(name, CLEAN) | taint
    return LateEnv(late)


class LateGlobals:
    """The module globals of one file that its functions set under a rank test,
    found at the file's first function (its imports are bound there)."""

    def __init__(self) -> None:
        self._found: dict[str, Taint] | None = None

    def enter_function(
        self,
        env: dict[str, Taint],
        module: cst.Module | None,
        taint_of: Callable[[cst.BaseExpression], Taint],
    ) -> None:
        """A function begins: the globals (in ``env``, the module's environment)
        depend on the rank again, as the state may come from any earlier call.
        ``module``: None where the file sets no global in a function."""
        if self._found is None:
            self._found = {} if module is None else late_globals(module, taint_of)
        for name, taint in self._found.items():
            env[name] = env.get(name, CLEAN) | taint


def late_globals(
    module: cst.Module, taint_of: Callable[[cst.BaseExpression], Taint]
) -> dict[str, Taint]:
    """The module globals that a function of ``module`` (or a method of one of its
    classes) declares ``global`` and assigns under a rank-dependent ``if`` test, not
    in its ``else``, with the test's taint (by ``taint_of``: the walk's, where it is
    asked, once the module's imports are bound)."""
    late: dict[str, Taint] = {}
    for function in _functions(module.body):
        statements = suite_statements(function.body)
        declared = set(declared_global(statements))
        if not declared:
            continue
        for test, arm, other in _ifs(statements):
            taint = taint_of(test)
            if not taint.rank:
                continue
            for name in (_assigned(arm, _name) - _assigned(other, _name)) & declared:
                late[name] = late.get(name, CLEAN) | taint
    return late


def _functions(statements: Sequence[cst.BaseStatement]) -> Iterator[cst.FunctionDef]:
    """The functions ``statements`` define, and the methods of the classes they define."""
    for statement in statements:
        if isinstance(statement, cst.FunctionDef):
            yield statement
        elif isinstance(statement, cst.ClassDef):
            yield from _functions(suite_statements(statement.body))
        elif isinstance(statement, (cst.If, cst.Try)):
            yield from _functions(block_statements(statement))


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


def _assigned(
    statements: Sequence[cst.BaseStatement], named: Callable[[cst.BaseExpression], str | None]
) -> set[str]:
    """The names ``statements`` assign, at any depth of their blocks, as ``named``
    reads an assignment's target (a ``self.`` attribute, or a plain name)."""
    names: set[str] = set()
    for statement in statements:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                names.update(n for t in _targets(small) if (n := named(t)) is not None)
        elif isinstance(statement, (cst.If, cst.For, cst.While, cst.With, cst.Try)):
            names |= _assigned(block_statements(statement), named)
    return names


def _targets(small: cst.BaseSmallStatement) -> list[cst.BaseExpression]:
    if isinstance(small, cst.Assign):
        return [target.target for target in small.targets]
    if isinstance(small, (cst.AugAssign, cst.AnnAssign)):
        return [small.target]
    return []


def _name(target: cst.BaseExpression) -> str | None:
    # (Another target's `.value` is a node, never a declared name; not mutated.)
    return target.value if isinstance(target, cst.Name) else None  # pragma: no mutate
