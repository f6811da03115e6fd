"""Which names a module with wildcard imports reads without binding them.

A ``from m import *`` binds names no reader of the module can see. The names
the module's code reads where no scope of it binds them (and that are no
builtins) can only come from such an import; :func:`wildcard_names` finds
them with libcst's scope analysis, which is run only for modules that have a
wildcard import (few do), so its cost stays off the common path.

It also says where that answer is unclear for a reader of the module alone:
a name read from the wildcard that another scope binds, a module-level name
bound only under a condition (the wildcard may give it when the condition
does not hold), a name read only in annotations (which the source module may
define only for type checkers), a private name, a name in a string annotation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import GlobalScope, MetadataWrapper, Scope, ScopeProvider

from ranklint.syntax import suite_statements


@dataclass(frozen=True)
class WildcardNames:
    """What a module's wildcard imports may give it."""

    #: How many ``from m import *`` the module has.
    stars: int
    #: The module binds ``__all__``.
    has_all: bool
    #: The names read where no scope of the module binds them (no builtins, no dunders).
    read: frozenset[str]
    #: Of ``read``, those that another scope of the module binds.
    bound_elsewhere: frozenset[str]
    #: Of ``read``, those read only in annotations.
    annotations_only: frozenset[str]
    #: Names read that only module-level bindings under a condition give (an
    #: ``if``, ``try``, loop or a function's ``global``), and names captured by
    #: ``match`` patterns (whose scopes are not analysed).
    conditional: frozenset[str]
    #: String annotations whose names are not resolved, as written.
    strings: frozenset[str]

    @property
    def unclear(self) -> frozenset[str]:
        """Where a reader of this module alone cannot tell what a wildcard gives it."""
        private = {name for name in self.read if name.startswith("_")}
        return (
            self.bound_elsewhere | self.annotations_only | self.conditional | self.strings
        ) | private


def wildcard_names(module: cst.Module) -> WildcardNames:
    """The names ``module``'s wildcard imports may give it; see :class:`WildcardNames`."""
    # Copied or not, the scopes are the same (skipping the copy saves time).
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)  # pragma: no mutate
    scopes = {scope for scope in wrapper.resolve(ScopeProvider).values() if scope is not None}
    stars = _StarCounter()
    module.visit(stars)
    # A module always has its global scope (the default is never taken).
    global_scope = next(  # pragma: no mutate
        (scope for scope in scopes if isinstance(scope, GlobalScope)), None
    )
    module_level = _bound_names(global_scope)
    elsewhere = set().union(
        *(_bound_names(scope) for scope in scopes if not isinstance(scope, GlobalScope))
    )
    certain = _certainly_bound(module.body) | stars.submodules
    read: set[str] = set()
    outside_annotations: set[str] = set()
    conditional: set[str] = set()
    strings: set[str] = set()
    for scope in scopes:
        for access in scope.accesses:
            node = access.node
            if not isinstance(node, cst.Name):
                if isinstance(node, cst.BaseString) and not access.referents:
                    strings.add(_text(node))
                continue
            name = node.value
            if _is_dunder(name) or name in stars.submodules:
                continue
            referents = access.referents
            if name in stars.captured:
                conditional.add(name)  # scopes of match captures are not analysed
            elif referents:
                places = {type(assignment.scope) for assignment in referents}
                if places == {GlobalScope} and name not in certain:
                    conditional.add(name)
            else:
                read.add(name)
                if not access.is_annotation:
                    outside_annotations.add(name)
    return WildcardNames(
        stars=stars.count,
        has_all="__all__" in module_level,
        read=frozenset(read),
        bound_elsewhere=frozenset(read & elsewhere),
        annotations_only=frozenset(read - outside_annotations),
        conditional=frozenset(conditional),
        strings=frozenset(strings),
    )


def _bound_names(scope: Scope | None) -> set[str]:
    if scope is None:
        return set()
    return {assignment.name for assignment in scope.assignments}


def _is_dunder(name: str) -> bool:
    """``__class__``, ``__name__``, ``__file__``: implicit names no wildcard gives."""
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _text(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)  # pragma: no mutate (any module renders it)


class _StarCounter(cst.CSTVisitor):
    """Counts wildcard imports; collects the submodules ``from .name import *`` binds
    (in a package's ``__init__.py`` the import also binds ``name``), and the names
    ``match`` patterns capture (libcst's scope analysis does not record them)."""

    def __init__(self) -> None:
        self.count = 0
        self.submodules: set[str] = set()
        self.captured: set[str] = set()

    def visit_MatchAs(self, node: cst.MatchAs) -> None:
        if node.name is not None:
            self.captured.add(node.name.value)

    def visit_MatchStar(self, node: cst.MatchStar) -> None:
        if node.name is not None:
            self.captured.add(node.name.value)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if isinstance(node.names, cst.ImportStar):
            self.count += 1
        if len(node.relative) == 1 and node.module is not None:
            module = node.module
            while isinstance(module, cst.Attribute):
                module = module.value
            if isinstance(module, cst.Name):
                self.submodules.add(module.value)
        return False  # pragma: no mutate (an import holds no match pattern)


def _certainly_bound(body: Sequence[cst.BaseStatement]) -> set[str]:
    """The names every run through ``body`` binds (a module's or a block's statements)."""
    bound: set[str] = set()
    for statement in body:
        bound |= _binds_certainly(statement)
    return bound


def _binds_certainly(statement: cst.BaseStatement) -> set[str]:
    if isinstance(statement, cst.SimpleStatementLine):
        binder = _Binder()
        statement.visit(binder)
        return binder.bound
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return {statement.name.value}
    if isinstance(statement, cst.With):
        return _certainly_bound(suite_statements(statement.body))
    if isinstance(statement, cst.If):
        if statement.orelse is None:
            return set()
        other = statement.orelse
        orelse = (
            _binds_certainly(other)
            if isinstance(other, cst.If)
            else _certainly_bound(suite_statements(other.body))
        )
        return _certainly_bound(suite_statements(statement.body)) & orelse
    if isinstance(statement, cst.Try):
        completed = _certainly_bound(suite_statements(statement.body))
        if statement.orelse is not None:
            completed |= _certainly_bound(suite_statements(statement.orelse.body))
        for handler in statement.handlers:
            completed &= _certainly_bound(suite_statements(handler.body))
        if statement.finalbody is not None:
            completed |= _certainly_bound(suite_statements(statement.finalbody.body))
        return completed
    # Loops may run no iteration; a match may match no case; TryStar is rare.
    return set()


class _Binder(cst.CSTVisitor):
    """The names one simple statement binds in its own scope."""

    def __init__(self) -> None:
        self.bound: set[str] = set()

    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            target = alias.asname.name if alias.asname is not None else alias.name
            while isinstance(target, cst.Attribute):
                target = target.value
            self._bind(target)
        return False  # pragma: no mutate (an import holds no other binding)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                self._bind(alias.asname.name if alias.asname is not None else alias.name)
        return False  # pragma: no mutate (an import holds no other binding)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._bind(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target)

    # Not mutated below: a binding inside a lambda or comprehension (a walrus) is
    # in a scope of its own for libcst, so it is unclear either way.
    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False  # pragma: no mutate (its parameters are its own)

    def visit_ListComp(self, node: cst.ListComp) -> bool:
        return False  # pragma: no mutate (comprehension variables are the comprehension's)

    visit_SetComp = visit_ListComp
    visit_DictComp = visit_ListComp
    visit_GeneratorExp = visit_ListComp

    def _bind(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.bound.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind(element.value)
