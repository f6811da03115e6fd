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
from collections.abc import Callable, Iterator, Sequence

import libcst as cst

from ranklint.analysis.walk.constants import bindings
from ranklint.syntax import block_statements, iter_nodes, parameter_names, suite_statements

_DICT_MUTATORS = r"\.(?:update|pop|setdefault|clear|popitem)\("


def single_definitions(
    function: cst.FunctionDef | cst.Lambda,
    text: str | Callable[[], str],
    *,
    walrus: bool = True,
) -> dict[str, cst.BaseExpression]:
    """Name -> value of each name ``function`` binds exactly once, in a plain
    assignment. ``text``: the function's source, or how to make it (made only
    where a dict is bound once: making it costs a code generation); ``walrus``:
    False where the file's text holds no ``:=`` (its search is skipped)."""
    if not isinstance(function, cst.FunctionDef):
        return {}
    counts = binding_counts(function)
    # (The gate only saves the search: a file without `:=` has no target; not mutated.)
    walrus_targets = {
        node.target.value
        for node in (iter_nodes(function.body) if walrus else ())  # pragma: no mutate
        if isinstance(node, cst.NamedExpr) and isinstance(node.target, cst.Name)
    }
    found: dict[str, cst.BaseExpression] = {}
    for name, value in _assignments(suite_statements(function.body)):
        if counts[name] != 1 or name in walrus_targets:
            continue
        if isinstance(value, cst.Dict):
            if not isinstance(text, str):
                text = text()
            if _changed(name, text):
                continue
        found[name] = value
    return found


def binding_counts(function: cst.FunctionDef) -> Counter[str]:
    """How many times ``function`` binds each name: parameters, assignments, loop
    targets, imports... anywhere in its body (a `global` declaration binds nothing)."""
    statements = suite_statements(function.body)
    counts = Counter(bindings(statements))
    counts.update(parameter_names(function))
    # `global _ME` then `_ME = dist.get_rank()`: the declaration binds nothing itself.
    counts.subtract(declared_global(statements))
    return counts


def _changed(name: str, text: str) -> bool:
    """Whether ``text`` assigns or deletes a key of the dict ``name``, or calls one
    of its mutating methods."""
    escaped = re.escape(name)
    keyed = rf"\b{escaped}\s*\[[^\]\n]*\]\s*(?:=(?!=)|[-+*/|&]=)|\bdel\s+{escaped}\s*\["
    return bool(re.search(rf"{keyed}|\b{escaped}{_DICT_MUTATORS}", text))


def attribute_definitions(module: cst.Module) -> dict[str, cst.BaseExpression]:
    """Attribute -> value of each ``self.<attribute>`` that the methods of the
    module's classes assign exactly once, in a plain assignment (``self.pg =
    dist.new_group()`` in ``__init__``), and nowhere else. Two classes that assign
    the same attribute name cancel each other out. Read from statements only."""
    counts: Counter[str] = Counter()
    found: dict[str, cst.BaseExpression] = {}
    for statement in _class_methods(module.body):
        for name, value in _self_assignments(statement):
            counts[name] += 1
            if value is not None:
                found[name] = value
    return {name: value for name, value in found.items() if counts[name] == 1}


def _class_methods(statements: Sequence[cst.BaseStatement]) -> Iterator[cst.BaseStatement]:
    """The statements of the methods of the classes among ``statements`` (nested too)."""
    for statement in statements:
        if isinstance(statement, cst.ClassDef):
            for member in suite_statements(statement.body):
                if isinstance(member, cst.FunctionDef):
                    yield from flattened(suite_statements(member.body))
                elif isinstance(member, cst.ClassDef):
                    yield from _class_methods([member])
        elif isinstance(statement, cst.BaseCompoundStatement) and not isinstance(
            statement, cst.FunctionDef
        ):
            yield from _class_methods(block_statements(statement))


def flattened(statements: Sequence[cst.BaseStatement]) -> Iterator[cst.BaseStatement]:
    """``statements`` and those of their blocks, nested functions' bodies left out."""
    for statement in statements:
        yield statement
        if isinstance(statement, cst.BaseCompoundStatement) and not isinstance(
            statement, (cst.FunctionDef, cst.ClassDef)
        ):
            yield from flattened(block_statements(statement))


def _self_assignments(
    statement: cst.BaseStatement,
) -> Iterator[tuple[str, cst.BaseExpression | None]]:
    """(attribute, value) of each ``self.x = value`` in a line; (attribute, None)
    for any other binding of ``self.x`` (augmented, annotated, unpacked, deleted)."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return
    for small in statement.body:
        if isinstance(small, cst.Assign):
            plain = len(small.targets) == 1
            for target in small.targets:
                for attribute, whole in _self_targets(target.target):
                    yield attribute, small.value if plain and whole else None
        elif isinstance(small, (cst.AugAssign, cst.AnnAssign, cst.Del)):
            for attribute, _ in _self_targets(small.target):
                yield attribute, None


def self_attribute(node: cst.BaseExpression) -> str | None:
    """``x`` for ``self.x``; None for anything else."""
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
        return node.attr.value if node.value.value == "self" else None
    return None


def _self_targets(target: cst.BaseExpression) -> Iterator[tuple[str, bool]]:
    """(attribute, whether the whole target) of each ``self.x`` a target binds."""
    attribute = self_attribute(target)
    if attribute is not None:
        yield attribute, True
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            for attribute, _ in _self_targets(element.value):
                yield attribute, False


def declared_global(statements: Sequence[cst.BaseStatement]) -> Iterator[str]:
    """The names the function's own ``global`` statements declare (not a nested
    function's)."""
    for statement in flattened(statements):
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Global):
                    yield from (item.name.value for item in small.names)


def _assignments(
    statements: Sequence[cst.BaseStatement],
) -> Iterator[tuple[str, cst.BaseExpression]]:
    """(name, value) of each plain assignment to a name, nested blocks included."""
    for statement in flattened(statements):
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
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
                # (The lengths are equal: `strict` changes nothing, not mutated.)
                pairs = zip(target.elements, value.elements, strict=True)  # pragma: no mutate
                for part, element in pairs:
                    if isinstance(part.value, cst.Name):
                        yield part.value.value, element.value
