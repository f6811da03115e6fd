"""The collectives a piece of code issues, as the project phase sequences them.

A :class:`CollectiveLeaf` is one collective with the call chain that reaches
it; sequences of leaves are what :mod:`ranklint.analysis.project.divergences`
compares between the ranks on either side of a rank-dependent test.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace

from ranklint.analysis.project.callgraph import Hop
from ranklint.analysis.walk.axes import GLOBAL_AXIS
from ranklint.analysis.walk.catalog import PROPERTY_COLLECTIVES, lookup
from ranklint.analysis.walk.membership import EVERY_RANK, MESH_GROUP, splits
from ranklint.analysis.walk.wrapped import WRAPPED_PREFIX
from ranklint.model.events import (
    FUNCTION_EXITS,
    CallEvent,
    Collective,
    Cond,
    Event,
    ExitKind,
    Literal,
)
from ranklint.model.kinds import CallKind


@dataclass(frozen=True)
class RankCond:
    """A rank-dependent test: its text, axes and evidence (sources, the returning call)."""

    text: str
    axes: frozenset[str]
    membership: bool
    rank_test: tuple[str, int] | None = None
    sources: frozenset[tuple[str, str]] = frozenset()
    via: str | None = None  # the project call that returned the rank value, if one did
    # The canonical keys of the test and of its operands, written out in full.
    keys: frozenset[str] = frozenset()
    # A decorator's condition (`@main_only`): the rank test its wrapper makes.
    wrapper_test: str | None = None


@dataclass(frozen=True)
class CollectiveLeaf:
    """One collective a piece of code issues, with the chain that leads to it.

    ``group``: the group argument as written (None: the default group); for a
    group creation, its arguments as written.
    """

    op: str
    group: str | None
    group_axes: frozenset[str] | None
    kind: CallKind
    chain: tuple[Hop, ...]
    lazy: bool = False
    # Not a collective: the point where the code tests a value received from
    # a root (see Cond.received). What follows is the sender's choice.
    peer: bool = False
    # The group's global ranks, where its creation lists them.
    members: frozenset[int] | None = None
    # Keys of the undecided rank-invariant tests it is under in the function
    # of the chain's first hop (see Cond.key): a call that passes one of them
    # an argument the analysis cannot evaluate decides whether it runs.
    under: frozenset[str] = frozenset()
    # Such a test on the way (its text): the collective is reached only when
    # an argument makes it go that way.
    conditional: str | None = None

    # A reduction's op (see Collective.reduce_op): None where unknown.
    reduce_op: str | None = None
    # See Collective.backend_shown.
    backend_shown: bool = False
    # See Collective.mesh_group.
    mesh_group: bool = False
    # See Collective.group_param: set in the function that issues it, not above.
    group_param: str | None = None

    @property
    def key(self) -> tuple[str, str | None]:
        return (self.op, self.group)

    def same(self, other: CollectiveLeaf) -> bool:
        """The same collective on the same group, with no reduce op known to differ."""
        ops = (self.reduce_op, other.reduce_op)
        return self.key == other.key and (None in ops or ops[0] == ops[1])

    def under_test(self, keys: frozenset[str]) -> CollectiveLeaf:
        """This leaf in an arm of an undecided test with these keys."""
        return replace(self, under=self.under | keys) if keys and not self.peer else self

    def on_passed_group(self, made: Mapping[str, str]) -> CollectiveLeaf:
        """This leaf where the call passes, for the parameter its group is (see
        Collective.group_param), a group the caller shows the make-up of (``made``:
        parameter -> EVERY_RANK or MESH_GROUP, see analysis.walk.membership.made_group;
        a parameter left to a default of None is the default group, EVERY_RANK)."""
        # (No parameter is named None: `made.get(None)` would read the same, not mutated.)
        param = self.group_param
        how = made.get(param) if param is not None else None  # pragma: no mutate
        if how == EVERY_RANK:
            return replace(self, group_axes=frozenset())
        return replace(self, mesh_group=True) if how == MESH_GROUP else self

    def called_from(self, hop: Hop, unknown: AbstractSet[str]) -> CollectiveLeaf:
        """This leaf as a caller reaches it through ``hop``, a call that passes the
        parameters ``unknown`` values the analysis cannot evaluate: a test of one
        of them on the way decides whether the collective runs."""
        decided_by = ", ".join(f"`{key}`" for key in sorted(self.under & unknown)) or None
        return replace(
            self,
            chain=(hop, *self.chain),
            under=frozenset(),
            conditional=self.conditional or decided_by,
            group_param=None,
        )


# Marks a test of a received value in a sequence (see CollectiveLeaf.peer).
OPEN = CollectiveLeaf("<sender's choice>", None, frozenset(), CallKind.COLLECTIVE, (), peer=True)


def argument_keys(cond: Cond | None) -> frozenset[str]:
    """The keys of a test and of its operands (those it decides alone, and those
    assumed beside a rank operand) that a call's argument may decide."""
    if cond is None:
        return frozenset()
    operands = (*(part[0] for part in cond.parts), *(key for key, _ in cond.assumptions))
    return frozenset(key for key in (cond.key, *operands) if key)


