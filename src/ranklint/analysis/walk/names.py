"""Which local names mean which imported things, tracked in the one traversal.

A purpose-built, forward-flow model of Python's scopes: imports bind a local
name to a qualified name (``import torch.distributed as dist`` binds ``dist``
to ``torch.distributed``); any other binding of the name (assignment, ``def``,
parameter, loop target, ...) shadows it, so the name no longer means the
imported thing. It is far cheaper than libcst's ScopeProvider and
QualifiedNameProvider and answers the one question rules ask: "what does this
call target name?".

Known limits (documented, deliberate): bindings are seen in source order, so a
function body sees the module's bindings as they stand where the function is
defined; ``global``/``nonlocal`` are not followed; match-pattern captures do
not shadow.
"""

from __future__ import annotations

import enum
import fnmatch
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypeGuard

import libcst as cst

from ranklint.analysis.walk.catalog import (
    ACCELERATE_PREPARED,
    DEEPSPEED_ENGINE,
    DEEPSPEED_INITIALIZE,
    WRAPPER_GROUP_KEYWORDS,
    is_metric_class,
)


class ScopeKind(enum.Enum):
    MODULE = "module"
    CLASS = "class"
    FUNCTION = "function"
    COMPREHENSION = "comprehension"


@dataclass
class Scope:
    kind: ScopeKind
    # local name -> qualified name of the imported thing, or None when the
    # name is bound to something ranklint does not know (it shadows imports).
    bindings: dict[str, str | None] = field(default_factory=dict)
    # Modules of ``from M import *`` in this scope, in order.
    star_modules: list[str] = field(default_factory=list)
    # local name -> raw target of the class it was last built from
    # (``x = Helper(...)``: ``pkg.mod.Helper`` or ``@local:Helper``).
    instances: dict[str, str] = field(default_factory=dict)


