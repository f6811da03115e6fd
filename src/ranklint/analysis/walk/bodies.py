"""What a function's body says about its values: the paths it writes, the objects it gathers.

Paths written: a test of such a path races with the write.

``if not os.path.isfile(path): (rank 0 writes path) ... barrier()``: a rank
that tests after rank 0 wrote the file skips the branch and its barrier
(unsloth-zoo#967). A file-system test is treated as rank-dependent only on a
path the same function writes, so that checks of inputs every rank reads
alike (`if os.path.isfile(checkpoint): raise ...`) stay uniform.

Modules sharded later: ``get_model_state_dict(model)`` on rank 0, then
``prepare_fully_shard(model)`` (composer's `sync_module_states` path) reads a
plain module, which needs no communication. A call that passes the module to
a sharding function (its name says `shard`, `sharded`, `fsdp` or
`parallelize`) after the read marks the read as local.

Objects gathered: what a rank contributes to ``all_gather_object`` or
``gather_object`` is its own data (that is why it is gathered), so a test of
it before the gather (`if not local_metrics: return`) splits the ranks.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import libcst as cst

from ranklint.analysis.walk.definitions import binding_counts, single_definitions
from ranklint.analysis.walk.literals import string_value
from ranklint.analysis.walk.membership import created_groups
from ranklint.analysis.walk.names import NameTable, dotted_name, last_name
from ranklint.syntax import iter_nodes, parameter_names, source_text

# Calls that create or replace the file named by an argument: (qualified
# name, position of the path argument).
_WRITERS: dict[str, int] = {
    "torch.save": 1,
    "shutil.copy": 1,
    "shutil.copy2": 1,
    "shutil.copyfile": 1,
    "shutil.move": 1,
    "os.rename": 1,
    "os.replace": 1,
    "os.makedirs": 0,
    "os.mkdir": 0,
    "numpy.save": 0,
    "urllib.request.urlretrieve": 1,
}
# Path methods that create the file or folder they are called on.
_PATH_WRITERS = frozenset({"write_text", "write_bytes", "touch", "mkdir"})
_WRITE_MODES = frozenset("wax")
Function = cst.FunctionDef | cst.Lambda


# Object collectives and the (position, keyword) of the object each rank contributes.
_GATHERS: dict[str, tuple[int, str]] = {
    "torch.distributed.all_gather_object": (1, "obj"),
    "torch.distributed.distributed_c10d.all_gather_object": (1, "obj"),
    "torch.distributed.gather_object": (0, "obj"),
    "torch.distributed.distributed_c10d.gather_object": (0, "obj"),
}


# The last part of every qualified name in _GATHERS.
_GATHER_NAMES = frozenset(name.rpartition(".")[2] for name in _GATHERS)


def _may_name_a_gather(func: cst.BaseExpression) -> bool:
    """Whether resolving ``func`` may give a gather: a name (an import may rename
    it), or an attribute chain ending in the gather's own name."""
    if isinstance(func, cst.Attribute):
        return func.attr.value in _GATHER_NAMES
    return isinstance(func, cst.Name)


def gathered_objects(function: Function, names: NameTable) -> frozenset[str]:
    """Dotted names ``function`` contributes to an object gather (`all_gather_object(out, x)`)."""
    found: set[str] = set()
    # (`into_functions=None` would read as False: not mutated.)
    for node in iter_nodes(function.body, into_functions=False):  # pragma: no mutate
        if not isinstance(node, cst.Call) or not _may_name_a_gather(node.func):
            continue
        qualified = names.resolve(node.func)
        # (Guards against None are not mutated: `.get(None)` and `dotted_name(None)`
        # give None as well.)
        spec = _GATHERS.get(qualified) if qualified is not None else None  # pragma: no mutate
        value = _argument(node, *spec) if spec is not None else None
        name = None if value is None else dotted_name(value)  # pragma: no mutate
        if name is not None:
            found.add(name)
    return frozenset(found)


def written_paths(function: Function, names: NameTable) -> frozenset[str]:
    """The source text of each path ``function`` writes (`open(p, "w")`, `torch.save(x, p)`)."""
    found: set[str] = set()
    # (`into_functions=None` would read as False: not mutated.)
    for node in iter_nodes(function.body, into_functions=False):  # pragma: no mutate
        if not isinstance(node, cst.Call):
            continue
        path = _written(node, names)
        if path is not None:
            found.add(" ".join(source_text(path).split()))
    return frozenset(found)


def _written(node: cst.Call, names: NameTable) -> cst.BaseExpression | None:
    func = node.func
    if isinstance(func, cst.Name) and func.value == "open" and not names.is_bound("open"):
        mode = _argument(node, 1, "mode")
        if isinstance(mode, cst.SimpleString) and _WRITE_MODES & set(mode.value):
            return _argument(node, 0, "file")
        return None
    if isinstance(func, cst.Attribute) and func.attr.value in _PATH_WRITERS:
        return func.value
    qualified = names.resolve(func)
    if qualified in _WRITERS:
        return _argument(node, _WRITERS[qualified], None)
    return None