def leaf_of(event: Collective, path: str) -> CollectiveLeaf:
    return CollectiveLeaf(
        event.op,
        event.group,
        event.group_axes,
        event.kind,
        (Hop(path, event.site, shown(event)),),
        event.lazy,
        members=event.members,
        reduce_op=event.reduce_op,
        backend_shown=event.backend_shown,
        mesh_group=event.mesh_group,
        group_param=event.group_param,
    )


def shown(event: Collective) -> str:
    """How a collective reads in a chain: a call, or a property read (`trainer.log_dir`)."""
    return event.label if event.op in PROPERTY_COLLECTIVES else f"{event.label}()"


def wrapped_forward(
    event: CallEvent, bindings: Mapping[str, Literal], path: str
) -> CollectiveLeaf | None:
    """The collective a forward of a parameter issues (``event``, see
    CallEvent.param_call) where the call being followed passed a wrapped model for
    it (``bindings``: the parameters' values, see analysis.walk.wrapped); else None."""
    if event.param_call is None:
        return None
    param, method = event.param_call
    value = bindings.get(param)
    if not (isinstance(value, str) and value.startswith(WRAPPED_PREFIX)):
        return None
    spec = lookup(f"{value[len(WRAPPED_PREFIX) :]}.{method}")
    if spec is None:
        return None
    hop = Hop(path, event.site, f"{event.label}()")
    return CollectiveLeaf(spec.short, None, frozenset(), spec.kind, (hop,))


def issued(leaves: list[CollectiveLeaf]) -> list[CollectiveLeaf]:
    """The collectives among ``leaves`` (without the marks of received-value tests)."""
    return [leaf for leaf in leaves if not leaf.peer]


def agree(first: Sequence[CollectiveLeaf], second: Sequence[CollectiveLeaf]) -> bool:
    """Whether two sides issue the same collectives, as far as can be told.

    A side that reaches a test of a value received from a root (``peer``
    leaves: a worker's `if message == STOP: return` loop) is open: it goes on
    as the sender chooses, so it agrees with a side that begins with the
    collectives it issues before that test.
    """
    cuts = [next((i for i, leaf in enumerate(side) if leaf.peer), None) for side in (first, second)]
    heads = [first[: cuts[0]], second[: cuts[1]]]
    common = min(len(heads[0]), len(heads[1]))
    if first_difference(heads[0], heads[1]) < common:
        return False
    if len(heads[0]) == len(heads[1]):
        return True
    # The heads differ in length here: `<` and `<=` pick the same side.
    shorter = 0 if len(heads[0]) < len(heads[1]) else 1  # pragma: no mutate
    return cuts[shorter] is not None


def relevant(leaf: CollectiveLeaf, cond: RankCond) -> bool:
    """Can ``cond`` differ between members of the leaf's group?"""
    if leaf.peer:
        return True  # not a collective: kept to mark where a side turns open
    if leaf.kind is CallKind.GROUP_CREATION:
        return True  # every rank must create every group
    if leaf.members and cond.rank_test is not None:
        return splits(cond.rank_test, leaf.members)  # `if rank == 2:` on `new_group([2, 3])`
    if cond.membership and leaf.group is not None:
        return False  # `if rank in ranks: ... group=g`: members all take the branch
    if leaf.group_axes is None:
        # Unknown members (`group=self.pg`): maybe just the ranks that branch (an RL
        # trainer's rank 0 and its inference engines). A framework's own group (a
        # DTensor's mesh) spans the ranks that shard the object: one global rank
        # that takes a side alone does not reach it alone (see alone_on_its_side).
        return (leaf.group is None or leaf.mesh_group) and one_rank_test(cond)
    if not leaf.group_axes or GLOBAL_AXIS in cond.axes:
        return True  # the default group, or a condition on the global rank
    return bool(cond.axes & leaf.group_axes)


