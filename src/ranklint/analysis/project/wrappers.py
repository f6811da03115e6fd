"""What a decorator of the project does with the function it wraps: run it on every
rank, or on the ranks a rank test selects.

A decorator the run can read (``def main_only(fn): def wrapper(...): if
dist.get_rank() == 0: return fn(...)``, or a factory ``@only_on(0)``) is judged
by its wrapper's events, not by its name: a home-made rank-zero guard is found
whatever it is called, and a look-alike that logs and then calls the function
on every rank is not taken for one. A decorator the run cannot read (imported
from an installed package, or built in a way the walk does not follow) is
judged by its name, as before (:mod:`ranklint.analysis.walk.decorators`).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from ranklint.analysis.project.callgraph import FunctionRef, ProjectIndex
from ranklint.analysis.project.sequences import RankCond
from ranklint.analysis.walk.axes import GLOBAL_AXIS
from ranklint.model.events import (
    Branch,
    CallEvent,
    Cond,
    Event,
    Exit,
    FunctionSummary,
    Loop,
    ModuleSummary,
    Opaque,
)

RankOf = Callable[[Cond | None, ModuleSummary, FunctionSummary], RankCond | None]

# A test that may read the rank without the walk seeing it (`rank_zero_only.rank ==
# 0`, `self.is_main`): a call under it is not taken as made on every rank.
_RANK_WORDS = re.compile(r"rank|main|master|leader|local|zero|primary|chief", re.IGNORECASE)


class Calls(enum.Enum):
    """How a wrapper calls the function it wraps, where no rank test guards it."""

    EVERY_RANK = "every-rank"  # at least once with no test before it
    UNKNOWN = "unknown"  # under a test the run cannot judge, or never


# Only under (or after an exit on) a rank test: the wrapper's first such test.
Verdict = RankCond | Calls


def wrapped_calls(ref: FunctionRef, rank_of: RankOf) -> Verdict:
    """How the decorator ``ref`` (or, for a factory, the decorator it returns) calls
    the function given to it: through the functions nested in it that call the
    first parameter of an enclosing one."""
    module, decorator = ref.module, ref.function
    inner = [
        f
        for name, f in module.functions.items()
        if name.startswith(decorator.qualname + ".") and not f.class_name
    ]
    guards: list[RankCond | Calls | None] = []
    for owner in (decorator, *inner):
        if not owner.params:
            continue
        target = "@local:" + owner.params[0]
        for wrapper in inner:
            if wrapper.qualname.startswith(owner.qualname + "."):
                _collect(wrapper.events, target, None, guards, module, wrapper, rank_of)
    if not guards or any(guard is Calls.UNKNOWN for guard in guards):
        return Calls.UNKNOWN
    if any(guard is None for guard in guards):
        return Calls.EVERY_RANK
    return next(guard for guard in guards if isinstance(guard, RankCond))


def _collect(
    events: Sequence[Event],
    target: str,
    guard: RankCond | Calls | None,
    out: list[RankCond | Calls | None],
    module: ModuleSummary,
    wrapper: FunctionSummary,
    rank_of: RankOf,
) -> bool:
    """Record the guard of each call of ``target`` in ``events``; whether the block
    always leaves (so that nothing after it runs)."""
    for event in events:
        if isinstance(event, CallEvent) and event.target == target:
            out.append(guard)
        elif isinstance(event, Branch):
            test = _test(event.cond, guard, module, wrapper, rank_of)
            left = [
                _collect(arm, target, test, out, module, wrapper, rank_of) for arm in event.arms
            ]
            if all(left):
                return True
            if any(left) and test is not guard:
                guard = test  # `if rank != 0: return` guards what follows
        elif isinstance(event, (Loop, Opaque)):
            _collect(event.body, target, guard, out, module, wrapper, rank_of)
        elif isinstance(event, Exit):
            return True
    return False


def _test(
    cond: Cond | None,
    guard: RankCond | Calls | None,
    module: ModuleSummary,
    wrapper: FunctionSummary,
    rank_of: RankOf,
) -> RankCond | Calls | None:
    """The guard inside a branch on ``cond``: its rank test, the guard outside it when
    the test cannot differ between ranks, or UNKNOWN when it may read the rank
    unseen."""
    if isinstance(guard, RankCond):
        return guard
    rank = rank_of(cond, module, wrapper)
    if rank is not None:
        return rank
    if cond is not None and _RANK_WORDS.search(cond.text):
        return Calls.UNKNOWN
    return guard  # the walk keeps no condition for a test no rank can change


class DecoratorJudge:
    """The rank test under which each decorated function runs, judged once per decorator."""

    def __init__(self, index: ProjectIndex, rank_of: RankOf) -> None:
        self.index = index
        self.rank_of = rank_of
        self._verdicts: dict[tuple[str, str], Verdict] = {}

    def rank_only(self, module: ModuleSummary, function: FunctionSummary) -> RankCond | None:
        """The test that a decorator of ``function`` runs it under, as a condition
        written `@name`; ``None`` when every decorator runs it on every rank.

        A decorator named like a rank-zero guard keeps its name's evidence unless
        its wrapper calls the function on every rank; one named otherwise counts
        when its wrapper calls the function only under a rank test."""
        by_name = function.rank_only
        for written, target in function.decorators:
            ref = self.index.resolve(target, module, function)
            if ref is None:
                continue
            verdict = self._verdicts.get(ref.key)
            if verdict is None:
                verdict = self._verdicts[ref.key] = wrapped_calls(ref, self.rank_of)
            if isinstance(verdict, RankCond) and by_name != "@" + written:
                # The wrapper's test, with its evidence, written as the decorator.
                return replace(verdict, text="@" + written, wrapper_test=verdict.text)
            if verdict is Calls.EVERY_RANK and by_name == "@" + written:
                by_name = None  # named like a rank-zero guard, but it calls on every rank
        if by_name is None:
            return None
        return RankCond(by_name, frozenset({GLOBAL_AXIS}), False)
