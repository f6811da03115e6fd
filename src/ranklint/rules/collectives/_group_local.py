"""Group-local ranks: values numbered within a process group rather than globally.

``dist.get_rank(group)``, ``group.rank()``, ``mesh.get_local_rank()`` and
``get_tensor_model_parallel_rank()`` count a rank's place *in a group*, from 0.
The ``src``/``dst`` of a collective are *global* ranks, even with ``group=``.
The two agree only when the group starts at global rank 0, so a group-local
value passed as a global root is a latent wrong-root bug (pytorch#155680).

:func:`scan_scope` reads one function, or the methods of one class together
(``self.x`` and ``ctx.x`` attributes are shared between methods), and returns
where such a mix-up is visible:

- a root argument whose value is group-local: derived from a query
  (``i in range(dist.get_world_size(g))``, ``(cp_rank + 1) % cp_size``), or a
  name (or literal) compared directly with a group-local rank query
  (``if pg.rank() == rank:`` ... ``broadcast(objs, rank, group=pg)``);
- a comparison of a stored group-local rank with a value that the same scope
  passes as a global root (``ctx.src != ctx.rank`` where ``ctx.rank =
  dist.get_rank(group)`` and ``dist.reduce(t, ctx.src, group=group)``).

Only scopes whose collective names a group that is not the default one are
read; a root that is mapped back (``dist.get_global_rank(g, i)``, an element
of ``get_process_group_ranks(g)``) is global.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import libcst as cst

from ranklint.analysis.walk.arguments import find_argument
from ranklint.analysis.walk.catalog import CallSpec, torch_distributed
from ranklint.analysis.walk.names import dotted_name, last_name
from ranklint.syntax import iter_nodes, source_text

_DIST = "torch.distributed"
_RANK_QUERIES = torch_distributed("get_rank")
_SIZE_QUERIES = torch_distributed("get_world_size")
# get_group_rank(group, global_rank) maps a global rank into the group.
_GROUP_RANK_QUERIES = torch_distributed("get_group_rank")
# Receivers of `.rank()` / `.size()` that are process groups by name.
_GROUP_RECEIVER = re.compile(r"(?i)(?:^|_)(?:pg|process_group|group)s?$|group$")
# Megatron-style helpers: the rank within (the size of) one parallel axis' group.
_HELPER_RANK = re.compile(r"^_?get_\w*(?:parallel|tp|dp|pp|cp|ep)_rank$")
_HELPER_SIZE = re.compile(r"^_?get_\w*(?:parallel|tp|dp|pp|cp|ep)_world_size$")
# DeviceMesh methods: a rank within one mesh dimension's group.
_MESH_RANK_METHODS = frozenset({"get_local_rank"})


class LocalKind(enum.Enum):
    """What a group-local value is."""

    RANK = "rank"  # the caller's rank within a group
    SIZE = "size"  # the number of ranks of a group
    INDEX = "index"  # some rank of a group, numbered within it


RANK, SIZE, INDEX = LocalKind.RANK, LocalKind.SIZE, LocalKind.INDEX

Classify = Callable[[cst.Call], "CallSpec | None"]
Resolve = Callable[[cst.BaseExpression], "str | None"]


@dataclass(frozen=True)
class Local:
    """A group-local value: what it is and the query it comes from (as written)."""

    kind: LocalKind
    source: str
    # How the value relates to the query: "from" (derived) or "compared with".
    how: str = "from"


@dataclass(frozen=True)
class LocalRoot:
    """A root argument of ``call`` whose value is numbered within a group."""

    value: cst.BaseExpression
    keyword: str
    call: str
    group: str
    local: Local
    # The collective's call, whose argument ``value`` is.
    node: cst.Call
    # The group argument of that call (``group`` as written).
    group_node: cst.BaseExpression


@dataclass(frozen=True)
class MixedComparison:
    """A comparison of a stored group-local rank with a value used as a global root."""

    node: cst.Comparison
    local_side: str
    local: Local
    root_side: str
    call: str


@dataclass
class ScopeFindings:
    roots: list[LocalRoot] = field(default_factory=list)
    comparisons: list[MixedComparison] = field(default_factory=list)


def is_default_group(group: cst.BaseExpression | None) -> bool:
    """No group, ``None``, or the world group: roots are global ranks of that group anyway."""
    if group is None or (isinstance(group, cst.Name) and group.value == "None"):
        return True
    text = dotted_name(group) or ""
    return text.endswith("WORLD") or text.endswith("world_group")


def _group_argument(call: cst.Call) -> cst.BaseExpression | None:
    """The group of a rank/size query: its first positional or ``group=`` argument."""
    for arg in call.args:
        if arg.keyword is None and not arg.star:
            return arg.value
        if arg.keyword is not None and arg.keyword.value == "group":
            return arg.value
    return None


def query(node: cst.BaseExpression, resolve: Resolve) -> Local | None:
    """The group-local value a call expression *queries*, if it is one."""
    if isinstance(node, cst.Subscript):
        # mesh.get_coordinate()[dim]
        inner = node.value
        if isinstance(inner, cst.Call) and last_name(inner.func) == "get_coordinate":
            return Local(RANK, source_text(node))
        return None
    if not isinstance(node, cst.Call):
        return None
    target = resolve(node.func)
    if target in _RANK_QUERIES or target in _SIZE_QUERIES:
        if is_default_group(_group_argument(node)):
            return None
        return Local(RANK if target in _RANK_QUERIES else SIZE, source_text(node))
    if target in _GROUP_RANK_QUERIES:
        return Local(RANK, source_text(node))
    func = node.func
    name = last_name(func) or ""
    if isinstance(func, cst.Attribute):
        if name in ("rank", "size") and not node.args:
            receiver = last_name(func.value) or ""
            if _GROUP_RECEIVER.search(receiver):
                return Local(RANK if name == "rank" else SIZE, source_text(node))
            return None
        if name in _MESH_RANK_METHODS:
            return Local(RANK, source_text(node))
    if target is not None and target.startswith(f"{_DIST}."):
        return None
    if _HELPER_RANK.match(name):
        return Local(RANK, source_text(node))
    if _HELPER_SIZE.match(name):
        return Local(SIZE, source_text(node))
    return None


class _Scope:
    """Group-local facts of one function, or of the methods of one class."""

    def __init__(self, resolve: Resolve, classify: Classify) -> None:
        self.resolve = resolve
        self.classify = classify
        # Attribute facts shared by the methods (".attr" keys).
        self.attributes: dict[str, Local] = {}

    def key(self, node: cst.BaseExpression, receivers: Sequence[str]) -> str | None:
        """The name a value is kept under: ``x``, or ``.attr`` for ``self.attr``."""
        if isinstance(node, cst.Name):
            return node.value
        if (
            isinstance(node, cst.Attribute)
            and isinstance(node.value, cst.Name)
            and node.value.value in receivers
        ):
            return f".{node.attr.value}"
        return None


class _FunctionFacts:
    def __init__(
        self,
        scope: _Scope,
        function: cst.FunctionDef,
        nodes: Sequence[cst.CSTNode],
        receivers: Sequence[str],
    ) -> None:
        self.scope = scope
        self.function = function
        self.receivers = receivers
        self.names: dict[str, Local] = {}
        # Integer literals compared with a query of a group: (literal, group code) -> query.
        self.literals: dict[tuple[str, str], Local] = {}
        # The nodes of NODE_KINDS in the body, nested functions' included.
        self.nodes = nodes
        # Comparisons an `assert` checks: `assert group.rank() == 0` under a
        # global rank-0 test confirms that the root is rank 0 in both
        # numberings; it does not make the literal a group-local rank.
        self.asserted = {
            id(inner)
            for node in self.nodes
            if isinstance(node, cst.Assert)
            for inner in iter_nodes(node.test)
            if isinstance(inner, cst.Comparison)
        }

    def lookup(self, key: str) -> Local | None:
        if key.startswith("."):
            return self.scope.attributes.get(key)
        return self.names.get(key)

    def store(self, key: str, local: Local) -> bool:
        table = self.scope.attributes if key.startswith(".") else self.names
        if key in table:
            return False
        table[key] = local
        return True

    def value(self, node: cst.BaseExpression, depth: int = 0) -> Local | None:
        """The group-local value ``node`` holds, if it surely holds one."""
        if depth > 8:
            return None
        found = query(node, self.scope.resolve)
        if found is not None:
            return found
        key = self.scope.key(node, self.receivers)
        if key is not None:
            return self.lookup(key)
        if isinstance(node, cst.Call) and last_name(node.func) == "int" and len(node.args) == 1:
            return self.value(node.args[0].value, depth + 1)
        if isinstance(node, cst.BinaryOperation) and isinstance(
            node.operator, (cst.Add, cst.Subtract, cst.Modulo)
        ):
            return self._arithmetic(node, depth)
        return None

    def _arithmetic(self, node: cst.BinaryOperation, depth: int) -> Local | None:
        """``cp_rank + 1``, ``(rank - 1) % size``: still a rank of the same group."""
        operands = (node.left, node.right)
        locals_ = [self.value(operand, depth + 1) for operand in operands]
        for operand, local in zip(operands, locals_, strict=True):
            if local is None and not isinstance(operand, cst.Integer):
                return None
        ranks = [local for local in locals_ if local is not None and local.kind != SIZE]
        if ranks:
            return Local(INDEX, ranks[0].source, ranks[0].how)
        first = locals_[0]
        if first is not None and isinstance(node.operator, cst.Subtract):
            return Local(INDEX, first.source, first.how)  # `size - 1`: the group's last rank
        return None

    def propagate(self) -> bool:
        """One pass over assignments, loops and comparisons; True when something was learnt."""
        changed = False
        for node in self.nodes:
            if isinstance(node, cst.Assign) and len(node.targets) == 1:
                changed |= self._assign(node.targets[0].target, node.value)
            elif isinstance(node, cst.AnnAssign) and node.value is not None:
                changed |= self._assign(node.target, node.value)
            elif isinstance(node, cst.For):
                changed |= self._loop(node)
            elif isinstance(node, cst.Comparison):
                changed |= self._compare(node)
        return changed

    def _assign(self, target: cst.BaseExpression, value: cst.BaseExpression) -> bool:
        key = self.scope.key(target, self.receivers)
        local = self.value(value)
        if key is None or local is None:
            return False
        return self.store(key, local)

    def _loop(self, node: cst.For) -> bool:
        """``for i in range(group_size)``: ``i`` is a rank of the group."""
        loop = node.iter
        if not (isinstance(loop, cst.Call) and last_name(loop.func) == "range" and loop.args):
            return False
        sources = [self.value(arg.value) for arg in loop.args[:2]]
        found = next((s for s in sources if s is not None), None)
        key = self.scope.key(node.target, self.receivers)
        if found is None or key is None or key.startswith("."):
            return False
        return self.store(key, Local(INDEX, found.source, found.how))

    def _compare(self, node: cst.Comparison) -> bool:
        """``pg.rank() == rank``: the caller treats ``rank`` as a rank of ``pg``."""
        if len(node.comparisons) != 1:
            return False
        if not isinstance(node.comparisons[0].operator, (cst.Equal, cst.NotEqual)):
            return False
        changed = False
        sides = (node.left, node.comparisons[0].comparator)
        for mine, other in (sides, sides[::-1]):
            local = query(mine, self.scope.resolve)
            if local is None or local.kind != RANK:
                continue
            compared = Local(INDEX, local.source, "compared with")
            if isinstance(other, cst.Integer):
                if id(node) in self.asserted:
                    continue
                literal = (other.value, _query_group(mine))
                if literal not in self.literals:
                    self.literals[literal] = compared
                    changed = True
                continue
            key = self.scope.key(other, self.receivers)
            if key is not None and self.lookup(key) is None:
                changed |= self.store(key, compared)
        return changed

    def rooted_calls(self) -> Iterator[tuple[cst.Call, CallSpec, cst.BaseExpression]]:
        """Calls of collectives with a root, run on a group that is not the default one."""
        for node in self.nodes:
            if not isinstance(node, cst.Call):
                continue
            spec = self.scope.classify(node)
            if spec is None or not spec.roots or spec.group is None:
                continue
            group = find_argument(node, spec.group)
            if group is None or is_default_group(group):
                continue
            yield node, spec, group


def _query_group(node: cst.BaseExpression) -> str:
    """The group a query names, as written (``pg`` for ``pg.rank()``)."""
    if isinstance(node, cst.Call):
        if isinstance(node.func, cst.Attribute) and not node.args:
            return source_text(node.func.value)
        group = _group_argument(node)
        if group is not None:
            return source_text(group)
    return ""


def _receivers(function: cst.FunctionDef, method: bool) -> tuple[str, ...]:
    """``self``/``ctx``/``cls``: the first parameter of a method."""
    if not method or not function.params.params:
        return ()
    return (function.params.params[0].name.value,)


# The nodes a function's reading needs, as the walk passes them in its body.
NODE_KINDS: tuple[type[cst.CSTNode], ...] = (
    cst.AnnAssign,
    cst.Assert,
    cst.Assign,
    cst.Call,
    cst.Comparison,
    cst.For,
)


def scan_scope(
    node: cst.FunctionDef | cst.ClassDef,
    nodes: Callable[[cst.FunctionDef], Sequence[cst.CSTNode]],
    resolve: Resolve,
    classify: Classify,
) -> tuple[ScopeFindings, list[cst.FunctionDef]]:
    """The group-local mix-ups of a function, or of a class's methods read together.

    ``nodes`` gives a function's nodes of :data:`NODE_KINDS`, in walk order,
    nested functions' included. Returns the findings and the functions read
    (the methods of a class).
    """
    scope = _Scope(resolve, classify)
    if isinstance(node, cst.ClassDef):
        functions = [
            statement for statement in node.body.body if isinstance(statement, cst.FunctionDef)
        ]
        facts = [_FunctionFacts(scope, f, nodes(f), _receivers(f, method=True)) for f in functions]
    else:
        functions = [node]
        facts = [_FunctionFacts(scope, node, nodes(node), ())]
    if not any(True for f in facts for _ in f.rooted_calls()):
        return ScopeFindings(), functions
    for _ in range(4):
        if not any([f.propagate() for f in facts]):
            break
    return _findings(facts), functions


def _findings(facts: list[_FunctionFacts]) -> ScopeFindings:
    found = ScopeFindings()
    used_as_root: dict[tuple[int, str], str] = {}
    for function in facts:
        for call, spec, group in function.rooted_calls():
            root = spec.roots[0]
            value = find_argument(call, root)
            if value is None:
                continue
            local = _root_value(function, value, group)
            if local is not None:
                found.roots.append(
                    LocalRoot(
                        value, root.keyword, spec.short, source_text(group), local, call, group
                    )
                )
                continue
            key = _scoped(function, value)
            if key is not None:
                used_as_root.setdefault(key, spec.short)
    for function in facts:
        for node in function.nodes:
            if isinstance(node, cst.Comparison):
                mixed = _mixed(function, node, used_as_root)
                if mixed is not None:
                    found.comparisons.append(mixed)
    return found


def _root_value(
    function: _FunctionFacts, value: cst.BaseExpression, group: cst.BaseExpression
) -> Local | None:
    if isinstance(value, cst.Integer):
        return function.literals.get((value.value, source_text(group)))
    local = function.value(value)
    if local is None or local.kind == SIZE:
        return None
    return local


def _scoped(function: _FunctionFacts, node: cst.BaseExpression) -> tuple[int, str] | None:
    """The key of a name, made unique per function (attributes are shared by the class)."""
    key = function.scope.key(node, function.receivers)
    if key is None:
        return None
    return (0 if key.startswith(".") else id(function), key)


def _mixed(
    function: _FunctionFacts, node: cst.Comparison, used_as_root: dict[tuple[int, str], str]
) -> MixedComparison | None:
    """``ctx.src != ctx.rank``: a global root compared with a stored group-local rank."""
    if len(node.comparisons) != 1:
        return None
    if not isinstance(node.comparisons[0].operator, (cst.Equal, cst.NotEqual)):
        return None
    sides = (node.left, node.comparisons[0].comparator)
    for mine, other in (sides, sides[::-1]):
        if query(mine, function.scope.resolve) is not None:
            continue  # a direct query: its other side was taken as group-local
        local = function.value(mine)
        key = _scoped(function, other)
        if local is None or local.kind != RANK or key is None or key not in used_as_root:
            continue
        if function.value(other) is not None:
            continue
        return MixedComparison(
            node, source_text(mine), local, source_text(other), used_as_root[key]
        )
    return None
