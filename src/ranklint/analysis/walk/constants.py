"""Module flags that never change: ``DEBUG = False`` bound once and never again.

A test of such a flag goes the same way on every run of the module as written:
``if DEBUG and rank == 0: return`` never returns while ``DEBUG`` is ``False``.
The project phase takes each flag's truth as known in the module's own
functions (:mod:`ranklint.analysis.project.divergences`), so that code behind a
flag that is off is not reported as reached by some ranks.

Only a flag that some ``if``/``elif`` test of the module names is looked at;
for those the module is read once more, for every name it binds (an
on-demand reading, as ``docs/dev/architecture.md`` lists). A name counts
only when the module binds it exactly once, at its top level, to
a literal ``True``, ``False``, ``None`` or integer, and binds it nowhere else in
any scope (no ``global`` rebinding, no parameter, loop target, import or local
of the same name). Another module can still assign ``mod.DEBUG = True``; code
behind such a flag is off as the module is written, which is what is judged.
"""

from __future__ import annotations

import re
from collections import Counter

import libcst as cst

from ranklint.syntax import iter_nodes

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
    bound = Counter(name for node in iter_nodes(module) for name in _bound_names(node))
    return tuple(sorted((name, truth) for name, truth in candidates.items() if bound[name] == 1))


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


def _bound_names(node: cst.CSTNode) -> list[str]:
    """The names ``node`` binds (or declares global, which lets a function rebind them)."""
    if isinstance(node, cst.AssignTarget):
        return _target_names(node.target)
    if isinstance(node, (cst.AnnAssign, cst.AugAssign)):
        return _target_names(node.target)
    if isinstance(node, (cst.For, cst.CompFor)):
        return _target_names(node.target)
    if isinstance(node, (cst.AsName, cst.NamedExpr)):
        return _target_names(node.name if isinstance(node, cst.AsName) else node.target)
    if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Param)):
        return [node.name.value]
    if isinstance(node, cst.ImportAlias) and node.asname is None:
        return [node.evaluated_name.split(".")[0]]  # `import a.b` binds `a`
    if isinstance(node, (cst.Global, cst.Nonlocal)):
        return [item.name.value for item in node.names]
    if isinstance(node, cst.Del):
        return _target_names(node.target)
    return []


def _target_names(node: cst.BaseExpression) -> list[str]:
    if isinstance(node, cst.Name):
        return [node.value]
    if isinstance(node, (cst.Tuple, cst.List)):
        # An element's value: the name, also for a starred one (`first, *rest = ...`).
        return [name for element in node.elements for name in _target_names(element.value)]
    return []
