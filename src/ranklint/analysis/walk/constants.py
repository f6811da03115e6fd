"""Module flags that never change: ``DEBUG = False`` bound once and never again.

A test of such a flag goes the same way on every run of the module as written:
``if DEBUG and rank == 0: return`` never returns while ``DEBUG`` is ``False``.
The project phase takes each flag's truth as known in the module's own
functions (:mod:`ranklint.analysis.project.divergences`), so that code behind a
flag that is off is not reported as reached by some ranks.

Only a flag that some ``if``/``elif`` test of the module names is looked at;
for those the module's statements (not its expressions) are read once more,
for the names they bind. A name counts
only when the module binds it exactly once, at its top level, to
a literal ``True``, ``False``, ``None`` or integer, and binds it nowhere else in
any scope (no ``global`` rebinding, no parameter, loop target, import or local
of the same name). Another module can still assign ``mod.DEBUG = True``; code
behind such a flag is off as the module is written, which is what is judged.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence

import libcst as cst

from ranklint.syntax import block_statements, iter_nodes, parameter_names

_FLAG_VALUES = {"True": True, "False": False, "None": False}


def module_flags(module: cst.Module, text: str) -> tuple[tuple[str, bool], ...]:
    """(name, truth) of each flag of ``module`` (whose source is ``text``) that nothing
    rebinds, sorted by name."""
    candidates: dict[str, bool] = {}
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            found = _flag_assignment(small)
            if found is not None:
                candidates[found[0]] = found[1]
    # Only a flag some test reads can decide anything: the whole module is read
    # again (for its bindings) only for those, which few files have.
    candidates = {
        name: truth
        for name, truth in candidates.items()
        if re.search(rf"^[ \t]*(?:el)?if\b[^\n]*\b{re.escape(name)}\b", text, re.MULTILINE)
    }
    if not candidates:
        return ()
    bound = Counter(bindings(module.body))
    return tuple(
        sorted(
            (name, truth)
            for name, truth in candidates.items()
            if bound[name] == 1 and not re.search(rf"\b{re.escape(name)}\s*:=", text)
        )
    )


def _flag_assignment(node: cst.BaseSmallStatement) -> tuple[str, bool] | None:
    """``NAME = <flag literal>`` (or annotated): the name and the literal's truth."""
    if isinstance(node, cst.Assign) and len(node.targets) == 1:
        target, value = node.targets[0].target, node.value
    elif isinstance(node, cst.AnnAssign) and node.value is not None:
        target, value = node.target, node.value
    else:
        return None
    if not isinstance(target, cst.Name):
        return None
    if isinstance(value, cst.Name) and value.value in _FLAG_VALUES:
        return target.value, _FLAG_VALUES[value.value]
    if isinstance(value, cst.Integer):
        return target.value, int(value.value, 0) != 0
    return None


def bindings(statements: Sequence[cst.BaseStatement]) -> Iterator[str]:
    """The names ``statements`` bind, or declare global (which lets a function rebind
    them), read from the statements alone: a comprehension's targets are its own."""
    for statement in statements:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                yield from _small_bindings(small)
            continue
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            yield statement.name.value
        if isinstance(statement, cst.FunctionDef):
            yield from parameter_names(statement)
        elif isinstance(statement, cst.For):
            yield from _target_names(statement.target)
        elif isinstance(statement, cst.With):
            for item in statement.items:
                if item.asname is not None:
                    yield from _target_names(item.asname.name)
        elif isinstance(statement, cst.Match):
            for case in statement.cases:
                yield from _captures(case.pattern)
        elif isinstance(statement, cst.Try):
            for handler in statement.handlers:
                if handler.name is not None:
                    yield from _target_names(handler.name.name)
        if isinstance(statement, cst.BaseCompoundStatement):
            yield from bindings(block_statements(statement))


def _captures(pattern: cst.MatchPattern) -> Iterator[str]:
    """The names a `case` pattern binds (`[x, *rest]`, `{**extra}`, `int() as n`)."""
    for node in iter_nodes(pattern):
        if isinstance(node, (cst.MatchAs, cst.MatchStar)):
            name = node.name
        elif isinstance(node, cst.MatchMapping):
            name = node.rest
        else:
            continue
        if name is not None:
            yield name.value


def _small_bindings(small: cst.BaseSmallStatement) -> Iterator[str]:
    if isinstance(small, cst.Assign):
        for target in small.targets:
            yield from _target_names(target.target)
    elif isinstance(small, (cst.AnnAssign, cst.AugAssign, cst.Del)):
        yield from _target_names(small.target)
    elif isinstance(small, (cst.Global, cst.Nonlocal)):
        yield from (item.name.value for item in small.names)
    elif isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(
        small.names, cst.ImportStar
    ):
        for alias in small.names:
            if alias.asname is not None:
                yield from _target_names(alias.asname.name)
            else:
                yield alias.evaluated_name.split(".")[0]  # `import a.b` binds `a`


def _target_names(node: cst.BaseExpression) -> list[str]:
    if isinstance(node, cst.Name):
        return [node.value]
    if isinstance(node, (cst.Tuple, cst.List)):
        # An element's value: the name, also for a starred one (`first, *rest = ...`).
        return [name for element in node.elements for name in _target_names(element.value)]
    return []
