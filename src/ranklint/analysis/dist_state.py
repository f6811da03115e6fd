"""Reads of distributed state: the caller's rank, the world size, whether a group exists.

Such a read is only as good as the moment it runs. At import, ``RANK`` may be
unset (``mp.spawn`` children, custom launchers, a later
``init_process_group`` with ``init_method="tcp://..."``), and
``dist.get_rank() if dist.is_initialized() else 0`` answers 0 on every rank
before the group is created. :func:`state_read` says whether an expression
reads that state, directly or through a module-level helper of the same file
(:func:`state_helpers`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

import libcst as cst

from ranklint.analysis.catalog import RANK_ENVIRONMENT
from ranklint.analysis.literals import string_value
from ranklint.analysis.names import dotted_name

Resolve = Callable[[cst.BaseExpression], "str | None"]

# Environment variables a launcher sets per process: the rank and the job's size.
DISTRIBUTED_ENVIRONMENT: frozenset[str] = RANK_ENVIRONMENT | frozenset(
    {
        "WORLD_SIZE",
        "LOCAL_WORLD_SIZE",
        "GROUP_WORLD_SIZE",
        "SLURM_NTASKS",
        "OMPI_COMM_WORLD_SIZE",
        "OMPI_COMM_WORLD_LOCAL_SIZE",
        "PMI_SIZE",
    }
)
_DIST = "torch.distributed"
# Queries of the process group's state.
STATE_QUERIES: frozenset[str] = frozenset(
    name
    for query in ("get_rank", "get_world_size", "is_initialized", "get_node_local_rank")
    for name in (f"{_DIST}.{query}", f"{_DIST}.distributed_c10d.{query}")
) | frozenset({"deepspeed.comm.get_rank", "deepspeed.comm.get_world_size"})
_INITIALIZED = frozenset({f"{_DIST}.is_initialized", f"{_DIST}.distributed_c10d.is_initialized"})
_RANK_QUERIES = frozenset({f"{_DIST}.get_rank", f"{_DIST}.distributed_c10d.get_rank"})
_ENVIRON = frozenset({"os.environ"})
_GETENV = frozenset({"os.getenv", "os.environ.get"})
INIT_CALLS: frozenset[str] = frozenset(
    {f"{_DIST}.init_process_group", "deepspeed.init_distributed"}
)


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def walk_code(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Nodes under ``node`` that run with it: not the bodies of functions or lambdas."""
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, (cst.FunctionDef, cst.Lambda)):
            continue
        stack.extend(reversed(current.children))


def _environment_key(node: cst.CSTNode, resolve: Resolve) -> str | None:
    """``K`` of ``os.environ[K]``, ``os.environ.get(K)``, ``os.getenv(K)``, ``K in os.environ``."""
    if isinstance(node, cst.Subscript) and resolve(node.value) in _ENVIRON:
        elements = node.slice
        if len(elements) == 1 and isinstance(elements[0].slice, cst.Index):
            return string_value(elements[0].slice.value)
    if isinstance(node, cst.Call) and resolve(node.func) in _GETENV and node.args:
        return string_value(node.args[0].value)
    if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
        target = node.comparisons[0]
        if isinstance(target.operator, cst.In) and resolve(target.comparator) in _ENVIRON:
            return string_value(node.left)
    return None


def state_read(
    node: cst.CSTNode, resolve: Resolve, helpers: Mapping[str, str] | None = None
) -> str | None:
    """How ``node`` reads distributed state (``os.environ["RANK"]``), or ``None``."""
    for current in walk_code(node):
        key = _environment_key(current, resolve)
        if key is not None and key in DISTRIBUTED_ENVIRONMENT:
            return _code(current)
        if not isinstance(current, cst.Call):
            continue
        if resolve(current.func) in STATE_QUERIES:
            return _code(current)
        name = dotted_name(current.func)
        if helpers and name in helpers:
            return f"{_code(current)}, which reads {helpers[name]}"
    return None


def _module_functions(module: cst.Module) -> Iterator[cst.FunctionDef]:
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef):
            yield statement


def state_helpers(module: cst.Module, resolve: Resolve) -> dict[str, str]:
    """Module-level functions of ``module`` whose own code reads distributed state."""
    helpers: dict[str, str] = {}
    for function in _module_functions(module):
        read = state_read(function.body, resolve) or _environment_by_name(function, resolve)
        if read is not None:
            helpers[function.name.value] = read
    return helpers


def _environment_by_name(function: cst.FunctionDef, resolve: Resolve) -> str | None:
    """``for key in ("RANK", "LOCAL_RANK"): ... os.environ[key]``: keys apart from the read."""
    keys = [
        text
        for node in walk_code(function.body)
        if (text := string_value(node) if isinstance(node, cst.SimpleString) else None)
        in DISTRIBUTED_ENVIRONMENT
    ]
    reads = any(
        isinstance(node, (cst.Name, cst.Attribute)) and resolve(node) in _ENVIRON
        for node in walk_code(function.body)
    )
    return f"os.environ[{keys[0]!r}]" if keys and reads else None


def fallback_helpers(module: cst.Module, resolve: Resolve) -> set[str]:
    """Functions that read the rank only once a group exists, else assume a default.

    ``rank = dist.get_rank() if dist.is_initialized() else 0``: called before
    ``init_process_group``, every rank takes the default and acts as rank 0.
    """
    found: set[str] = set()
    for function in _module_functions(module):
        body = function.body
        called = {resolve(node.func) for node in walk_code(body) if isinstance(node, cst.Call)}
        environment = any(
            _environment_key(node, resolve) in RANK_ENVIRONMENT for node in walk_code(body)
        )
        if called & _INITIALIZED and called & _RANK_QUERIES and not environment:
            found.add(function.name.value)
    return found


def initialises(node: cst.CSTNode, resolve: Resolve) -> bool:
    """Whether ``node``'s own code creates the default process group."""
    return any(
        isinstance(current, cst.Call) and resolve(current.func) in INIT_CALLS
        for current in walk_code(node)
    )


def _is_main_guard(statement: cst.CSTNode) -> bool:
    if not isinstance(statement, cst.If) or not isinstance(statement.test, cst.Comparison):
        return False
    test = statement.test
    sides = [test.left, *(target.comparator for target in test.comparisons)]
    return any(isinstance(s, cst.Name) and s.value == "__name__" for s in sides) and any(
        string_value(s) == "__main__" for s in sides
    )


def runs_as_script(module: cst.Module, resolve: Resolve) -> bool:
    """A module written to be run, not imported: a ``__main__`` guard or top-level argparse.

    Its module-level code runs once per launched process, after the launcher
    set the environment, so reading the rank there is how scripts start.
    """
    for statement in module.body:
        if _is_main_guard(statement):
            return True
        if isinstance(statement, cst.If):
            continue
        for node in walk_code(statement):
            if isinstance(node, cst.Call) and _is_argument_parser(node.func, resolve):
                return True
    return False


def _is_argument_parser(func: cst.BaseExpression, resolve: Resolve) -> bool:
    # By name too: the module's imports may come later than its first store.
    return resolve(func) == "argparse.ArgumentParser" or dotted_name(func) in (
        "argparse.ArgumentParser",
        "ArgumentParser",
    )