def first_difference(first: Sequence[CollectiveLeaf], second: Sequence[CollectiveLeaf]) -> int:
    """The index of the first collective where two sides differ (the shorter
    side's length where one side is the other's beginning)."""
    index = 0
    while index < len(first) and index < len(second) and first[index].same(second[index]):
        index += 1
    return index


def one_rank_test(cond: RankCond) -> bool:
    """A test of the global rank against one number (`rank == 0`, `rank != 3`):
    one global rank takes one of its sides alone."""
    return cond.rank_test is not None and cond.rank_test[0] in ("==", "!=")


def unknown_members(leaf: CollectiveLeaf) -> bool:
    """A collective on a group nothing says the members of (a DTensor's mesh)."""
    return (
        leaf.group_axes is None
        and not leaf.members
        and not leaf.peer
        and leaf.kind is not CallKind.GROUP_CREATION
    )


class DivergenceKind(enum.Enum):
    """How ranks come to disagree about a collective."""

    # A decorator (`@rank_zero_only`) runs the function on one rank only.
    RANK_ONLY_FUNCTION = "rank-only-function"
    # The collective is in a loop whose trip count depends on the rank.
    LOOP_TRIP_COUNT = "loop-trip-count"
    # The two paths issue different collectives at the same position.
    MISMATCH = "mismatch"
    # Ranks that exit early (return, continue, ...) skip the collective.
    SKIPPED_AFTER_EXIT = "skipped-after-exit"
    # Only the ranks on one side of the condition reach the collective.
    ONE_SIDE_ONLY = "one-side-only"


@dataclass(frozen=True)
class Divergence:
    """A collective (or group creation) that not every member of its group reaches alike."""

    kind: DivergenceKind
    leaf: CollectiveLeaf
    rank_cond: RankCond  # the rank test, with its evidence
    # The ranks in question are those where the condition is false.
    when_false: bool = False
    # MISMATCH: what the other ranks issue at the same position.
    other: CollectiveLeaf | None = None
    # SKIPPED_AFTER_EXIT: return, exit, continue or break; and whether the
    # exiting arm leaves only on some paths (`if rank == 0: if stale > patience: return`).
    exit_kind: ExitKind | None = None
    exit_on_some_paths: bool = False

    @property
    def condition(self) -> str:
        """The rank condition as written (`rank == 0`, or the decorator `@rank_zero_only`)."""
        return self.rank_cond.text


def alone_on_its_side(divergence: Divergence) -> bool:
    """Whether one global rank reaches the divergence's collective alone (`if rank
    == 0:` around it, or `if rank != 0: return` before it): a group it reaches
    alone completes only if the group has that one member."""
    cond = divergence.rank_cond
    if divergence.kind is DivergenceKind.MISMATCH:
        return False  # two groups nothing says the members of: each may hold its side
    if not one_rank_test(cond) or cond.rank_test is None:
        return False
    alone_when = cond.rank_test[0] == "=="  # the truth of the test on the lone rank's side
    if divergence.kind is DivergenceKind.SKIPPED_AFTER_EXIT:
        return divergence.when_false == alone_when  # the ranks that do not exit reach it
    return (not divergence.when_false) == alone_when


@dataclass(frozen=True, slots=True)
class Tail:
    """The code that runs after a block ends, for an early exit in it to skip.

    ``loop``: the blocks to the end of the innermost enclosing loop's body
    (what a ``continue`` or ``break`` skips); ``function``: those after that
    loop, to the end of the function (what a ``return`` skips as well); each
    innermost first. The blocks are kept, not copied, so entering a nested
    block costs its depth, not its length. Later iterations of the loops are
    not included: a finding names the first collective skipped.
    """

    loop: tuple[Sequence[Event], ...] = ()
    function: tuple[Sequence[Event], ...] = ()

    def after(self, rest: Sequence[Event]) -> Tail:
        """The tail of a block nested before ``rest`` (an arm, a handler)."""
        return Tail((rest, *self.loop), self.function)

    def into_loop(self, rest: Sequence[Event]) -> Tail:
        """The tail of a loop's body, where the loop is followed by ``rest``."""
        return Tail((), (rest, *self.loop, *self.function))

    def skipped(self, kind: ExitKind) -> list[Event]:
        """What an exit of ``kind`` skips of the tail, in order."""
        blocks = (*self.loop, *self.function) if kind in FUNCTION_EXITS else self.loop
        return [event for block in blocks for event in block]


NO_TAIL = Tail()
