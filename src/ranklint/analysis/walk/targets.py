"""Raw call targets: what a call's callee names, for the project phase to resolve."""

from __future__ import annotations

import builtins

import libcst as cst

from ranklint.analysis.walk.catalog import EXTERNAL_ROOTS
from ranklint.analysis.walk.names import NameTable, dotted_name


def call_target(node: cst.BaseExpression, names: NameTable) -> str | None:
    """A raw, resolvable name for a call's target, or ``None``.

    Imported names resolve to their qualified name (``pkg.utils.save``,
    ``..utils.save`` for relative imports); names defined in this file become
    ``@local:name``; ``self.method`` / ``cls.method`` become ``@self:method``.
    The project phase resolves these against the files of the run.
    """
    if isinstance(node, cst.Name):
        qualified = names.lookup(node.value)
        if qualified is not None:
            return qualified
        built = names.instance_of(node.value)
        if built is not None:
            return f"{built}.__call__"  # `model(x)` of `model = FSDP(...)`
        if node.value in _BUILTINS:
            return None
        return f"@local:{node.value}"
    if isinstance(node, cst.Attribute):
        base = node.value
        if isinstance(base, cst.Name) and base.value in ("self", "cls"):
            return f"@self:{node.attr.value}"
        qualified = names.resolve(node)
        if qualified is not None:
            return qualified
        if isinstance(base, cst.Name):
            built = names.instance_of(base.value)
            if built is not None:
                # ``helper = Helper(...)`` ... ``helper.run()``: a method of that class.
                return f"{built}.{node.attr.value}"
        dotted = dotted_name(node)
        if dotted is not None and "." in dotted:
            # Unresolved, so `head` is no import: a class of this file, maybe.
            head = dotted.partition(".")[0]
            if head not in _BUILTINS and head[:1].isupper():
                # ``Helper.method`` on a class defined in this file.
                return f"@local:{dotted}"
    return None


_BUILTINS = frozenset(dir(builtins))


def is_external(target: str) -> bool:
    """Targets that are certainly not project functions (stdlib, torch, numpy, ...)."""
    # `@local:f`, `@self:f` and relative `.mod.f` never start with a known root.
    return target.partition(".")[0] in EXTERNAL_ROOTS
