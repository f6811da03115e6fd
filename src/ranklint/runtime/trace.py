"""``ranklint trace``: the companion's per-rank diff, on Flight Recorder dumps of a real job.

Pure Python, like the linter: it never imports torch. A hung job leaves one
Flight Recorder dump per rank (``${TORCH_FR_DUMP_TEMP_FILE}<rank>``); this
module finds them (:func:`find_dumps`), reads them with the restricted
unpickler of :mod:`ranklint.runtime.flight_recorder` (:func:`load_dumps`),
rebuilds every rank's collectives per group and diffs them with
:func:`ranklint.runtime.report.first_divergence` (:func:`analyse`), the diff
gloo mode runs on its own ranks' dumps.

Group membership comes from the dumps: ``pg_config`` where the backend filled
it in (NCCL); gloo leaves it empty, so the default group holds every rank and
another group the ranks whose dumps name it. A rank that left no dump is left
out of the comparison and named first: it may have died, or never reached the
collective the others wait in.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import ranklint.runtime.stacks as stacks
from ranklint.runtime.flight_recorder import (
    DumpError,
    RankDump,
    TracedOp,
    as_collective,
    read_dump,
)
from ranklint.runtime.report import (
    Collective,
    Divergence,
    DivergenceError,
    RankView,
    first_divergence,
    render,
)

logger = logging.getLogger(__name__)

#: torch's default dump prefix (``TORCH_FR_DUMP_TEMP_FILE``).
DEFAULT_PREFIX = "nccl_trace_rank_"
_RANKED = re.compile(r"^(.*?)(\d+)$")
_TORCH = re.compile(r"^(.*?[/\\]torch[/\\])(?:distributed|nn|autograd|utils|_[\w]+)[/\\]")
_STDLIB = re.compile(r"^(.*[/\\]lib[/\\]python3\.\d+[/\\])([^/\\]+)")


class TraceInputError(Exception):
    """No dumps, an unreadable file, or a file that is not a Flight Recorder dump."""


def _split_prefix(prefix: str | None) -> tuple[str | None, str | None]:
    """``--prefix /tmp/nccl_trace_rank_`` -> the folder and the file-name prefix."""
    if prefix is None:
        return None, None
    folder, name = os.path.split(prefix)
    return folder or None, name


def _in_folder(folder: Path, prefix: str | None) -> list[tuple[int, Path]]:
    """The files of ``folder`` named ``<prefix><rank>``; the prefix inferred when not given."""
    ranked: dict[str, list[tuple[int, Path]]] = {}
    for path in sorted(folder.iterdir()):
        match = _RANKED.match(path.name)
        if path.is_file() and match is not None:
            ranked.setdefault(match.group(1), []).append((int(match.group(2)), path))
    if prefix is not None:
        # Given, the prefix decides where the rank starts (it may end in a digit).
        found = [
            (int(path.name[len(prefix) :]), path)
            for path in sorted(folder.iterdir())
            if path.is_file()
            and path.name.startswith(prefix)
            and path.name[len(prefix) :].isdigit()
        ]
    elif len(ranked) == 1:
        found = next(iter(ranked.values()))
    elif DEFAULT_PREFIX in ranked:
        found = ranked[DEFAULT_PREFIX]
    elif ranked:
        names = ", ".join(sorted(repr(p) for p in ranked))
        raise TraceInputError(
            f"{folder}: files named with several prefixes ({names}); choose one with --prefix"
        )
    else:
        found = []  # pragma: no mutate (None also reads as no dumps)
    if not found:
        named = f"{prefix}<rank>" if prefix is not None else "<prefix><rank>"
        raise TraceInputError(f"{folder}: no Flight Recorder dumps (files named {named})")
    return found


def find_dumps(paths: Sequence[str], prefix: str | None = None) -> list[tuple[int | None, Path]]:
    """The dump files named by ``paths`` (folders or files) and their ranks.

    A file's rank is the number its name ends in (after ``prefix`` when given);
    ``None`` leaves it to the dump's content.
    """
    folder, name_prefix = _split_prefix(prefix)
    if not paths:
        if folder is None:
            raise TraceInputError(
                "name a folder of dumps or the dump files (or --prefix /path/to/prefix_)"
            )
        paths = [folder]
    found: list[tuple[int | None, Path]] = []
    for text in paths:
        path = Path(text)
        if path.is_dir():
            found.extend(_in_folder(path, name_prefix))
        elif path.is_file():
            rest = path.name
            if name_prefix is not None and rest.startswith(name_prefix):
                rest = rest[len(name_prefix) :]
            match = _RANKED.match(rest)
            found.append((int(match.group(2)) if match else None, path))
        else:
            raise TraceInputError(f"{path}: no such file or directory")
    return found


def load_dumps(found: Sequence[tuple[int | None, Path]]) -> list[RankDump]:
    """Read and check every dump; :class:`TraceInputError` names the first bad file."""
    dumps: dict[int, RankDump] = {}
    for rank, path in found:
        try:
            data = path.read_bytes()
        except OSError as error:
            raise TraceInputError(f"{path}: cannot read: {error.strerror or error}") from error
        try:
            dump = read_dump(data, rank, str(path))
        except DumpError as error:
            raise TraceInputError(f"{path}: not a Flight Recorder dump: {error}") from error
        if dump.rank in dumps:
            raise TraceInputError(
                f"two dumps for rank {dump.rank}: {dumps[dump.rank].source} and {path}"
            )
        dumps[dump.rank] = dump
    if not dumps:
        raise TraceInputError("no Flight Recorder dumps")
    return [dumps[rank] for rank in sorted(dumps)]


def library_roots(dumps: Sequence[RankDump]) -> tuple[str, ...]:
    """The folders whose frames are never the user's, as the dumping machine laid them out:
    torch's package and the standard library's modules (never its site-packages)."""
    roots = set(stacks.library_roots(stacks.__file__))
    for dump in dumps:
        for traced in dump.ops:
            for file, _line, _name in traced.op.frames:
                torch = _TORCH.match(file)
                if torch is not None:
                    roots.add(torch.group(1))
                    continue
                stdlib = _STDLIB.match(file)
                if stdlib is not None and stdlib.group(2) not in ("site-packages", "dist-packages"):
                    module = stdlib.group(2)
                    roots.add(stdlib.group(1) + module + ("" if module.endswith(".py") else "/"))
    return tuple(sorted(roots))


@dataclass(frozen=True)
class Trace:
    """What the dumps say: each rank's view, the first divergence, who left no dump."""

    ranks: tuple[int, ...]
    missing: tuple[int, ...]
    views: tuple[RankView, ...]
    divergence: Divergence | None
    #: collectives compared: over every group, the longest member's count.
    compared: int
    #: each rank's oldest collective that had not completed at its dump, and its state.
    in_flight: Mapping[int, tuple[Collective, str]]
    #: the groups whose members were inferred (gloo's empty ``pg_config``).
    inferred: tuple[str, ...] = ()
    #: group name -> the sequence number its positions count from, where a ring buffer
    #: dropped older entries (Flight Recorder numbers a group's collectives from 1).
    starts: Mapping[str, int] = field(default_factory=dict)

    def error(self) -> DivergenceError | None:
        """The divergence as the companion raises it (for ``static.notes_for``)."""
        if self.divergence is None:
            return None
        return DivergenceError(self.divergence, self.views)


