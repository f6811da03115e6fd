"""Reading Flight Recorder dumps without torch.

Pure Python: gloo mode reads its ranks' dumps through :func:`recorded_ops`
(via ``_torch.read_flight_recorder``), and ``ranklint trace`` reads dumps that
a real job wrote through :func:`read_dump`, which unpickles with
:class:`RestrictedUnpickler` (a dump from another machine is untrusted input:
unpickling it must not run code).

A dump is a pickled dict: ``version``, ``pg_config`` (group name -> its name,
description and ranks; gloo leaves it empty), ``pg_status`` (``pg_id`` -> the
last enqueued, started and completed sequence numbers) and ``entries``, one per
collective or point-to-point op, oldest first (a ring buffer of
``TORCH_FR_BUFFER_SIZE`` entries, 2000 by default).
"""

from __future__ import annotations

import io
import logging
import pickle
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import ranklint.runtime.stacks as stacks
from ranklint.runtime.report import Collective

logger = logging.getLogger(__name__)

#: The Flight Recorder entry fields every collective's record must have.
FR_FIELDS = (
    "process_group",
    "collective_seq_id",
    "profiling_name",
    "input_sizes",
    "input_dtypes",
    "frames",
)
#: Flight Recorder's dtype names (c10's ``ScalarType`` names), as threads mode writes them.
DTYPES = {
    "float": "float32",
    "double": "float64",
    "half": "float16",
    "bfloat16": "bfloat16",
    "long": "int64",
    "int": "int32",
    "short": "int16",
    "char": "int8",
    "byte": "uint8",
    "bool": "bool",
}
#: The only globals a dump may name: builtin containers, which run no code of the file's.
#: (``__builtin__`` is how protocol 2 spells ``builtins``.)
_SAFE_GLOBALS = frozenset(
    (module, name) for module in ("builtins", "__builtin__") for name in ("set", "frozenset")
)


class DumpError(ValueError):
    """The data is not a Flight Recorder dump this reader understands."""


class UnsafeDumpError(DumpError):
    """The pickle names a global (a class or function): refused, it could run code."""


class RestrictedUnpickler(pickle.Unpickler):
    """An unpickler that builds only builtin containers and scalars.

    Flight Recorder's dumps hold dicts, lists, tuples, strings, numbers, booleans
    and ``None``, none of which needs a global; any other global is refused.
    """

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _SAFE_GLOBALS:
            return super().find_class(module, name)
        raise UnsafeDumpError(
            f"the pickle names the global {module}.{name}; a Flight Recorder dump holds only "
            "builtin containers and scalars, so it was not unpickled (unpickling runs code)"
        )

    def persistent_load(self, pid: Any) -> Any:
        raise UnsafeDumpError("the pickle holds a persistent id; not a Flight Recorder dump")


def loads_restricted(data: bytes) -> Any:
    """Unpickle ``data`` with :class:`RestrictedUnpickler`; :class:`DumpError` on any failure."""
    try:
        return RestrictedUnpickler(io.BytesIO(data)).load()
    except DumpError:
        raise
    except Exception as error:  # truncated, not a pickle, a pickle of another protocol's error
        raise DumpError(f"not a pickle ({type(error).__name__}: {error})") from error


@dataclass(frozen=True)
class RecordedOp:
    """One Flight Recorder entry, reduced to what the diff compares."""

    group_name: str
    seq: int
    op: str
    shapes: tuple[tuple[int, ...], ...]
    dtypes: tuple[str, ...]
    frames: tuple[tuple[str, int, str], ...]  # (file, line, function), innermost first
    time_ns: int = 0


def recorded_op(entry: Mapping[str, Any]) -> RecordedOp | None:
    """The collective of one entry; ``None`` for a point-to-point op.

    :class:`DumpError` names the missing fields when the entry lacks one.
    """
    if not isinstance(entry, Mapping) or any(key not in entry for key in FR_FIELDS):
        raise DumpError(f"Flight Recorder entries with the fields {', '.join(FR_FIELDS)}")
    if entry.get("is_p2p"):
        return None
    name = str(entry["profiling_name"]).rpartition(":")[2]
    # A scatter's input exists on the root only: its output is what all share.
    sizes = entry.get("output_sizes") if name == "scatter" else entry["input_sizes"]
    dtypes = entry.get("output_dtypes") if name == "scatter" else entry["input_dtypes"]
    return RecordedOp(
        group_name=str(entry["process_group"][0]),
        seq=int(entry["collective_seq_id"]),
        op=name,
        shapes=tuple(tuple(int(n) for n in size) for size in sizes or ()),
        dtypes=tuple(str(d).lower() for d in dtypes or ()),
        frames=tuple((str(f["filename"]), int(f["line"]), str(f["name"])) for f in entry["frames"]),
        time_ns=int(entry.get("time_created_ns") or 0),
    )


