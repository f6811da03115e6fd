"""Groups whose members are written out, and rank tests that split them.

``g = dist.new_group([2, 3])`` then ``if dist.get_rank() == 2:
dist.broadcast(t, src=2, group=g)``: rank 3, a member, never joins, and rank
2 waits for it. A test of the global rank against a number is evaluated on
each member of such a group; the collective diverges when the members do not
all take the same arm. Tests that every member passes alike (`rank >= 2`)
or that only non-members pass are not a hang (a non-member's collective on
the group returns at once).
"""

from __future__ import annotations

import operator
from collections.abc import Callable

import libcst as cst

from ranklint.analysis.walk.literals import int_value
from ranklint.analysis.walk.names import NameTable, dotted_name
from ranklint.syntax import iter_nodes

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
_COMPARE: dict[str, Callable[[int, int], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
RankTest = tuple[str, int]


def created_groups(node: cst.CSTNode, names: NameTable) -> dict[str, frozenset[int] | None]:
    """Names that ``node`` (a function's body, or a module) binds to ``new_group`` of
    literal ranks: name -> the ranks, or None where the name is bound more than once
    or to anything else as well."""
    found: dict[str, frozenset[int] | None] = {}
    # (`into_functions=None` would read as False: not mutated.)
    for current in iter_nodes(node, into_functions=False):  # pragma: no mutate
        if not isinstance(current, cst.Assign):
            continue
        for target in current.targets:
            if isinstance(target.target, cst.Name):
                name = target.target.value
                ranks = _literal_ranks(current.value, names)
                found[name] = ranks if name not in found else None
    return found


class GroupTable:
    """The groups of written-out ranks a function sees: its own names, then the module's."""

    def __init__(self, module: cst.Module, names: NameTable) -> None:
        self._module = module
        self._names = names
        self._module_groups: dict[str, frozenset[int] | None] | None = None

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


def _literal_ranks(value: cst.BaseExpression, names: NameTable) -> frozenset[int] | None:
    if not isinstance(value, cst.Call) or names.resolve(value.func) not in _NEW_GROUP:
        return None
    ranks = next(
        (
            arg.value
            for arg in value.args
            if (arg.keyword is None and not arg.star)
            or (arg.keyword and arg.keyword.value == "ranks")
        ),
        None,
    )
    if ranks is None:
        return None
    return written_ranks(ranks)


# More ranks than any job has: a range that long is not a group's member list.
_MOST_WRITTEN_RANKS = 1 << 16


def written_ranks(ranks: cst.BaseExpression) -> frozenset[int] | None:
    """The ranks a literal list or tuple names, or a ``range``/``list(range(...))`` of
    literal bounds (``list(range(0, 4, 2))``); None for anything else or no rank."""
    if isinstance(ranks, cst.Call) and dotted_name(ranks.func) == "list" and len(ranks.args) == 1:
        ranks = ranks.args[0].value
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


def rank_test(
    test: cst.BaseExpression, is_global_rank: Callable[[cst.BaseExpression], bool]
) -> RankTest | None:
    """(operator, number) when ``test`` compares the global rank with a number
    (`dist.get_rank() == 2`, `not rank < 2`, `2 <= rank`); None otherwise."""
    # (None would read as False: not mutated.)
    negated = False  # pragma: no mutate
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, negated = test.expression, not negated
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    target = test.comparisons[0]
    symbols = _OPERATORS.get(type(target.operator))
    if symbols is None:
        return None
    found: RankTest | None = None
    number = int_value(target.comparator)
    if number is not None and names_the_rank(test.left) and is_global_rank(test.left):
        found = (symbols[0], number)
    number = int_value(test.left)
    if (
        number is not None
        and names_the_rank(target.comparator)
        and is_global_rank(target.comparator)
    ):
        found = (symbols[1], number)
    if found is None:
        return None
    return (_NEGATED[found[0]], found[1]) if negated else found


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
    """Whether some members of a group pass ``test`` and others fail it."""
    compare = _COMPARE[test[0]]
    return len({compare(member, test[1]) for member in members}) > 1
