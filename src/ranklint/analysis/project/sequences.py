"""The collectives a piece of code issues, as the project phase sequences them.

A :class:`CollectiveLeaf` is one collective with the call chain that reaches
it; sequences of leaves are what :mod:`ranklint.analysis.project.divergences`
compares between the ranks on either side of a rank-dependent test.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace

from ranklint.analysis.project.callgraph import Hop
from ranklint.analysis.walk.catalog import PROPERTY_COLLECTIVES
from ranklint.model.events import Collective, Cond
from ranklint.model.kinds import CallKind


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

    @property
    def key(self) -> tuple[str, str | None]:
        return (self.op, self.group)

    def under_test(self, keys: frozenset[str]) -> CollectiveLeaf:
        """This leaf in an arm of an undecided test with these keys."""
        return replace(self, under=self.under | keys) if keys and not self.peer else self

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
    )


def shown(event: Collective) -> str:
    """How a collective reads in a chain: a call, or a property read (`trainer.log_dir`)."""
    return event.label if event.op in PROPERTY_COLLECTIVES else f"{event.label}()"


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
    heads = [[leaf.key for leaf in first[: cuts[0]]], [leaf.key for leaf in second[: cuts[1]]]]
    common = min(len(heads[0]), len(heads[1]))
    if heads[0][:common] != heads[1][:common]:
        return False
    if len(heads[0]) == len(heads[1]):
        return True
    # The heads differ in length here: `<` and `<=` pick the same side.
    shorter = 0 if len(heads[0]) < len(heads[1]) else 1  # pragma: no mutate
    return cuts[shorter] is not None
