"""What the runtime companion records per rank, and how a divergence reads.

Pure Python: nothing here imports torch, so the diff logic is tested on its own.
A :class:`Collective` is one collective as one rank issued it; a rank's log is
the list of them in issue order. :func:`first_divergence` compares the logs of
the members of each group position by position, and :class:`DivergenceError`
renders the first disagreement with one line per rank and the sequences up to it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

logger = logging.getLogger(__name__)

#: How many collectives before the mismatch each rank's sequence shows.
CONTEXT = 4
#: How many of a collective's callers the report shows before counting the rest.
CHAIN = 4


@dataclass(frozen=True)
class Site:
    """A place in the user's code: the innermost frame outside torch and ranklint."""

    file: str
    line: int
    function: str

    def __str__(self) -> str:
        return f"{_short(self.file)}:{self.line} in {self.function}()"


def _short(path: str) -> str:
    """``path`` relative to the working folder when it lies under it, else as is."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return path
    return path if relative.startswith("..") else relative


@dataclass(frozen=True)
class Collective:
    """One collective as one rank issued it.

    ``group`` holds the global ranks of the group's members, ``seq`` the position
    of this collective among those the rank issued on that group (0-based).
    ``root`` is the global rank of ``src``/``dst`` where the op has one, and
    ``reduce_op`` the reduction's name where it has one; ``None`` where unknown.
    ``api`` names the torch function the user called when it is not the op
    itself (``full_tensor``, ``backward``, ``broadcast_object_list``).
    """

    op: str
    group: tuple[int, ...]
    group_name: str
    seq: int
    shapes: tuple[tuple[int, ...], ...] = ()
    dtypes: tuple[str, ...] = ()
    root: int | None = None
    reduce_op: str | None = None
    api: str | None = None
    site: Site | None = None
    extra: tuple[tuple[str, str], ...] = ()
    #: the user frames that called ``site``'s function, innermost first (not compared).
    callers: tuple[Site, ...] = ()

    def signature(self) -> tuple[object, ...]:
        """What every member must agree on."""
        return (
            self.op,
            self.group,
            self.shapes,
            self.dtypes,
            self.root,
            self.reduce_op,
            self.extra,
        )

    def differences(self, other: Collective) -> list[str]:
        """The names of the fields where ``other`` disagrees with this one."""
        names = ("op", "group", "shape", "dtype", "root", "reduce op", "arguments")
        mine, theirs = self.signature(), other.signature()
        return [name for index, name in enumerate(names) if mine[index] != theirs[index]]

    def describe(self, *, dtypes: bool = False) -> str:
        """``all_reduce(group=[0, 1], shape=(4,), op=SUM)``; dtypes on request."""
        parts = [f"group={list(self.group)}"]
        if len(self.shapes) == 1:
            parts.append(f"shape={_shape(self.shapes[0])}")
        elif self.shapes:
            parts.append("shapes=[" + ", ".join(_shape(s) for s in self.shapes) + "]")
        if dtypes and self.dtypes:
            parts.append("dtype=" + ",".join(self.dtypes))
        if self.root is not None:
            parts.append(f"{_root_name(self.op)}={self.root}")
        if self.reduce_op is not None:
            parts.append(f"op={self.reduce_op}")
        parts.extend(f"{key}={value}" for key, value in self.extra)
        text = f"{self.op}({', '.join(parts)})"
        if self.api is not None and self.api != self.op:
            text += f" via {self.api}()"
        if self.site is not None:
            text += f" at {self.site}"
        return text


def _shape(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


def _root_name(op: str) -> str:
    return "dst" if op in {"reduce", "gather"} else "src"


@dataclass(frozen=True)
class RankView:
    """What one rank was doing when the run stopped.

    ``state`` is ``"waiting"`` (in ``waiting_in``), ``"finished"``, ``"failed"``
    (``error`` holds the exception's last line), ``"ready"`` (its collective
    completed; threads mode, another rank holds the turn), ``"pending"``
    (threads mode stopped at a divergence before this rank's turn came) or
    ``"running"`` (``stack`` holds its user frames, innermost last).
    """

    rank: int
    state: str
    log: tuple[Collective, ...]
    waiting_in: Collective | None = None
    error: str | None = None
    stack: tuple[Site, ...] = ()

    def on_group(self, group_name: str) -> list[Collective]:
        """This rank's collectives on the named group, in order (the one it waits in too)."""
        return [c for c in self.log if c.group_name == group_name]

    def status(self) -> str:
        """One phrase for where the rank is: ``finished``, ``waiting in ...``, ``at ...``."""
        if self.state == "waiting" and self.waiting_in is not None:
            return "waiting in " + self.waiting_in.describe()
        if self.state == "failed":
            return f"raised {self.error}"
        if self.state == "ready":
            return "ready to run, but another rank never gave up its turn (threads mode)"
        if self.state == "pending":
            return (
                "had not reached this point when the run stopped (threads mode runs one rank "
                "at a time, and stopped at the first difference)"
            )
        if self.state == "running" and self.stack:
            return f"still running at {self.stack[-1]} (no collective)"
        if self.state == "running":
            return "still running (no collective)"
        return "returned from the function (no collective)"


@dataclass(frozen=True)
class Divergence:
    """The first position where the members of one group disagree."""

    group: tuple[int, ...]
    group_name: str
    position: int
    reason: str
    #: each member's collective at ``position``; absent for members that have none.
    at: Mapping[int, Collective] = field(default_factory=dict)
    #: the earliest position before ``position`` whose collectives the members issued
    #: from different call sites (:func:`first_site_difference`): they may have been
    #: out of step from there. ``None`` where every earlier call site agrees.
    first_site_difference: int | None = None


class RuntimeCompanionError(Exception):
    """Base of the runtime companion's errors."""


class DivergenceError(RuntimeCompanionError):
    """The ranks issued collectives that disagree, or some never issued one."""

    def __init__(
        self,
        divergence: Divergence,
        views: Sequence[RankView],
        *,
        notes: Mapping[tuple[str, int], str] | None = None,
    ) -> None:
        self.divergence = divergence
        self.views = tuple(views)
        self.notes = dict(notes or {})
        super().__init__(render(divergence, self.views, self.notes))

    def annotate(self, notes: Mapping[tuple[str, int], str]) -> DivergenceError:
        """A copy whose text adds ``notes`` (keyed by file and line) under matching sites."""
        return DivergenceError(self.divergence, self.views, notes={**self.notes, **notes})


class RankFailure(RuntimeCompanionError):
    """A rank raised: the text names the rank and shows its traceback."""

    def __init__(self, rank: int, error: BaseException, traceback_text: str) -> None:
        self.rank = rank
        self.error = error
        self.traceback_text = traceback_text
        super().__init__(
            f"rank {rank} raised {type(error).__name__}: {error}\n{traceback_text.rstrip()}"
        )


class RanksTimeout(RuntimeCompanionError, TimeoutError):
    """The deadline passed with ranks still running outside any collective."""

    def __init__(self, timeout: float, views: Sequence[RankView]) -> None:
        self.views = tuple(views)
        lines = [f"the ranks did not finish within {timeout:g} s; they were abandoned:"]
        for view in self.views:
            lines.append(f"  rank {view.rank}: {view.status()}")
            lines.extend(_chain(tuple(reversed(view.stack[:-1]))))
        super().__init__("\n".join(lines))


def _member_line(view: RankView | None, rank: int, divergence: Divergence, dtypes: bool) -> str:
    here = divergence.at.get(rank)
    if here is not None:
        return f"rank {rank}: {here.describe(dtypes=dtypes)}"
    if view is None:
        return f"rank {rank}: (no record)"
    issued = len(view.on_group(divergence.group_name))
    lead = f"rank {rank}: no collective #{divergence.position} on this group"
    return f"{lead} (issued {issued}); {view.status()}"


def _chain(callers: Sequence[Site]) -> list[str]:
    """``called from FILE:LINE in fn()`` per caller, innermost first, the rest counted."""
    lines = [f"      called from {site}" for site in callers[:CHAIN]]
    if len(callers) > CHAIN:
        lines.append(f"      ... {len(callers) - CHAIN} more")
    return lines


def _member_chain(view: RankView | None, rank: int, divergence: Divergence) -> list[str]:
    """The callers of the collective on the member's line: at the position, or waited in."""
    here = divergence.at.get(rank)
    if here is None and view is not None and view.state == "waiting":
        here = view.waiting_in
    return _chain(here.callers) if here is not None else []


def _note(collective: Collective, notes: Mapping[tuple[str, int], str]) -> str | None:
    """The static finding at the collective's site, or at the nearest caller that has one."""
    site = collective.site
    if site is not None and (site.file, site.line) in notes:
        return notes[(site.file, site.line)]
    for caller in collective.callers:
        note = notes.get((caller.file, caller.line))
        if note is not None:
            return f"at {caller}: {note}"
    return None


def render(
    divergence: Divergence,
    views: Sequence[RankView],
    notes: Mapping[tuple[str, int], str] | None = None,
) -> str:
    """The error text: the reason, one line per member, then each member's sequence."""
    by_rank = {view.rank: view for view in views}
    members = divergence.group
    dtypes = len({c.dtypes for c in divergence.at.values()}) > 1
    lines = [
        f"ranks diverged at collective #{divergence.position} on group {list(members)}: "
        f"{divergence.reason}"
    ]
    for rank in members:
        lines.append("  " + _member_line(by_rank.get(rank), rank, divergence, dtypes))
        lines.extend(_member_chain(by_rank.get(rank), rank, divergence))
        here = divergence.at.get(rank)
        note = _note(here, notes or {}) if here is not None else None
        if note is not None:
            lines.append(f"      ranklint: {note}")
    out_of_step = _site_difference(divergence, by_rank)
    if out_of_step is not None:
        lines.append(out_of_step)
    lines.append(f"sequences on group {list(members)} up to the mismatch (>> marks it):")
    for rank in members:
        view = by_rank.get(rank)
        log = view.on_group(divergence.group_name) if view is not None else []
        shown = log[: divergence.position + 1]
        start = max(0, len(shown) - CONTEXT - 1)
        lines.append(f"  rank {rank}:")
        if start:
            lines.append(f"        ... {start} earlier")
        for index in range(start, len(shown)):
            mark = ">>" if index == divergence.position else "  "
            lines.append(f"    {mark} #{index} {shown[index].describe(dtypes=dtypes)}")
        if len(shown) <= divergence.position:
            lines.append(f"    >> #{divergence.position} (none) {view.status() if view else ''}")
    return "\n".join(line.rstrip() for line in lines)


def _calls(collective: Collective) -> tuple[Site, ...]:
    """The collective's site and its callers, innermost first (empty where unknown)."""
    return (collective.site, *collective.callers) if collective.site is not None else ()


def first_site_difference(logs: Mapping[int, Sequence[Collective]], position: int) -> int | None:
    """The earliest position before ``position`` whose collectives the members issued
    from different call sites, or ``None``.

    ``logs`` holds each member's collectives on one group, in order. Two call
    sites differ where the site's file and line differ, or a caller's does: the
    same helper called from two lines counts. A position where some member's
    site is unknown, or where fewer than two members have a collective, is
    skipped. Ranks may legitimately issue one collective from two lines
    (``if rank == 0: all_reduce(x) else: all_reduce(x)``), so this only hints
    where the ranks may have gone out of step.
    """
    for index in range(position):
        chains = [_calls(log[index]) for log in logs.values() if index < len(log)]
        if len(chains) < 2 or () in chains:
            continue
        if len({tuple((site.file, site.line) for site in chain) for chain in chains}) > 1:
            return index
    return None


def _site_difference(divergence: Divergence, by_rank: Mapping[int, RankView]) -> str | None:
    """The report's line on where the members' call sites first differ, if they do."""
    index = divergence.first_site_difference
    if index is None:
        return None
    chains: dict[int, tuple[Site, ...]] = {}
    for rank in divergence.group:
        view = by_rank.get(rank)
        log = view.on_group(divergence.group_name) if view is not None else []
        if index < len(log) and log[index].site is not None:
            chains[rank] = _calls(log[index])
    if len(chains) < 2:
        return None
    # The innermost frame where the chains part: a helper's line when only its callers differ.
    longest = max(len(chain) for chain in chains.values())
    parted = (d for d in range(longest) if len({_frame_at(c, d) for c in chains.values()}) > 1)
    depth = next(parted, None)
    if depth is None:
        return None
    places: dict[str, list[int]] = {}
    for rank, chain in chains.items():
        site = chain[min(depth, len(chain) - 1)]
        places.setdefault(f"{_short(site.file)}:{site.line}", []).append(rank)
    where = ", ".join(
        f"rank{'s' if len(ranks) > 1 else ''} {_ranks(ranks)} at {place}"
        for place, ranks in places.items()
    )
    return (
        f"the call sites first differ at collective #{index}: {where} "
        "(the ranks may have been out of step from there)"
    )


def _frame_at(chain: Sequence[Site], depth: int) -> tuple[str, int] | None:
    return (chain[depth].file, chain[depth].line) if depth < len(chain) else None


def compare_position(
    group: tuple[int, ...], group_name: str, position: int, at: Mapping[int, Collective]
) -> Divergence | None:
    """The disagreement among the members' collectives at one position, if any."""
    present = [rank for rank in group if rank in at]
    if not present:
        return None
    first = at[present[0]]
    for rank in present[1:]:
        fields = first.differences(at[rank])
        if fields:
            reason = f"the ranks disagree on the {' and '.join(fields)}"
            return Divergence(group, group_name, position, reason, dict(at))
    missing = [rank for rank in group if rank not in at]
    if missing:
        plural = "s" if len(missing) > 1 else ""
        reason = f"rank{plural} {_ranks(missing)} never issued it"
        return Divergence(group, group_name, position, reason, dict(at))
    return None


def _ranks(ranks: Iterable[int]) -> str:
    return ", ".join(str(rank) for rank in ranks)


def first_divergence(views: Sequence[RankView]) -> Divergence | None:
    """The earliest disagreement between complete per-rank logs (gloo mode's diff).

    Each group is compared position by position over its members' logs; of the
    disagreements found, the one whose collective was issued earliest (by the
    lowest rank's log index) is returned. A member whose log is shorter than
    the others' on a group never issued the rest.
    """
    by_rank = {view.rank: view for view in views}
    groups: dict[str, tuple[int, ...]] = {}
    for view in views:
        for collective in view.log:
            groups.setdefault(collective.group_name, collective.group)
    found: list[tuple[tuple[int, int], Divergence]] = []
    for name, members in groups.items():
        logs = {rank: by_rank[rank].on_group(name) if rank in by_rank else [] for rank in members}
        longest = max(len(log) for log in logs.values())
        for position in range(longest):
            at = {rank: log[position] for rank, log in logs.items() if position < len(log)}
            divergence = compare_position(members, name, position, at)
            if divergence is not None:
                earlier = first_site_difference(logs, position)
                divergence = replace(divergence, first_site_difference=earlier)
                rank = min(at)
                order = next(i for i, c in enumerate(by_rank[rank].log) if c is at[rank])
                found.append(((order, rank), divergence))
                break
    if not found:
        return None
    # (order, rank) never ties between groups: one collective is on one group.
    return min(found, key=lambda item: item[0])[1]  # pragma: no mutate  (key=None is the same)


class RankDied(RankFailure):
    """A rank's process ended without reporting (gloo mode): ``os._exit``, a crash in
    native code, or a signal such as the out-of-memory killer's ``SIGKILL``.

    ``exitcode`` is the process's exit code, negative for a signal (as
    :mod:`multiprocessing` gives it). What the rank issued is unknown: its Flight
    Recorder buffer died with it, so the other ranks' state is shown instead.
    """

    def __init__(self, rank: int, exitcode: int | None, views: Sequence[RankView]) -> None:
        self.exitcode = exitcode
        self.views = tuple(views)
        how = _how_it_ended(exitcode)
        lines = [
            f"rank {rank} {how} before it reported (os._exit, a crash in native code, or a "
            "kill such as the out-of-memory killer's); what it issued is unknown"
        ]
        for view in self.views:
            if view.rank == rank:
                continue
            last = f"; its last collective: {view.log[-1].describe()}" if view.log else ""
            lines.append(f"  rank {view.rank}: {view.status()}{last}")
        error = ChildProcessError(f"rank {rank} {how}")
        super().__init__(rank, error, "")
        self.args = ("\n".join(lines),)

    def __str__(self) -> str:
        return str(self.args[0])


def _how_it_ended(exitcode: int | None) -> str:
    """``exited with code 3``, ``was killed by signal 9 (SIGKILL)``."""
    if exitcode is None:
        return "ended"
    if exitcode >= 0:
        return f"exited with code {exitcode}"
    import signal

    try:
        name = signal.Signals(-exitcode).name
    except ValueError:
        return f"was killed by signal {-exitcode}"
    return f"was killed by signal {-exitcode} ({name})"
