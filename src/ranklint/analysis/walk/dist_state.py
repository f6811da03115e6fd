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

import keyword
from collections.abc import Callable, Iterator

import libcst as cst

from ranklint.analysis.walk.catalog import RANK_ENVIRONMENT, torch_distributed
from ranklint.analysis.walk.guards import is_main_guard
from ranklint.analysis.walk.literals import string_value
from ranklint.analysis.walk.names import dotted_name
from ranklint.source import file_name
from ranklint.syntax import iter_nodes, source_text

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
# Queries of the process group's state.
STATE_QUERIES: frozenset[str] = frozenset(
    name
    for query in ("get_rank", "get_world_size", "is_initialized", "get_node_local_rank")
    for name in torch_distributed(query)
) | frozenset({"deepspeed.comm.get_rank", "deepspeed.comm.get_world_size"})
_INITIALIZED = torch_distributed("is_initialized")
_RANK_QUERIES = torch_distributed("get_rank")
_ENVIRON = frozenset({"os.environ"})
_GETENV = frozenset({"os.getenv", "os.environ.get"})
INIT_CALLS: frozenset[str] = frozenset(
    {"torch.distributed.init_process_group", "deepspeed.init_distributed"}
)


def walk_code(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Nodes under ``node`` that run with it: not the bodies of functions or lambdas."""
    return iter_nodes(node, into_functions=False)


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
    node: cst.CSTNode, resolve: Resolve, helpers: ModuleHelpers | None = None
) -> str | None:
    """How ``node`` reads distributed state (``os.environ["RANK"]``), or ``None``."""
    for current in walk_code(node):
        key = _environment_key(current, resolve)
        if key is not None and key in DISTRIBUTED_ENVIRONMENT:
            return source_text(current)
        if not isinstance(current, cst.Call):
            continue
        if resolve(current.func) in STATE_QUERIES:
            return source_text(current)
        name = dotted_name(current.func)
        read = helpers.read(name) if helpers is not None and name is not None else None
        if read is not None:
            return f"{source_text(current)}, which reads {read}"
    return None


class ModuleHelpers:
    """The module-level functions of one module, each read only when asked about.

    ``read(name)``: what a helper's own code reads of distributed state;
    ``falls_back(name)``: whether it reads the rank only once a group exists
    and assumes a default otherwise (``dist.get_rank() if
    dist.is_initialized() else 0``): called before ``init_process_group``,
    every rank takes the default and acts as rank 0.
    """

    def __init__(self, module: cst.Module, resolve: Resolve) -> None:
        self.resolve = resolve
        self.functions = {
            statement.name.value: statement
            for statement in module.body
            if isinstance(statement, cst.FunctionDef)
        }
        self._reads: dict[str, str | None] = {}
        self._fallbacks: dict[str, bool] = {}

    def read(self, name: str) -> str | None:
        if name not in self._reads:
            function = self.functions.get(name)
            self._reads[name] = None
            if function is not None:
                self._reads[name] = state_read(function.body, self.resolve) or (
                    _environment_by_name(function, self.resolve)
                )
        return self._reads[name]

    def falls_back(self, name: str) -> bool:
        if name not in self._fallbacks:
            function = self.functions.get(name)
            self._fallbacks[name] = function is not None and _falls_back(function, self.resolve)
        return self._fallbacks[name]


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


def _falls_back(function: cst.FunctionDef, resolve: Resolve) -> bool:
    body = function.body
    called = {resolve(node.func) for node in walk_code(body) if isinstance(node, cst.Call)}
    environment = any(
        _environment_key(node, resolve) in RANK_ENVIRONMENT for node in walk_code(body)
    )
    return bool(called & _INITIALIZED and called & _RANK_QUERIES) and not environment


def is_init_call(node: cst.Call, resolve: Resolve) -> bool:
    """``init_process_group(...)`` / ``deepspeed.init_distributed()``."""
    return resolve(node.func) in INIT_CALLS


def _is_main_guard(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.If) and is_main_guard(statement.test)


def runs_as_script(module: cst.Module, resolve: Resolve, path: str | None = None) -> bool:
    """A module written to be run, not imported.

    Its module-level code runs once per launched process, after the launcher
    set the environment, so reading the rank there is how scripts start. What
    says so: a ``__main__`` guard or top-level argparse; a file name no
    ``import`` can name (``test-t5.py``, run as ``deepspeed test-t5.py``);
    module-level code that ends the program (``sys.exit()``) or trains
    (``loss.backward()``), which no module imported as a library does.
    """
    if path is not None and not _importable(path):
        return True
    for statement in module.body:
        if _is_main_guard(statement):
            return True
        guarded = isinstance(statement, cst.If)
        for node in walk_code(statement):
            if not isinstance(node, cst.Call):
                continue
            if not guarded and _is_argument_parser(node.func, resolve):
                return True
            if _runs_the_program(node, resolve):
                return True
    return False


# Calls that only a program makes at its top level: ending the process, a
# backward pass.
_PROGRAM_EXITS = frozenset({"sys.exit", "os._exit", "exit", "quit"})


def _runs_the_program(node: cst.Call, resolve: Resolve) -> bool:
    func = node.func
    if isinstance(func, cst.Attribute) and func.attr.value == "backward":
        return True
    return (resolve(func) or dotted_name(func)) in _PROGRAM_EXITS


def _importable(path: str) -> bool:
    """Whether ``import`` can name the file: its stem is an identifier (a name
    that is no ``.py`` file, such as standard input's, may be anything)."""
    name = file_name(path)
    if not name.endswith(".py"):
        return True
    stem = name.removesuffix(".py")
    return stem.isidentifier() and not keyword.iskeyword(stem)


def _is_argument_parser(func: cst.BaseExpression, resolve: Resolve) -> bool:
    # By name too: the module's imports may come later than its first store.
    return resolve(func) == "argparse.ArgumentParser" or dotted_name(func) in (
        "argparse.ArgumentParser",
        "ArgumentParser",
    )