def _memberships(
    dumps: Sequence[RankDump], world: int
) -> tuple[dict[str, tuple[int, ...]], list[str]]:
    configured: dict[str, tuple[int, ...]] = {}
    for dump in dumps:
        for name, ranks in dump.groups.items():
            configured.setdefault(name, ranks)
    seen: dict[str, set[int]] = {}
    default: set[str] = set()
    for dump in dumps:
        for traced in dump.ops:
            seen.setdefault(traced.op.group_name, set()).add(dump.rank)
            if traced.group_desc == "default_pg":
                default.add(traced.op.group_name)
    groups: dict[str, tuple[int, ...]] = {}
    inferred: list[str] = []
    for name, ranks in seen.items():
        if name in configured:
            groups[name] = configured[name]
        elif name in default:
            groups[name] = tuple(range(world))
        else:
            groups[name] = tuple(sorted(ranks))
            inferred.append(name)
    return groups, sorted(inferred)


def _logs(
    dump: RankDump, groups: Mapping[str, tuple[int, ...]], starts: Mapping[str, int], roots: Any
) -> tuple[list[Collective], list[TracedOp]]:
    """A rank's collectives, numbered per group from the first sequence all its members
    still hold (older entries may have left some ranks' ring buffers)."""
    counts: dict[str, int] = {}
    log: list[Collective] = []
    kept: list[TracedOp] = []
    for traced in dump.ops:
        op = traced.op
        if op.seq < starts[op.group_name]:
            continue
        position = counts.get(op.group_name, 0)
        counts[op.group_name] = position + 1
        log.append(as_collective(op, groups[op.group_name], position, roots))
        kept.append(traced)
    return log, kept


