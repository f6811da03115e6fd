"""What a function's decorators say about it: run on one rank only, still a coroutine."""

from __future__ import annotations

import libcst as cst

from ranklint.analysis.walk.names import NameTable, dotted_name
from ranklint.analysis.walk.targets import call_target

# Decorators that run the function on one rank only (the collective analysis judges its body
# as under `if rank == 0:`).
_RANK_ONLY_DECORATORS = frozenset(
    {
        "rank_zero_only",
        "rank0_only",
        "rank_0_only",
        "on_rank_zero",
        "on_rank0",
        "main_process_only",
        "on_main_process",
        "on_local_main_process",
        "master_only",
        "zero_rank_only",
    }
)
# Decorators that keep an `async def` a coroutine function.
_TRANSPARENT_DECORATORS = frozenset(
    {"staticmethod", "classmethod", "abstractmethod", "override", "final", "wraps"}
)


def rank_only_decorator(node: cst.FunctionDef) -> str | None:
    """``@rank_zero_only`` (as written, with its ``@``) when one decorates ``node``."""
    found = None
    for decorator in node.decorators:
        name = dotted_name(_callee(decorator.decorator))
        if name is not None and _last(name) in _RANK_ONLY_DECORATORS:
            found = "@" + name
    return found


def decorator_targets(node: cst.FunctionDef, names: NameTable) -> tuple[tuple[str, str], ...]:
    """Each decorator of ``node`` as written and its raw call target (the factory's, for
    ``@only_on(0)``), for the project phase to read its wrapper."""
    found = []
    for decorator in node.decorators:
        callee = _callee(decorator.decorator)
        name = dotted_name(callee)
        target = call_target(callee, names)
        if name is not None and target is not None:
            found.append((name, target))
    return tuple(found)


def keeps_coroutine(node: cst.FunctionDef) -> bool:
    """A decorator may turn a coroutine function into something else (`@auto_await`,
    `@sync`): only plain and method-kind decorators keep it one."""
    for decorator in node.decorators:
        name = dotted_name(_callee(decorator.decorator))
        if name is None or _last(name) not in _TRANSPARENT_DECORATORS:
            return False
    return True


def _last(name: str) -> str:
    """The last part of a dotted name (`functools.wraps`: wraps)."""
    return name.rsplit(".", 1)[-1]  # pragma: no mutate  (any maxsplit >= 1 gives the last part)


def _callee(node: cst.BaseExpression) -> cst.BaseExpression:
    return node.func if isinstance(node, cst.Call) else node