def dotted_name(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a chain of names and attributes, else ``None``."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def last_name(node: cst.BaseExpression) -> str | None:
    """The last identifier of a name, attribute or call (``self.model.forward(x)``: forward)."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    if isinstance(node, cst.Call):
        return last_name(node.func)
    return None


# Keywords that, set to False, keep what the catalog counts as a collective local:
# DDP's buffer broadcast in its forward (torch 2.13 names `broadcast_buffers`
# `forward_sync_buffers`; measured: a rank-0-only forward then completes), and a
# torchmetrics metric's gather in compute().
_NO_SYNC_KEYWORDS = frozenset({"broadcast_buffers", "forward_sync_buffers", "sync_on_compute"})
# Wrapper classes whose calls are collectives on their process group.
_WRAPPERS = frozenset({"FullyShardedDataParallel", "DistributedDataParallel"})


def _is_wrapper(qualified: str | None) -> TypeGuard[str]:
    """Whether ``qualified`` names a data-parallel wrapper class (DDP, FSDP)."""
    return qualified is not None and qualified.rpartition(".")[2] in _WRAPPERS


def imported_modules(node: cst.Import | cst.ImportFrom) -> list[str]:
    """The modules an import statement may load: ``import a.b`` names a.b; ``from .m
    import x`` names .m and .m.x (x may be a submodule)."""
    if isinstance(node, cst.Import):
        return [name for alias in node.names if (name := dotted_name(alias.name)) is not None]
    module = import_from_module(node)
    if isinstance(node.names, cst.ImportStar):
        return [module]
    prefix = module if module.endswith(".") else module + "."
    return [module, *(prefix + name for a in node.names if (name := dotted_name(a.name)))]


def import_from_module(node: cst.ImportFrom) -> str:
    """The module of a ``from`` import, relative dots included (``..pkg.mod``)."""
    dots = "." * len(node.relative)
    if node.module is None:
        return dots
    return dots + (dotted_name(node.module) or "")  # pragma: no mutate  (always a dotted name)


class NameTable:
    """The scope stack of one file during the traversal."""

    def __init__(self) -> None:
        self._scopes: list[Scope] = [Scope(ScopeKind.MODULE)]
        # Module-level functions that return a wrapper they build -> its class
        # (see note_wrapper_maker).
        self._makers: dict[str, str] = {}

    # -- scope structure ---------------------------------------------------
    def push(self, kind: ScopeKind) -> None:
        self._scopes.append(Scope(kind))

    def pop(self) -> None:
        if len(self._scopes) == 1:
            raise RuntimeError("cannot pop the module scope")
        self._scopes.pop()

    @property
    def current_kind(self) -> ScopeKind:
        return self._scopes[-1].kind

    # -- bindings ----------------------------------------------------------
    def bind_import(self, local: str, qualified: str) -> None:
        self._scopes[-1].bindings[local] = qualified

    def bind_other(self, local: str, *, value: cst.BaseExpression | None = None) -> None:
        """Bind ``local`` to something that is not an import.

        ``x = None`` does not shadow an import of ``x``: it is the fallback
        arm of the optional-import idiom (``except ImportError: dist = None``),
        and the name still means the module wherever it is usable.
        """
        scope = self._scopes[-1]
        bindings = scope.bindings
        if (
            isinstance(value, cst.Name)
            and value.value == "None"
            and bindings.get(local) is not None
        ):
            return
        bindings[local] = None
        built = self._constructed_class(value)
        if built is None:
            scope.instances.pop(local, None)
        else:
            scope.instances[local] = built

    def bind_parameter(self, param: cst.Param) -> None:
        """Bind a parameter; one annotated with a data-parallel wrapper's class
        (``model: DistributedDataParallel``) is an instance of it."""
        name = param.name.value
        self.bind_other(name)
        annotation = param.annotation
        qualified = None if annotation is None else self.resolve(annotation.annotation)
        if _is_wrapper(qualified):
            self._scopes[-1].instances[name] = qualified

    def note_wrapper_maker(self, name: str, returned: Iterable[cst.BaseExpression]) -> None:
        """``name``, a module-level function whose body is being entered, returns
        ``returned``: where one builds a data-parallel wrapper (``return DDP(m)``),
        calls of ``name`` below return an instance of it (see analysis.walk.wrapped)."""
        for value in returned:
            built = self._constructed_class(value)
            if _is_wrapper(built):
                self._makers[name] = built
                return

    def built_class(self, value: cst.BaseExpression | None) -> str | None:
        """The class ``value`` builds, as a raw target (see ``_constructed_class``)."""
        return self._constructed_class(value)

    def _constructed_class(self, value: cst.BaseExpression | None) -> str | None:
        """The class ``value`` builds (``Helper(...)``, ``mod.Helper(...)``), as a raw target.

        Only calls of a capitalised name (the class convention) that is not a
        constant (``ALL_CAPS``); an imported one by its qualified name, any
        other plain name as ``@local:`` (a class of this file, maybe).
        """
        if not isinstance(value, cst.Call):
            return None
        if _is_prepare(value):
            return ACCELERATE_PREPARED  # `model = accelerator.prepare(model)`
        func = value.func
        if (
            isinstance(func, cst.Name)
            and func.value in self._makers
            and self.lookup(func.value) is None
            and not self.is_bound_locally(func.value)
        ):
            return self._makers[func.value]  # `model = ddp_wrap(model)`
        name = last_name(func)
        if name is None or not name[:1].isupper():
            return None
        qualified = self.resolve(func)
        if qualified is not None:
            if (_is_wrapper(qualified) or is_metric_class(qualified)) and any(
                arg.keyword is not None and arg.keyword.value in WRAPPER_GROUP_KEYWORDS
                for arg in value.args
            ):
                return None  # on a group of its own (`process_group=`): its members are unknown
            if any(
                arg.keyword is not None
                and arg.keyword.value in _NO_SYNC_KEYWORDS
                and isinstance(arg.value, cst.Name)
                and arg.value.value == "False"
                for arg in value.args
            ):
                return None  # DDP without the buffer broadcast: its forward is local
            return qualified  # `FSDP(model)`: an alias in capitals is still a class
        if isinstance(func, cst.Name) and not name.isupper():
            return f"@local:{func.value}"
        return None

    def _initializes_engine(self, value: cst.BaseExpression | None) -> bool:
        return isinstance(value, cst.Call) and self.resolve(value.func) == DEEPSPEED_INITIALIZE

    def mark_instance(self, name: str, built: str) -> None:
        """``fully_shard(model)``: ``model`` is now an instance of ``built`` (in place)."""
        for scope in self._visible_scopes():
            if name in scope.bindings:
                scope.instances[name] = built
                return

    def instance_of(self, name: str) -> str | None:
        """The class the local ``name`` was built from here, or ``None`` if unknown."""
        for scope in self._visible_scopes():
            if name in scope.bindings:
                return scope.instances.get(name)
        return None

    def bind_target(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        """Bind every name in an assignment target (tuples, lists, starred)."""
        if isinstance(target, cst.Name):
            self.bind_other(target.value, value=value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self.bind_target(element.value, None)
            first = target.elements[0].value if target.elements else None
            if isinstance(first, cst.Name) and self._initializes_engine(value):
                # `engine, optimizer, _, _ = deepspeed.initialize(model=model, ...)`
                self.mark_instance(first.value, DEEPSPEED_ENGINE)
            if isinstance(value, cst.Call) and _is_prepare(value):
                # `model, optimizer = accelerator.prepare(model, optimizer)`: each
                # comes back prepared (only a model has a forward to call).
                for element in target.elements:
                    if isinstance(element.value, cst.Name):
                        self.mark_instance(element.value.value, ACCELERATE_PREPARED)
        # Attribute and subscript targets bind no name. (A starred name is an
        # element of a tuple or list target: `element.value` is the name.)

    def bind_import_statement(self, node: cst.Import | cst.ImportFrom) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = dotted_name(alias.name)
                if full is None:
                    continue  # pragma: no mutate  (import names are always dotted names)
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    self.bind_import(alias.asname.name.value, full)
                else:
                    top = full.partition(".")[0]
                    self.bind_import(top, top)
            return
        module = import_from_module(node)
        if isinstance(node.names, cst.ImportStar):
            self._scopes[-1].star_modules.append(module)
            return
        prefix = module if module.endswith(".") else module + "."
        for alias in node.names:
            name = dotted_name(alias.name)
            if name is None:
                continue  # pragma: no mutate  (import names are always dotted names)
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.bind_import(local, prefix + name)

    def module_imports(self) -> dict[str, str]:
        """Module-level names bound by imports, as they stand now (re-exports)."""
        return {
            local: qualified
            for local, qualified in self._scopes[0].bindings.items()
            if qualified is not None
        }

    # -- lookups -----------------------------------------------------------
    def _visible_scopes(self) -> Iterator[Scope]:
        """The scopes a name here can refer to, innermost first."""
        innermost = len(self._scopes) - 1
        for index in reversed(range(len(self._scopes))):
            scope = self._scopes[index]
            # Class bodies are not visible from the functions nested in them.
            if scope.kind is ScopeKind.CLASS and index != innermost:
                continue
            yield scope

    def lookup(self, name: str) -> str | None:
        """The qualified name ``name`` refers to here, or ``None`` if unknown."""
        for scope in self._visible_scopes():
            if name in scope.bindings:
                return scope.bindings[name]
        star = self._scopes[0].star_modules
        # One wildcard import tells where a free name comes from; several do not.
        if len(star) == 1:
            return f"{star[0]}.{name}"
        return None

    def is_bound(self, name: str) -> bool:
        """Whether ``name`` is bound in a visible scope (it shadows a builtin)."""
        return any(name in scope.bindings for scope in self._visible_scopes())

    def is_bound_locally(self, name: str) -> bool:
        """Whether ``name`` is bound in a function scope (it shadows a module-level name)."""
        return any(
            name in scope.bindings for scope in self._scopes[1:] if scope.kind is ScopeKind.FUNCTION
        )

    def resolve(self, node: cst.BaseExpression) -> str | None:
        """Qualified name of a name or attribute chain, through imports."""
        if isinstance(node, cst.Name):
            return self.lookup(node.value)
        if isinstance(node, cst.Attribute):
            base = self.resolve(node.value)
            return None if base is None else f"{base}.{node.attr.value}"
        return None


class NamePatterns:
    """Glob patterns of identifiers (`rank-names`, `hot-functions`), cached per name."""

    def __init__(self, patterns: Sequence[str]) -> None:
        self.patterns = tuple(patterns)
        joined = "|".join(fnmatch.translate(pattern) for pattern in self.patterns)
        self._regex = re.compile(joined) if joined else None
        self._cache: dict[str, bool] = {}

    def matches(self, name: str) -> bool:
        found = self._cache.get(name)  # pragma: no mutate  (a memo: any miss recomputes)
        if found is None:
            found = self._regex is not None and self._regex.match(name) is not None
            self._cache[name] = found  # pragma: no mutate  (a memo)
        return found


def _is_prepare(call: cst.Call) -> bool:
    """``accelerator.prepare(...)``: a method ``prepare`` of an object named like an accelerator."""
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value != "prepare":
        return False
    # (Any stand-in for a receiver without a name lacks the word: not mutated.)
    receiver = last_name(func.value) or ""  # pragma: no mutate
    return "accelerator" in receiver.lower()