def recorded_ops(entries: Sequence[Mapping[str, Any]]) -> list[RecordedOp]:
    """The collectives of a dump's entries, in the order they were issued."""
    ops = []
    for entry in entries:
        op = recorded_op(entry)
        if op is not None:
            ops.append(op)
    return ops


@dataclass(frozen=True)
class TracedOp:
    """A collective of a dump with where it stood when the dump was taken.

    ``state`` is the entry's own (``scheduled``, ``started`` or ``completed``;
    gloo never moves it past ``scheduled``); ``completed`` also counts an entry
    the backend retired or that ``pg_status`` lists as completed.
    """

    op: RecordedOp
    group_desc: str
    state: str
    completed: bool


@dataclass(frozen=True)
class RankDump:
    """One rank's dump: its collectives and the groups it names."""

    rank: int
    source: str
    version: str
    ops: tuple[TracedOp, ...]
    #: group name -> global ranks, from ``pg_config`` (empty where the backend left it so).
    groups: Mapping[str, tuple[int, ...]]


def _ranks(value: Any) -> tuple[int, ...]:
    """``pg_config``'s ranks: a string such as ``"[0, 1]"`` (NCCL) or a list."""
    if isinstance(value, str):
        return tuple(int(n) for n in re.findall(r"-?\d+", value))
    if isinstance(value, list | tuple):
        return tuple(int(n) for n in value)
    return ()


def _groups(pg_config: Any) -> dict[str, tuple[int, ...]]:
    groups: dict[str, tuple[int, ...]] = {}
    if not isinstance(pg_config, Mapping):
        return groups
    for key, config in pg_config.items():
        if not isinstance(config, Mapping):
            continue
        name = str(config.get("name") or key)
        ranks = _ranks(config.get("ranks"))
        if name and ranks:
            groups[name] = ranks
    return groups


def _last_completed(pg_status: Any) -> dict[str, int]:
    done: dict[str, int] = {}
    if isinstance(pg_status, Mapping):
        for pg_id, status in pg_status.items():
            if isinstance(status, Mapping):
                last = status.get("last_completed_collective")
                done[str(pg_id)] = int(last or -1)  # pragma: no mutate (-2 is none too: seq >= 1)
    return done


def parse_dump(dump: Any, rank: int, source: str) -> RankDump:
    """A rank's unpickled dump, checked; :class:`DumpError` when it is not a dump."""
    if not isinstance(dump, Mapping) or not isinstance(dump.get("entries"), list):
        raise DumpError("not a Flight Recorder dump (no list of 'entries')")
    done = _last_completed(dump.get("pg_status"))
    traced = []
    for entry in dump["entries"]:
        op = recorded_op(entry)
        if op is None:
            continue
        state = str(entry.get("state") or "")
        pg_id = str(entry.get("pg_id", ""))  # pragma: no mutate (torch writes every pg_id)
        last = done.get(pg_id)
        completed = (
            state == "completed"
            or bool(entry.get("retired"))
            or (last is not None and op.seq <= last)
        )
        group = entry["process_group"]
        desc = str(group[1]) if isinstance(group, list | tuple) and len(group) > 1 else ""
        traced.append(TracedOp(op, desc, state, completed))
    return RankDump(
        rank=rank,
        source=source,
        version=str(dump.get("version", "")),
        ops=tuple(traced),
        groups=_groups(dump.get("pg_config")),
    )


def read_dump(data: bytes, rank: int | None, source: str) -> RankDump:
    """Unpickle (restricted) and parse one rank's dump file's bytes.

    ``rank`` comes from the file's name; ``None`` takes it from the dump, where
    the dump names one (:class:`DumpError` when neither does).
    """
    dump = loads_restricted(data)
    if rank is None:
        rank = dump_rank(dump)
        if rank is None:
            raise DumpError("no rank: neither the file name ends in one nor the dump names one")
    try:
        return parse_dump(dump, rank, source)
    except DumpError:
        raise
    except (KeyError, TypeError, ValueError, IndexError) as error:  # a field of another type
        raise DumpError(f"a malformed entry ({type(error).__name__}: {error})") from error


def dump_rank(dump: Any) -> int | None:
    """The rank a dump names itself, where its backend writes one (gloo and NCCL do not)."""
    if isinstance(dump, Mapping) and isinstance(dump.get("rank"), int):
        return int(dump["rank"])
    return None


def as_collective(
    op: RecordedOp,
    members: tuple[int, ...],
    seq: int,
    roots: Sequence[str],
    *,
    root: int | None = None,
    reduce_op: str | None = None,
) -> Collective:
    """``op`` as the diff compares it: its members, its position ``seq`` on its group,
    dtypes named as threads mode names them, and the user's site and callers."""
    site, api = stacks.locate(op.frames, roots)
    return Collective(
        op=op.op,
        group=members,
        group_name=op.group_name,
        seq=seq,
        shapes=op.shapes,
        dtypes=tuple(DTYPES.get(d, d) for d in op.dtypes),
        root=root,
        reduce_op=reduce_op,
        api=api,
        site=site,
        callers=stacks.callers(op.frames, roots),
    )
