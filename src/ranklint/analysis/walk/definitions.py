"""Names a function binds exactly once, and the value they are bound to.

A test of such a name restates the value: ``me = dist.get_rank()`` then ``if me
== 0:`` tests the global rank; ``x = 1 if rank == 0 else 0`` then ``if x:`` (or
``if x == 1:``) tests ``rank == 0``; ``flags = {"main": rank == 0}`` then ``if
flags["main"]:`` too. :func:`ranklint.analysis.walk.membership.rank_test` reads
through them to the test of the rank itself.

A name counts only when the function binds it once, in one plain assignment
(``name = value``, or one element of ``a, b = x, y``), and nowhere else: no
parameter, loop target, augmented assignment, ``:=`` nor nested function
binding the same name. A module global the function declares (``global _ME``)
counts when the function binds it once (a call between that binding and the
test could rebind it elsewhere: not followed). A dict counts only when no
statement assigns or deletes one of its keys and no ``update``/``pop``/``setdefault``/``clear``/
``popitem`` call names it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence

import libcst as cst

from ranklint.analysis.walk.constants import bindings
from ranklint.syntax import block_statements

_DICT_MUTATORS = r"\.(?:update|pop|setdefault|clear|popitem)\("


def single_definitions(
    function: cst.FunctionDef | cst.Lambda, text: str
) -> dict[str, cst.BaseExpression]:
    """Name -> value of each name ``function`` (whose source is ``text``) binds
    exactly once, in a plain assignment."""
    if not isinstance(function, cst.FunctionDef):
        return {}
    statements = list(function.body.body) if isinstance(function.body, cst.IndentedBlock) else []
    params = function.params
    counts = Counter(bindings(statements))
    # `global _ME` then `_ME = dist.get_rank()`: the declaration binds nothing itself.
    counts.subtract(_declared_global(statements))
    counts.update(
        param.name.value
        for param in (*params.posonly_params, *params.params, *params.kwonly_params)
    )
    stars = (params.star_arg, params.star_kwarg)
    counts.update(star.name.value for star in stars if isinstance(star, cst.Param))
    found: dict[str, cst.BaseExpression] = {}
    for name, value in _assignments(statements):
        if counts[name] != 1 or re.search(rf"\b{re.escape(name)}\s*:=", text):
            continue
        if isinstance(value, cst.Dict) and _changed(name, text):
            continue
        found[name] = value
    return found


def _changed(name: str, text: str) -> bool:
    """Whether ``text`` assigns or deletes a key of the dict ``name``, or calls one
    of its mutating methods."""
    escaped = re.escape(name)
    keyed = rf"\b{escaped}\s*\[[^\]\n]*\]\s*(?:=(?!=)|[-+*/|&]=)|\bdel\s+{escaped}\s*\["
    return bool(re.search(rf"{keyed}|\b{escaped}{_DICT_MUTATORS}", text))


def _declared_global(statements: Sequence[cst.BaseStatement]) -> Iterator[str]:
    """The names the function's own ``global`` statements declare (not a nested
    function's)."""
    for statement in statements:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Global):
                    yield from (item.name.value for item in small.names)
        elif isinstance(statement, cst.BaseCompoundStatement) and not isinstance(
            statement, (cst.FunctionDef, cst.ClassDef)
        ):
            yield from _declared_global(block_statements(statement))


def _assignments(
    statements: Sequence[cst.BaseStatement],
) -> Iterator[tuple[str, cst.BaseExpression]]:
    """(name, value) of each plain assignment to a name, nested blocks included."""
    for statement in statements:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if not isinstance(small, cst.Assign) or len(small.targets) != 1:
                    continue
                target, value = small.targets[0].target, small.value
                if isinstance(target, cst.Name):
                    yield target.value, value
                elif (
                    isinstance(target, (cst.Tuple, cst.List))
                    and isinstance(value, (cst.Tuple, cst.List))
                    and len(target.elements) == len(value.elements)
                    and not any(
                        isinstance(element, cst.StarredElement)
                        for element in (*target.elements, *value.elements)
                    )
                ):
                    for part, element in zip(target.elements, value.elements, strict=True):
                        if isinstance(part.value, cst.Name):
                            yield part.value.value, element.value
        elif isinstance(statement, cst.BaseCompoundStatement) and not isinstance(
            statement, (cst.FunctionDef, cst.ClassDef)
        ):
            yield from _assignments(block_statements(statement))
