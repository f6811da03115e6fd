"""Groups whose members are written out, and rank tests that split them.

``g = dist.new_group([2, 3])`` then ``if dist.get_rank() == 2:
dist.broadcast(t, src=2, group=g)``: rank 3, a member, never joins, and rank
2 waits for it. A test of the global rank against a number is evaluated on
each member of such a group; the collective diverges when the members do not
all take the same arm. Tests that every member passes alike (`rank >= 2`)
or that only non-members pass are not a hang (a non-member's collective on
the group returns at once).

The test is read through what the function binds once
(:mod:`ranklint.analysis.walk.definitions`): ``me = dist.get_rank()``, ``x = 1
if me == 2 else 0`` then ``if x:``, ``flags = {"main": me == 2}`` then ``if
flags["main"]:``, and ``ranks = [2, 3]`` then ``new_group(ranks)``; through
``and``/``or`` with one rank-dependent operand; and with the rank offset by a
literal (``me + 1 < 2``) or taken modulo one (``me % 2 == 0``, evaluated on
each member). ``rank == world_size - 1`` is a test of one rank too, though its
number is not known.

Groups whose make-up a function shows otherwise: ``new_group()`` or
``new_group(list(range(world_size)))`` holds every rank (the default group's
judgement applies), and ``mesh.get_group()`` is a device mesh's group, which
one global rank never makes alone (judged as a DTensor's mesh is, see
analysis.project.sequences.relevant).
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from typing import Protocol

import libcst as cst

from ranklint.analysis.walk.axes import GLOBAL_AXIS
from ranklint.analysis.walk.definitions import attribute_definitions, self_attribute
from ranklint.analysis.walk.literals import int_value, string_value
from ranklint.analysis.walk.names import NameTable, dotted_name
from ranklint.model.taint import Taint
from ranklint.syntax import boolean_operands, iter_nodes, source_text

_NEW_GROUP = frozenset(
    {"torch.distributed.new_group", "torch.distributed.distributed_c10d.new_group"}
)
# Comparison operators, and the operator that reads the same with the
# operands swapped (`2 > rank` is `rank < 2`).
_OPERATORS: dict[type[cst.BaseCompOp], tuple[str, str]] = {
    cst.Equal: ("==", "=="),
    cst.NotEqual: ("!=", "!="),
    cst.LessThan: ("<", ">"),
    cst.LessThanEqual: ("<=", ">="),
    cst.GreaterThan: (">", "<"),
    cst.GreaterThanEqual: (">=", "<="),
}
_NEGATED = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}
# A test of the rank modulo a number (`rank % 2 == 0`) has the operator
# `%2==` (or `%2!=`): never a test of one rank.
_MODULO = re.compile(r"%(\d+)(==|!=)")


def _negated(test: RankTest) -> RankTest:
    symbol = test[0]
    modulo = _MODULO.fullmatch(symbol)
    if modulo:
        return (f"%{modulo[1]}{_NEGATED[modulo[2]]}", test[1])
    return (_NEGATED[symbol], test[1])


_COMPARE: dict[str, Callable[[int, int], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
# (operator, number): a literal number, or the text of a value every rank shares;
# the operator `%2==` tests the rank modulo 2 (see _MODULO).
RankTest = tuple[str, int | str]


def created_groups(
    node: cst.CSTNode, names: NameTable, scan: Definitions | None = None
) -> dict[str, frozenset[int] | None]:
    """Names that ``node`` (a function's body, or a module) binds to ``new_group`` of
    literal ranks: name -> the ranks, or None where the name is bound more than once
    or to anything else as well. ``scan``: the function's names bound once, for a
    list of ranks kept in one (`ranks = [2, 3]`)."""
    found: dict[str, frozenset[int] | None] = {}
    # (`into_functions=None` would read as False: not mutated.)
    for current in iter_nodes(node, into_functions=False):  # pragma: no mutate
        if not isinstance(current, cst.Assign):
            continue
        for target in current.targets:
            if isinstance(target.target, cst.Name):
                name = target.target.value
                ranks = _literal_ranks(current.value, names, scan)
                found[name] = ranks if name not in found else None
    return found


class GroupTable:
    """The groups of written-out ranks a function sees: its own names, then the module's."""

    def __init__(self, module: cst.Module, names: NameTable, source: str) -> None:
        self._module = module
        self._names = names
        # A module whose text names no `new_group(`/`get_group(` passes no such group.
        self._makes_groups = "_group(" in source
        self._module_groups: dict[str, frozenset[int] | None] | None = None
        self._attributes: dict[str, cst.BaseExpression] | None = None

    @property
    def names(self) -> NameTable:
        return self._names

    def maker(self, scan: Definitions | None) -> Callable[[cst.BaseExpression], str | None] | None:
        """How a value the function ``scan`` reads was made as a group (see
        made_group); None where the module makes no group."""
        if not self._makes_groups:
            return None
        return lambda value: made_group(value, scan, self._names, self)

    def definition(self, node: cst.BaseExpression) -> cst.BaseExpression | None:
        """The value of ``self.<x>`` where the module's methods assign it once
        (see analysis.walk.definitions.attribute_definitions); None otherwise."""
        attribute = self_attribute(node)
        if attribute is None:
            return None
        if self._attributes is None:
            self._attributes = attribute_definitions(self._module)
        return self._attributes.get(attribute)

    def members(
        self,
        group: cst.BaseExpression | None,
        local: dict[str, frozenset[int] | None] | None,
    ) -> frozenset[int] | None:
        """The ranks of the group ``group`` names; ``local``: the function's own groups."""
        if not isinstance(group, cst.Name):
            return None
        if local is not None and group.value in local:
            return local[group.value]
        if self._module_groups is None:
            self._module_groups = created_groups(self._module, self._names)
        return self._module_groups.get(group.value)


# How a group argument was made (see made_group).
EVERY_RANK = "every-rank"
MESH_GROUP = "mesh-group"


def made_group(
    group: cst.BaseExpression,
    scan: Definitions | None,
    names: NameTable,
    attributes: Definitions | None = None,
) -> str | None:
    """How the group ``group`` names was made, where the code shows it (itself, a
    name the function binds once, or ``self.<x>`` that the module's methods assign
    once, read from ``attributes``): :data:`EVERY_RANK` for ``new_group()`` of no
    ranks or of ``range(world_size)``; :data:`MESH_GROUP` for the ``get_group()`` of
    a device mesh (whose text says ``mesh``),
    whose members are the ranks that shard together (one global rank does not
    make such a group alone); None otherwise."""
    made = None
    if isinstance(group, cst.Name) and scan is not None:
        made = scan.definition(group)
    elif isinstance(group, cst.Attribute) and attributes is not None:
        made = attributes.definition(group)
    node = group if made is None else made
    if not isinstance(node, cst.Call):
        return None
    if isinstance(node.func, cst.Attribute) and node.func.attr.value == "get_group":
        # `mesh.get_group()`, `self.device_mesh["dp"].get_group()`; not a registry's.
        return MESH_GROUP if "mesh" in source_text(node.func.value).lower() else None
    if names.resolve(node.func) not in _NEW_GROUP:
        return None
    ranks = _ranks_argument(node)
    if ranks is None:
        return EVERY_RANK
    ranks = _unlisted(ranks)
    if not (isinstance(ranks, cst.Call) and dotted_name(ranks.func) == "range"):
        return None
    bound = ranks.args[0].value if len(ranks.args) == 1 else None
    return EVERY_RANK if bound is not None and _world_size(bound, names) else None


def group_made(
    group: cst.BaseExpression | None,
    axes: frozenset[str] | None,
    scan: FunctionNames | None,
    table: GroupTable,
) -> tuple[frozenset[str] | None, bool, str | None]:
    """(axes, whether a device mesh's group, parameter) of a collective's group
    argument whose axes are ``axes`` as read from its text: a group of every rank
    (see :func:`made_group`) is the default group's (no axis), and a mesh's group is
    told apart; any other group keeps ``axes``. The parameter: the one the argument
    reads, where the function never binds it again (its caller says what it is)."""
    if axes is not None or group is None:
        return axes, False, None
    made = made_group(group, scan, table.names, table)
    kept = isinstance(group, cst.Name) and scan is not None and scan.kept_parameter(group.value)
    param = group.value if made is None and kept and isinstance(group, cst.Name) else None
    return (frozenset() if made == EVERY_RANK else None), made == MESH_GROUP, param


def _unlisted(ranks: cst.BaseExpression) -> cst.BaseExpression:
    """``list(x)`` as ``x``: a member list written as a list of a range."""
    if isinstance(ranks, cst.Call) and dotted_name(ranks.func) == "list" and len(ranks.args) == 1:
        return ranks.args[0].value
    return ranks


def _world_size(node: cst.BaseExpression, names: NameTable) -> bool:
    """``world_size``, ``self.world_size``, ``dist.get_world_size()`` (of the default group)."""
    if isinstance(node, cst.Call):
        return not node.args and names.resolve(node.func) == "torch.distributed.get_world_size"
    name = node.attr.value if isinstance(node, cst.Attribute) else getattr(node, "value", None)
    return name == "world_size"


def _ranks_argument(call: cst.Call) -> cst.BaseExpression | None:
    return next(
        (
            arg.value
            for arg in call.args
            if (arg.keyword is None and not arg.star)
            or (arg.keyword and arg.keyword.value == "ranks")
        ),
        None,
    )


def _literal_ranks(
    value: cst.BaseExpression, names: NameTable, scan: Definitions | None
) -> frozenset[int] | None:
    if not isinstance(value, cst.Call) or names.resolve(value.func) not in _NEW_GROUP:
        return None
    ranks = _ranks_argument(value)
    if isinstance(ranks, cst.Name) and scan is not None:
        ranks = scan.definition(ranks) or ranks
    if ranks is None:
        return None
    return written_ranks(ranks)


# More ranks than any job has: a range that long is not a group's member list.
_MOST_WRITTEN_RANKS = 1 << 16


def written_ranks(ranks: cst.BaseExpression) -> frozenset[int] | None:
    """The ranks a literal list or tuple names, or a ``range``/``list(range(...))`` of
    literal bounds (``list(range(0, 4, 2))``); None for anything else or no rank."""
    ranks = _unlisted(ranks)
    if isinstance(ranks, cst.Call) and dotted_name(ranks.func) == "range":
        bounds = [int_value(arg.value) for arg in ranks.args]
        numbers = [bound for bound in bounds if bound is not None]
        if len(numbers) != len(bounds) or not 1 <= len(numbers) <= 3 or 0 in numbers[2:]:
            return None  # a bound that is not a literal, or a step of 0
        found = range(*numbers)
        return frozenset(found) if 0 < len(found) <= _MOST_WRITTEN_RANKS else None
    if not isinstance(ranks, (cst.List, cst.Tuple)) or not ranks.elements:
        return None
    members = [int_value(element.value) for element in ranks.elements]
    if any(member is None for member in members):
        return None
    return frozenset(member for member in members if member is not None)


class Definitions(Protocol):
    """The names a function binds once (see analysis.walk.definitions)."""

    def definition(self, node: cst.BaseExpression) -> cst.BaseExpression | None: ...


class FunctionNames(Definitions, Protocol):
    """A function's names bound once, and its parameters it never binds again."""

    def kept_parameter(self, name: str) -> bool: ...


class RankValues(Protocol):
    """What :func:`rank_test` reads of the walk: the taint of a value where the test
    is, and the function being walked (None at module level)."""

    def taint(self, node: cst.BaseExpression, depth: int = 0) -> Taint: ...  # pragma: no mutate

    def scan(self) -> Definitions | None: ...


def _definition(node: cst.BaseExpression, values: RankValues) -> cst.BaseExpression | None:
    scan = values.scan()
    return None if scan is None else scan.definition(node)


# How deep a test is read through the names it restates (`x` of `x = flags["main"]`).
_DEPTH = 4


def rank_test(test: cst.BaseExpression, values: RankValues, depth: int = 0) -> RankTest | None:
    """(operator, number) when ``test`` compares the global rank with a number
    (`dist.get_rank() == 2`, `not rank < 2`, `2 <= rank`), or with a value every
    rank shares (`rank == world_size - 1`: the number is then that value's text,
    and only `==`/`!=` count); None otherwise.

    The test is read through the names the function binds once (``me =
    dist.get_rank()``; ``x = 1 if rank == 0 else 0`` then ``if x:``; ``flags =
    {"main": rank == 0}`` then ``if flags["main"]:``), and through ``and``/``or``
    where one operand alone depends on the rank: where the others hold (``and``)
    or fail (``or``), the test is that operand's.
    """
    # (None would read as False: not mutated.)
    negated = False  # pragma: no mutate
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, negated = test.expression, not negated
    if depth > _DEPTH:
        return None
    found = _restated(test, values, depth)
    if found is None:
        found = _compared(test, values, depth)
    if found is None:
        return None
    return _negated(found) if negated else found


def _restated(test: cst.BaseExpression, values: RankValues, depth: int) -> RankTest | None:
    """The rank test a name (or a dict's key) restates, or that a flag chosen by one
    holds (`x = 1 if rank == 0 else 0`: `if x:`, `if x == 1:`)."""
    if isinstance(test, cst.BooleanOperation):
        operands = boolean_operands(test, type(test.operator))
        ranked = [operand for operand in operands if values.taint(operand).possible]
        return rank_test(ranked[0], values, depth + 1) if len(ranked) == 1 else None
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        if isinstance(target.operator, (cst.Equal, cst.NotEqual)):
            chosen = _chosen(test.left, target.comparator, values)
            if chosen is None:
                chosen = _chosen(target.comparator, test.left, values)
            if chosen is not None:
                found = rank_test(chosen[0], values, depth + 1)
                flip = chosen[1] != isinstance(target.operator, cst.NotEqual)
                return _negated(found) if found and flip else found
        return None
    definition = _definition(test, values)
    if definition is None:
        return None
    if isinstance(definition, cst.IfExp):
        truths = (_literal(definition.body), _literal(definition.orelse))
        if None in truths or bool(truths[0]) == bool(truths[1]):
            return None
        found = rank_test(definition.test, values, depth + 1)
        return _negated(found) if found and not truths[0] else found
    return rank_test(definition, values, depth + 1)


def _chosen(
    flag: cst.BaseExpression, literal: cst.BaseExpression, values: RankValues
) -> tuple[cst.BaseExpression, bool] | None:
    """(test, negated) where ``flag == literal`` holds exactly where the test holds
    (or fails: negated), ``flag`` being chosen by it (`x = 1 if test else 0`)."""
    definition = _definition(flag, values)
    wanted = _literal(literal)
    if not isinstance(definition, cst.IfExp) or wanted is None:
        return None
    arms = (_literal(definition.body), _literal(definition.orelse))
    if None in arms or arms[0] == arms[1] or wanted not in arms:
        return None
    return definition.test, wanted != arms[0]


def _literal(node: cst.BaseExpression) -> int | str | None:
    """An int, bool or string literal's value (``True`` as 1, as Python compares)."""
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return int(node.value == "True")
    if isinstance(node, cst.SimpleString):
        return string_value(node)
    return int_value(node)


def _compared(test: cst.BaseExpression, values: RankValues, depth: int) -> RankTest | None:
    """(operator, number) of a comparison of the global rank itself with a number."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    target = test.comparisons[0]
    symbols = _OPERATORS.get(type(target.operator))
    if symbols is None:
        return None
    sides = ((test.left, target.comparator, 0), (target.comparator, test.left, 1))
    for side, other, which in sides:
        rank, shift = _shifted(side)
        rank, modulus = _modulo(rank) if symbols[which] in ("==", "!=") else (rank, None)
        if not (_is_the_rank(rank, values, depth) and _global(values.taint(rank))):
            continue
        number = int_value(other)
        if number is not None and modulus is not None and not shift:
            return (f"%{modulus}{symbols[which]}", number)
        if number is not None and modulus is None:
            return _one_rank((symbols[which], number - shift))
        if modulus is None and symbols[which] in ("==", "!=") and not values.taint(other).possible:
            return (symbols[which], " ".join(source_text(other).split()))
    return None


def _shifted(node: cst.BaseExpression) -> tuple[cst.BaseExpression, int]:
    """``rank + 1`` as (``rank``, 1), ``rank - 2`` as (``rank``, -2); else (node, 0)."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract)):
        number = int_value(node.right)
        if number is not None:
            return node.left, number if isinstance(node.operator, cst.Add) else -number
    return node, 0


def _modulo(node: cst.BaseExpression) -> tuple[cst.BaseExpression, int | None]:
    """``rank % 2`` as (``rank``, 2); else (node, None)."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
        number = int_value(node.right)
        if number:
            return node.left, number
    return node, None


# Ranks are never negative: these orderings single out rank 0 (or all but it).
_RANK_ZERO: dict[RankTest, RankTest] = {
    ("<", 1): ("==", 0),
    ("<=", 0): ("==", 0),
    (">=", 1): ("!=", 0),
    (">", 0): ("!=", 0),
}


def _one_rank(test: RankTest) -> RankTest:
    return _RANK_ZERO.get(test, test)


def _is_the_rank(node: cst.BaseExpression, values: RankValues, depth: int) -> bool:
    """Whether ``node`` is the rank itself: it names it (see names_the_rank), or is a
    name bound once to what does (`me = dist.get_rank()`, `who =
    int(os.environ["RANK"])`; not `x = int(rank < 2)`: a call of anything but
    names, attributes, subscripts, literals and calls is no rank)."""
    if names_the_rank(node):
        return True
    definition = _definition(node, values) if depth <= _DEPTH else None
    if isinstance(definition, cst.Call) and not all(
        isinstance(arg.value, _PLAIN) for arg in definition.args
    ):
        return False
    return definition is not None and _is_the_rank(definition, values, depth + 1)


# What a call that returns the rank itself passes: `int(os.environ["RANK"])`.
_PLAIN = (cst.Name, cst.Attribute, cst.Subscript, cst.Call, cst.BaseString, cst.Integer)


def _global(taint: Taint) -> bool:
    """A value of the global rank, or of a project call that may return it."""
    return (taint.rank and GLOBAL_AXIS in taint.axes) or (not taint.rank and bool(taint.via))


def names_the_rank(node: cst.BaseExpression) -> bool:
    """An expression that reads as the rank itself: a call or a subscript
    (`dist.get_rank()`, `int(os.environ["RANK"])`), or a name whose last part says
    rank (`rank`, `self.global_rank`). A flag derived from the rank (`x = 1 if rank
    < 2 else 0`) is rank-dependent too, but `x == 1` is no test of the rank."""
    if isinstance(node, (cst.Call, cst.Subscript)):
        return True
    if isinstance(node, cst.Attribute):
        node = node.attr
    return isinstance(node, cst.Name) and "rank" in node.value.lower()


def splits(test: RankTest, members: frozenset[int]) -> bool:
    """Whether some members of a group pass ``test`` and others fail it (False where
    the test's number is not written out)."""
    symbol, number = test
    if not isinstance(number, int):
        return False
    modulo = _MODULO.fullmatch(symbol)
    if modulo:
        modulus, compare = int(modulo[1]), _COMPARE[modulo[2]]
        return len({compare(member % modulus, number) for member in members}) > 1
    compare = _COMPARE[symbol]
    return len({compare(member, number) for member in members}) > 1