def analyse(dumps: Sequence[RankDump], world_size: int | None = None) -> Trace:
    """Diff the dumps' collectives group by group, as gloo mode diffs its ranks."""
    present = tuple(dump.rank for dump in dumps)
    known = set(present) | {r for dump in dumps for ranks in dump.groups.values() for r in ranks}
    world = max(known) + 1 if world_size is None else max(world_size, max(known) + 1)
    missing = tuple(rank for rank in range(world) if rank not in present)
    groups, inferred = _memberships(dumps, world)
    roots = library_roots(dumps)
    starts: dict[str, int] = {}
    for dump in dumps:
        first: dict[str, int] = {}
        for traced in dump.ops:
            first.setdefault(traced.op.group_name, traced.op.seq)
        for name, seq in first.items():
            starts[name] = max(starts.get(name, seq), seq)
    views: list[RankView] = []
    compare: list[RankView] = []  # the same logs, each group cut down to the ranks with a dump
    in_flight: dict[int, tuple[Collective, str]] = {}
    here = {name: tuple(r for r in ranks if r in present) for name, ranks in groups.items()}
    for dump in dumps:
        log, kept = _logs(dump, groups, starts, roots)
        stuck = next((i for i, t in enumerate(kept) if not t.completed), None)
        waiting = log[stuck] if stuck is not None else None
        if stuck is not None:
            in_flight[dump.rank] = (log[stuck], kept[stuck].state or "unknown")
        state = "waiting" if waiting is not None else "running"
        views.append(RankView(dump.rank, state, tuple(log), waiting_in=waiting))
        cut = tuple(replace(c, group=here[c.group_name]) for c in log)
        compare.append(RankView(dump.rank, state, cut))  # pragma: no mutate (only its log is read)
    found = first_divergence(compare)
    divergence = None
    if found is not None:
        # The same collectives with their whole groups (the logs run in parallel).
        by_rank = {view.rank: view for view in views}
        at = {}
        for rank, collective in found.at.items():
            index = next(i for i, c in enumerate(_rank_log(compare, rank)) if c is collective)
            at[rank] = by_rank[rank].log[index]
        divergence = replace(found, group=groups[found.group_name], at=at)
    compared = 0
    for name in groups:
        compared += max(len(view.on_group(name)) for view in views)
    wrapped = {name: seq for name, seq in starts.items() if seq > 1}
    return Trace(
        present, missing, tuple(views), divergence, compared, in_flight, tuple(inferred), wrapped
    )


def _rank_log(views: Sequence[RankView], rank: int) -> tuple[Collective, ...]:
    return next(view.log for view in views if view.rank == rank)


def _ranks_text(ranks: Sequence[int]) -> str:
    return ", ".join(str(rank) for rank in ranks)


def _where(collective: Collective, state: str = "") -> str:
    text = f"{collective.op} #{collective.seq} on group {list(collective.group)}{state}"
    return text + (f" at {collective.site}" if collective.site is not None else "")