# Words of a function name that shards the module it is given (`fully_shard`,
# `FSDP`, `FullyShardedDataParallel`, `prepare_fully_shard`, `apply_fsdp`,
# `parallelize_module`).
_SHARDING_WORDS = frozenset({"shard", "sharded", "fsdp", "parallelize"})
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def sharding_calls(function: Function) -> tuple[dict[int, int], dict[str, int]]:
    """(the position of each call in ``function``, the last position at which each
    module, by dotted name, is passed first to a sharding function)."""
    order: dict[int, int] = {}
    sharded: dict[str, int] = {}
    # (`into_functions=None` would read as False: not mutated.)
    for node in iter_nodes(function.body, into_functions=False):  # pragma: no mutate
        if not isinstance(node, cst.Call):
            continue
        order[id(node)] = position = len(order)
        # (Any stand-in for a callee without a name has no sharding word, and
        # `dotted_name(None)` is None: not mutated.)
        callee = last_name(node.func) or ""  # pragma: no mutate
        words = {word.lower() for word in _WORD.findall(callee)}
        module = _argument(node, 0, "module") if words & _SHARDING_WORDS else None
        name = None if module is None else dotted_name(module)  # pragma: no mutate
        if name is not None:
            sharded[name] = position
    return order, sharded


def _argument(node: cst.Call, position: int, keyword: str | None) -> cst.BaseExpression | None:
    positional = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
    for arg in node.args:
        if keyword is not None and arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    return positional[position] if position < len(positional) else None


@dataclass(frozen=True)
class TextGates:
    """What a file's text rules out, read once per file: the scans of its functions
    that could find nothing there are skipped."""

    gathers: bool = True  # the text names `gather_object`
    walrus: bool = True  # the text holds `:=`

    @classmethod
    def of(cls, source: str | None) -> TextGates:
        """The gates of a file whose text is ``source`` (None: unknown, all open)."""
        if source is None:
            return cls()
        return cls(gathers="gather_object" in source, walrus=":=" in source)


ALL_OPEN = TextGates()


class FunctionScan:
    """The written paths and gathered objects of one function, scanned on first use."""

    def __init__(
        self, function: Function | None, names: NameTable, gates: TextGates = ALL_OPEN
    ) -> None:
        self._function = function
        self._names = names
        self._gates = gates

    @functools.cached_property
    def written(self) -> frozenset[str]:
        if self._function is None:
            return frozenset()
        return written_paths(self._function, self._names)

    @functools.cached_property
    def groups(self) -> dict[str, frozenset[int] | None]:
        """Names bound to groups of written-out ranks (see analysis.walk.membership)."""
        if self._function is None:
            return {}
        return created_groups(self._function.body, self._names, self)

    @functools.cached_property
    def _definitions(self) -> dict[str, cst.BaseExpression]:
        if self._function is None:
            return {}
        return single_definitions(self._function, lambda: self.text, walrus=self._gates.walrus)

    @functools.cached_property
    def _parameters(self) -> frozenset[str]:
        function = self._function
        if not isinstance(function, cst.FunctionDef):
            return frozenset()
        return frozenset(parameter_names(function))

    @functools.cached_property
    def _kept_parameters(self) -> frozenset[str]:
        """The parameters the function never binds again (found once: asked at every call)."""
        assert isinstance(self._function, cst.FunctionDef)  # it has parameters
        counts = binding_counts(self._function)
        return frozenset(name for name in self._parameters if counts[name] == 1)

    def kept_parameter(self, name: str) -> bool:
        """Whether ``name`` is a parameter the function never binds again (its
        bindings are counted only once a parameter is asked about)."""
        return name in self._parameters and name in self._kept_parameters

    def definition(self, node: cst.BaseExpression) -> cst.BaseExpression | None:
        """The value a name the function binds once is bound to, or a constant key's
        value in a dict bound so (see analysis.walk.definitions); None otherwise."""
        if isinstance(node, cst.Name):
            return self._definitions.get(node.value)
        if not (isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name)):
            return None
        whole = self._definitions.get(node.value.value)
        part = node.slice[0].slice if len(node.slice) == 1 else None
        if not isinstance(whole, cst.Dict) or not isinstance(part, cst.Index):
            return None
        key = string_value(part.value)
        if key is None or not all(isinstance(item, cst.DictElement) for item in whole.elements):
            return None  # a `**rest` spread may hold the key too
        matches = [
            item.value
            for item in whole.elements
            if isinstance(item, cst.DictElement) and string_value(item.key) == key
        ]
        return matches[0] if len(matches) == 1 else None  # a key written once

    @functools.cached_property
    def text(self) -> str:
        """The function's source: the configuration its calls run in."""
        return "" if self._function is None else source_text(self._function)

    @functools.cached_property
    def _sharding(self) -> tuple[dict[int, int], dict[str, int]]:
        return ({}, {}) if self._function is None else sharding_calls(self._function)

    def sharded_later(self, call: cst.Call) -> bool:
        """Whether the module ``call`` reads (its first argument) is sharded later here."""
        order, sharded = self._sharding
        module = _argument(call, 0, "model")
        name = None if module is None else dotted_name(module)  # pragma: no mutate
        position = order.get(id(call), len(order))
        # (`>=` would read the same: a state-dict getter is never itself a
        # sharding call, so the positions differ; not mutated.)
        return name in sharded and sharded[name] > position  # pragma: no mutate

    @functools.cached_property
    def gathered(self) -> frozenset[str]:
        # (The gate is an optimisation: the scan would find nothing; not mutated.)
        if self._function is None or not self._gates.gathers:  # pragma: no mutate
            return frozenset()
        return gathered_objects(self._function, self._names)
