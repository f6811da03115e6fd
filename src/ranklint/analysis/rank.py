"""Rank-taint: which expressions depend on the calling rank, and on which parallel axis.

A value is *rank-dependent* when ranks of one group can see different values:
``dist.get_rank()``, ``os.environ["LOCAL_RANK"]``, ``mesh["tp"].get_local_rank()``,
``accelerator.is_main_process``, names such as ``rank`` or ``tp_rank``, and
anything computed from them (assignments, comparisons, boolean operators,
subscripts, attribute reads). World size, ``is_initialized()`` and config
values are not. Calls to project functions are left open (``via``): the
project phase decides whether they return a rank value (``is_main()`` that
returns ``get_rank() == 0``).

Axes: ``tp_rank`` varies along the tensor-parallel axis only; ``rank`` along
every axis (``"*"``). A condition on one axis cannot split a group that lies
along another axis: every member of that group sees the same value.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import libcst as cst

from ranklint.analysis.catalog import RANK_ENVIRONMENT, RANK_FUNCTIONS
from ranklint.analysis.literals import string_value
from ranklint.analysis.names import NamePatterns, NameTable, dotted_name

GLOBAL_AXIS = "*"

# Default `rank-names`: names (variables, attributes, called functions) whose
# value is the caller's rank or a predicate on it. `lora_rank`, `matrix_rank`
# and `rank_dim` deliberately do not match.
DEFAULT_RANK_NAMES: tuple[str, ...] = (
    "rank",
    "local_rank",
    "global_rank",
    "node_rank",
    "group_rank",
    "world_rank",
    "my_rank",
    "rank_id",
    "dp_rank",
    "tp_rank",
    "pp_rank",
    "cp_rank",
    "ep_rank",
    "sp_rank",
    "*_parallel_rank",
    "is_main",
    "is_main_*",
    "is_master",
    "is_master_*",
    "is_local_main_process",
    "is_rank_zero",
    "is_rank_0",
    "is_rank0",
    "is_global_zero",
    "is_local_zero",
    "is_world_process_zero",
    "is_local_process_zero",
    "process_index",
    "local_process_index",
    "get_rank",
    "get_local_rank",
    "get_node_local_rank",
    "get_coordinate",
    "get_*_parallel_rank",
    "is_pipeline_first_stage",
    "is_pipeline_last_stage",
)

# Words of an identifier or mesh-dimension name -> parallel axis.
_AXIS_WORDS: dict[str, str] = {
    "tp": "tp",
    "tensor": "tp",
    "dp": "dp",
    "data": "dp",
    "ddp": "dp",
    "fsdp": "dp",
    "hsdp": "dp",
    "replicate": "dp",
    "shard": "dp",
    "pp": "pp",
    "pipeline": "pp",
    "pipe": "pp",
    "stage": "pp",
    "cp": "cp",
    "context": "cp",
    "ep": "ep",
    "expert": "ep",
    "moe": "ep",
    "sp": "sp",
    "sequence": "sp",
    "ulysses": "sp",
}
_WORD_SPLIT = re.compile(r"[_\W\d]+")

# Builtins whose result depends only on their arguments.
_PASS_THROUGH = frozenset(
    {
        "int",
        "str",
        "bool",
        "float",
        "abs",
        "min",
        "max",
        "round",
        "len",
        "divmod",
        "hash",
        "range",
        "enumerate",
        "zip",
        "list",
        "tuple",
        "sorted",
        "reversed",
        "sum",
        "any",
        "all",
    }
)
# torch calls that map a rank given as an argument (not the caller's).
_ARGUMENT_RANK_FUNCTIONS = frozenset(
    {
        "torch.distributed.get_global_rank",
        "torch.distributed.distributed_c10d.get_global_rank",
        "torch.distributed.get_group_rank",
        "torch.distributed.distributed_c10d.get_group_rank",
    }
)


def axes_of_words(words: Iterable[str]) -> frozenset[str]:
    """Parallel axes named by identifier words; ``model`` alone means tp and pp."""
    found: set[str] = set()
    model = False
    for word in words:
        lowered = word.lower()
        axis = _AXIS_WORDS.get(lowered)
        if axis is not None:
            found.add(axis)
        elif lowered == "model":
            model = True
    if model and not found:
        found = {"tp", "pp"}
    return frozenset(found)


def identifier_words(name: str) -> list[str]:
    return [word for word in _WORD_SPLIT.split(name) if word]


def axes_of_expression(node: cst.BaseExpression) -> frozenset[str]:
    """Axes named anywhere in a group or rank expression (names, mesh-dimension strings)."""
    words: list[str] = []
    _collect_words(node, words, depth=0)
    return axes_of_words(words)


def _collect_words(node: cst.CSTNode, words: list[str], depth: int) -> None:
    if depth > 12:
        return
    if isinstance(node, cst.Name):
        words += identifier_words(node.value)
    elif isinstance(node, cst.Attribute):
        _collect_words(node.value, words, depth + 1)
        words += identifier_words(node.attr.value)
    elif isinstance(node, cst.SimpleString):
        words += identifier_words(string_value(node) or "")
    elif isinstance(node, cst.Call):
        _collect_words(node.func, words, depth + 1)
        for arg in node.args:
            if isinstance(arg.value, (cst.SimpleString, cst.Name, cst.Attribute)):
                _collect_words(arg.value, words, depth + 1)
    elif isinstance(node, cst.Subscript):
        _collect_words(node.value, words, depth + 1)
        for element in node.slice:
            if isinstance(element.slice, cst.Index):
                _collect_words(element.slice.value, words, depth + 1)
    elif isinstance(node, (cst.Tuple, cst.List)):
        for element in node.elements:
            _collect_words(element.value, words, depth + 1)


def _rank_axes(name: str) -> frozenset[str]:
    axes = axes_of_words(identifier_words(name))
    return axes if axes else frozenset({GLOBAL_AXIS})


@dataclass(frozen=True, slots=True)
class Taint:
    """How a value depends on the calling rank."""

    rank: bool = False
    # Raw targets of project calls that decide it if they return a rank value.
    via: frozenset[str] = frozenset()
    # Axes the rank value varies along ("*": all); meaningful when rank or via.
    axes: frozenset[str] = frozenset()
    # `rank in ranks`: a subgroup-membership test.
    membership: bool = False
    # Comes from a rank query (`get_rank()`, `os.environ["RANK"]`), not only
    # from a name that looks like a rank (a parameter `rank` may be any rank).
    strong: bool = False

    def __or__(self, other: Taint) -> Taint:
        if other is CLEAN:
            return self
        if self is CLEAN:
            return other
        return Taint(
            self.rank or other.rank,
            self.via | other.via,
            self.axes | other.axes,
            self.membership or other.membership,
            self.strong or other.strong,
        )

    @property
    def possible(self) -> bool:
        """Rank-dependent now, or if one of the ``via`` calls returns a rank value."""
        return self.rank or bool(self.via)


CLEAN = Taint()
_STRONG = Taint(rank=True, axes=frozenset({GLOBAL_AXIS}), strong=True)


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
        dotted = dotted_name(node)
        if dotted is not None and "." in dotted:
            # Unresolved, so `head` is no import: a class of this file, maybe.
            head = dotted.partition(".")[0]
            if head not in _BUILTINS and head[:1].isupper():
                # ``Helper.method`` on a class defined in this file.
                return f"@local:{dotted}"
    return None


_BUILTINS = frozenset(dir(builtins))


class RankTaint:
    """Evaluates the rank-taint of expressions at the current point of the walk.

    Keeps environments of local names (per function, innermost last), of
    ``self.<attr>`` per class, and of module-level names, updated by the walker
    as assignments are seen, in source order.
    """

    def __init__(self, names: NameTable, rank_names: NamePatterns) -> None:
        self.names = names
        self.rank_names = rank_names
        self._module_env: dict[str, Taint] = {}
        self._function_envs: list[dict[str, Taint]] = []
        self._class_envs: list[dict[str, Taint]] = []
        # Whether ``self`` in the current function means the innermost class.
        self._method_flags: list[bool] = []

    # -- environments ------------------------------------------------------
    def push_function(self, *, method: bool) -> None:
        self._function_envs.append({})
        self._method_flags.append(method)

    def pop_function(self) -> None:
        self._function_envs.pop()
        self._method_flags.pop()

    def push_class(self) -> None:
        self._class_envs.append({})

    def pop_class(self) -> None:
        self._class_envs.pop()

    def bind(self, target: cst.BaseExpression, value: Taint) -> None:
        """Record the taint of an assignment target (names, tuples, ``self.x``)."""
        if isinstance(target, cst.Name):
            env = self._function_envs[-1] if self._function_envs else self._module_env
            env[target.value] = value
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                # Unpacking a value gives each name an unknown part of it.
                self.bind(element.value, CLEAN)
        elif (
            isinstance(target, cst.Attribute)
            and isinstance(target.value, cst.Name)
            and target.value.value == "self"
            and self._in_method()
        ):
            self._class_envs[-1][target.attr.value] = value

    def bind_assignment(
        self, targets: Sequence[cst.BaseExpression], value: cst.BaseExpression
    ) -> None:
        if (
            len(targets) == 1
            and isinstance(targets[0], (cst.Tuple, cst.List))
            and isinstance(value, (cst.Tuple, cst.List))
            and len(targets[0].elements) == len(value.elements)
        ):
            for target, element in zip(targets[0].elements, value.elements, strict=True):
                self.bind(target.value, self.taint(element.value))
            return
        taint = self.taint(value)
        for target in targets:
            self.bind(target, taint)

    def _in_method(self) -> bool:
        return bool(self._method_flags) and self._method_flags[-1] and bool(self._class_envs)

    def _lookup(self, name: str) -> Taint | None:
        for env in reversed(self._function_envs):
            if name in env:
                return env[name]
        return self._module_env.get(name)

    # -- evaluation --------------------------------------------------------
    def taint(self, node: cst.BaseExpression, depth: int = 0) -> Taint:
        if depth > 40:
            return CLEAN
        if isinstance(node, cst.Name):
            known = self._lookup(node.value)
            if known is not None:
                return known
            return self._named(node.value)
        if isinstance(node, cst.Attribute):
            base = node.value
            if isinstance(base, cst.Name) and base.value == "self" and self._in_method():
                known = self._class_envs[-1].get(node.attr.value)
                if known is not None:
                    return known
            named = self._named(node.attr.value)
            if named.rank:
                return named
            return self.taint(base, depth + 1)
        if isinstance(node, cst.Call):
            return self._call(node, depth)
        if isinstance(node, cst.Subscript):
            return self._subscript(node, depth)
        if isinstance(node, cst.Comparison):
            out = self.taint(node.left, depth + 1)
            membership = False
            for target in node.comparisons:
                if isinstance(target.operator, (cst.In, cst.NotIn)) and out.possible:
                    membership = True
                out = out | self.taint(target.comparator, depth + 1)
            if membership:
                out = Taint(out.rank, out.via, out.axes, True, out.strong)
            return out
        if isinstance(node, cst.BooleanOperation):
            if _first_and_last_stage(node):
                return CLEAN
            out = CLEAN
            for operand in boolean_operands(node, type(node.operator)):
                out = out | self.taint(operand, depth + 1)
            return out
        if isinstance(node, cst.UnaryOperation):
            return self.taint(node.expression, depth + 1)
        if isinstance(node, cst.BinaryOperation):
            return self.taint(node.left, depth + 1) | self.taint(node.right, depth + 1)
        if isinstance(node, cst.IfExp):
            return (
                self.taint(node.test, depth + 1)
                | self.taint(node.body, depth + 1)
                | self.taint(node.orelse, depth + 1)
            )
        if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
            out = CLEAN
            for element in node.elements:
                out = out | self.taint(element.value, depth + 1)
            return out
        if isinstance(node, cst.NamedExpr):
            return self.taint(node.value, depth + 1)
        if isinstance(node, cst.Await):
            return self.taint(node.expression, depth + 1)
        return CLEAN

    def _named(self, name: str) -> Taint:
        if self.rank_names.matches(name):
            return Taint(rank=True, axes=_rank_axes(name))
        return CLEAN

    def _call(self, node: cst.Call, depth: int) -> Taint:
        func = node.func
        qualified = self.names.resolve(func)
        if qualified is not None:
            if qualified in RANK_FUNCTIONS:
                return _STRONG
            if qualified in ("os.getenv", "os.environ.get"):
                return self._environment(node.args[0].value if node.args else None)
            if qualified in _ARGUMENT_RANK_FUNCTIONS:
                return self._arguments(node, depth)
        last = (
            func.attr.value
            if isinstance(func, cst.Attribute)
            else (func.value if isinstance(func, cst.Name) else None)
        )
        if last is not None and self.rank_names.matches(last):
            axes = axes_of_words(identifier_words(last))
            if isinstance(func, cst.Attribute):
                axes = axes | axes_of_expression(func.value)
            return Taint(rank=True, axes=axes or frozenset({GLOBAL_AXIS}), strong=True)
        if isinstance(func, cst.Name) and func.value in _PASS_THROUGH and qualified is None:
            return self._arguments(node, depth)
        target = call_target(func, self.names)
        if target is not None and not is_external(target):
            return Taint(via=frozenset({target}))
        return CLEAN

    def _arguments(self, node: cst.Call, depth: int) -> Taint:
        out = CLEAN
        for arg in node.args:
            out = out | self.taint(arg.value, depth + 1)
        return out

    def _subscript(self, node: cst.Subscript, depth: int) -> Taint:
        if self._is_environ(node.value) and len(node.slice) == 1:
            element = node.slice[0].slice
            if isinstance(element, cst.Index):
                return self._environment(element.value)
        out = self.taint(node.value, depth + 1)
        for element in node.slice:
            if isinstance(element.slice, cst.Index):
                out = out | self.taint(element.slice.value, depth + 1)
        return out

    def _is_environ(self, node: cst.BaseExpression) -> bool:
        return self.names.resolve(node) == "os.environ"

    @staticmethod
    def _environment(key: cst.BaseExpression | None) -> Taint:
        if isinstance(key, cst.SimpleString) and key.value.strip("\"'") in RANK_ENVIRONMENT:
            return _STRONG
        return CLEAN


def boolean_operands(
    node: cst.BaseExpression, operator: type[cst.BaseBooleanOp]
) -> list[cst.BaseExpression]:
    """Operands of a left-nested chain of one boolean operator, in order, iteratively."""
    operands: list[cst.BaseExpression] = []
    pending: list[cst.BaseExpression] = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, cst.BooleanOperation) and isinstance(current.operator, operator):
            pending.append(current.right)
            pending.append(current.left)
        else:
            operands.append(current)
    return operands


def _first_and_last_stage(node: cst.BooleanOperation) -> bool:
    """``is_pipeline_first_stage() and is_pipeline_last_stage()``: true on every
    rank without pipeline parallelism and on none with it, so rank-invariant."""
    if not isinstance(node.operator, cst.And):
        return False
    names = set()
    for side in (node.left, node.right):
        if not isinstance(side, cst.Call):
            return False
        func = side.func
        name = func.attr.value if isinstance(func, cst.Attribute) else dotted_name(func)
        names.add(name)
    return names == {"is_pipeline_first_stage", "is_pipeline_last_stage"}


_EXTERNAL_ROOTS = frozenset(
    {
        "torch",
        "numpy",
        "os",
        "sys",
        "math",
        "time",
        "logging",
        "json",
        "re",
        "random",
        "functools",
        "itertools",
        "collections",
        "typing",
        "dataclasses",
        "pathlib",
        "copy",
        "warnings",
        "contextlib",
        "subprocess",
        "shutil",
        "datetime",
        "abc",
        "enum",
        "inspect",
        "pickle",
        "io",
        "threading",
        "multiprocessing",
        "asyncio",
        "tqdm",
        "wandb",
        "safetensors",
        "einops",
        "np",
        "yaml",
        "omegaconf",
        "psutil",
        "socket",
        "argparse",
    }
)


def is_external(target: str) -> bool:
    """Targets that are certainly not project functions (stdlib, torch, numpy, ...)."""
    # `@local:f`, `@self:f` and relative `.mod.f` never start with a known root.
    return target.partition(".")[0] in _EXTERNAL_ROOTS