def render_trace(trace: Trace, notes: Mapping[tuple[str, int], str] | None = None) -> str:
    """The text ``ranklint trace`` prints: missing ranks, the diff, where each rank stood."""
    lines: list[str] = []
    if trace.missing:
        plural = "s" if len(trace.missing) > 1 else ""
        lines.append(
            f"no dump from rank{plural} {_ranks_text(trace.missing)} (of ranks 0-"
            f"{len(trace.ranks) + len(trace.missing) - 1}): a rank without a dump may have died "
            "or never reached the collective the others wait in; the diff compares the others"
        )
    if trace.divergence is not None:
        lines.append(render(trace.divergence, trace.views, notes))
    else:
        lines.append(
            f"no divergence across {len(trace.ranks)} ranks, {trace.compared} "
            f"collective{'' if trace.compared == 1 else 's'} compared"
        )
    if trace.in_flight or (trace.divergence is not None or trace.missing):
        lines.append("where each rank stood when it dumped (Flight Recorder's entry state):")
        for view in trace.views:
            stuck = trace.in_flight.get(view.rank)
            if stuck is not None:
                collective, state = stuck
                where = _where(collective, f" ({state}, not completed)")
                lines.append(f"  rank {view.rank}: in {where}")
            elif view.log:
                last = _where(view.log[-1])
                lines.append(f"  rank {view.rank}: every collective completed; last {last}")
            else:
                lines.append(f"  rank {view.rank}: no collective recorded")
        lines.extend(f"  rank {rank}: no dump" for rank in trace.missing)
    for name, seq in sorted(trace.starts.items()):
        lines.append(
            f"(group {name!r}: older entries left some ranks' ring buffers; #0 is the collective "
            f"with sequence number {seq}, TORCH_FR_BUFFER_SIZE sets the buffer's length)"
        )
    if trace.inferred:
        lines.append(
            f"(members of group{'s' if len(trace.inferred) > 1 else ''} "
            f"{_ranks_text_names(trace.inferred)} inferred from the dumps that name them: "
            "the dumps carry no pg_config ranks, as gloo writes them)"
        )
    return "\n".join(lines) + "\n"


def _ranks_text_names(names: Sequence[str]) -> str:
    return ", ".join(repr(name) for name in names)


def _collective_json(
    collective: Collective, notes: Mapping[tuple[str, int], str]
) -> dict[str, Any]:
    site = collective.site
    return {
        "op": collective.op,
        "position": collective.seq,
        "group": list(collective.group),
        "group_name": collective.group_name,
        "shapes": [list(shape) for shape in collective.shapes],
        "dtypes": list(collective.dtypes),
        "api": collective.api,
        "site": None
        if site is None
        else {"file": site.file, "line": site.line, "function": site.function},
        "static": notes.get((site.file, site.line)) if site is not None else None,
    }


def trace_json(trace: Trace, notes: Mapping[tuple[str, int], str] | None = None) -> dict[str, Any]:
    """The structured form of :func:`render_trace` (``--output-format json``)."""
    notes = notes or {}
    divergence = None
    if trace.divergence is not None:
        found = trace.divergence
        divergence = {
            "group": list(found.group),
            "group_name": found.group_name,
            "position": found.position,
            "reason": found.reason,
            "ranks": {
                str(rank): _collective_json(collective, notes)
                for rank, collective in sorted(found.at.items())
            },
        }
    return {
        "ranks": list(trace.ranks),
        "missing_ranks": list(trace.missing),
        "collectives_compared": trace.compared,
        "divergence": divergence,
        "in_flight": {
            str(rank): {**_collective_json(collective, notes), "state": state}
            for rank, (collective, state) in sorted(trace.in_flight.items())
        },
        "inferred_groups": list(trace.inferred),
        "text": render_trace(trace, notes),
    }


def absent_sources(trace: Trace) -> list[str]:
    """The files of the divergence's sites that are not on this machine."""
    if trace.divergence is None:
        return []
    files = set()
    for collective in trace.divergence.at.values():
        for site in (collective.site, *collective.callers):
            if site is not None:
                files.add(site.file)
    return sorted(file for file in files if not os.path.isfile(file))
