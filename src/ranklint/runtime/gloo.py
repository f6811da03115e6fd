"""Gloo mode: every rank a forked process on the gloo backend, diffed from Flight Recorder.

Each rank joins a file-store rendezvous in a temporary folder, runs ``fn``
with a short collective timeout and, however it ends, writes one outcome
file: its result or error and its Flight Recorder dump, which holds every
collective the rank issued, the one it waited in included. (Not with
``TORCH_DISTRIBUTED_DEBUG=DETAIL``: its check runs before the collective
reaches the backend, so the mismatching collective would be missing from the
dump.) The diff runs on every run, so a mismatch that gloo completes silently
(the same op with other shapes) is reported too. A watchdog thread in each rank writes the
outcome with the rank's stack shortly before the deadline and ends the
process; the parent kills whatever is left at the deadline. The parent then
rebuilds every rank's collectives from the dumps and diffs them like threads
mode does.

Flight Recorder does not record src/dst, the reduce op or group creation:
each rank wraps the ProcessGroup methods that take them, and ``new_group``,
and the parent merges those annotations into Flight Recorder's entries by
group, op and time (:func:`_annotate`). Functional collectives bypass the
wrappers: their reduce op is not compared here.
"""

from __future__ import annotations

import datetime
import logging
import multiprocessing
import os
import pickle
import random
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import ranklint.runtime._torch as _torch
import ranklint.runtime.stacks as stacks
import ranklint.runtime.threads as threads
from ranklint.runtime.flight_recorder import as_collective
from ranklint.runtime.report import (
    Collective,
    Divergence,
    DivergenceError,
    RankDied,
    RankFailure,
    RanksTimeout,
    RankView,
    first_divergence,
)

logger = logging.getLogger(__name__)

#: Seconds before the deadline at which a rank's watchdog writes its outcome and exits.
_MARGIN = 2.0
#: Seconds a finished rank waits for the others to finish before it leaves.
_LINGER = 0.5
#: Seconds the parent gives the ranks after the deadline to write their outcome.
_GRACE = 3.0
#: Seconds more it waits for a rank that is still alive then: its watchdog has
#: fired and is writing (a Flight Recorder dump takes seconds on a loaded
#: machine); the wait ends as soon as the rank exits, so only a rank whose
#: watchdog cannot run costs it.
_LATE = 60.0


def _outcome_path(folder: str, rank: int) -> Path:
    return Path(folder) / f"rank{rank}.outcome"


def _write(path: Path, outcome: dict[str, Any]) -> None:
    """Write atomically: a half-written outcome is never read."""
    temporary = path.with_suffix(".tmp")
    try:
        data = pickle.dumps(outcome)
    except Exception as error:  # an unpicklable result
        outcome = {**outcome, "state": "failed", "result": None}
        outcome["error"] = f"the result does not pickle: {error}"
        outcome["traceback"] = ""
        data = pickle.dumps(outcome)
    temporary.write_bytes(data)
    os.replace(temporary, path)


def _collective_timeout(timeout: float) -> float:
    """How long one collective may wait for its peers before gloo gives up.

    Short, so that a rank stuck in a collective its peers never issue fails
    well before the deadline and still writes its Flight Recorder dump.
    """
    return max(min(timeout / 2, 10.0), 0.5)


def _meet(dist: Any, key: str, world_size: int, patience: float) -> None:
    """Wait, on the store and outside any collective, until every rank posted ``key``."""
    store = _torch.default_store(dist)
    store.add(key, 1)
    give_up = time.monotonic() + patience
    while store.add(key, 0) < world_size and time.monotonic() < give_up:
        time.sleep(0.005)


def _pickled(error: BaseException) -> bytes | None:
    """The exception itself, for the parent to raise with its own class (``None``
    when it does not pickle or unpickle: its text and traceback still travel)."""
    try:
        data = pickle.dumps(error)
        pickle.loads(data)
    except Exception:
        return None
    return data


def _from_backend(error: BaseException, torch_file: str) -> bool:
    """Whether ``error`` is the backend giving up on a collective (a peer left, a
    timeout): raised inside torch.distributed as gloo raises it, a consequence of
    what another rank did, not this rank's own error."""
    tb = error.__traceback__
    innermost = None
    while tb is not None:
        innermost, tb = tb.tb_frame.f_code.co_filename, tb.tb_next
    package = os.path.join(os.path.dirname(os.path.abspath(torch_file)), "distributed") + os.sep
    inside = innermost is not None and os.path.abspath(innermost).startswith(package)
    names = {cls.__name__ for cls in type(error).__mro__}
    return inside and (type(error) is RuntimeError or "DistError" in names)


def _child(
    rank: int,
    world_size: int,
    fn: Callable[..., Any],
    inputs: tuple[Any, ...],
    folder: str,
    timeout: float,
    seed: int | None,
    same_seed: bool,
) -> None:
    """One rank: run ``fn``, write the outcome, leave with ``os._exit``."""
    os.environ.update(
        RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world_size), OMP_NUM_THREADS="1"
    )
    os.environ.update(LOCAL_WORLD_SIZE=str(world_size))
    torch, dist = _torch.import_torch()
    torch.set_num_threads(1)
    notes: list[_torch.Annotation] = []
    outcome: dict[str, Any] = {"rank": rank, "state": "failed", "result": None, "notes": notes}
    # Flight Recorder entries older than this are the parent's warm-up, inherited by fork.
    outcome["start_ns"] = time.time_ns()
    written = threading.Lock()
    # Set once the outcome is on disk, whichever thread wrote it.
    on_disk = threading.Event()
    main = threading.main_thread()

    def finish(update: dict[str, Any]) -> None:
        """Write the outcome once; a second caller waits until the first has written
        it (the main thread may be inside the Flight Recorder dump when the watchdog
        fires: leaving then would lose the outcome)."""
        if not written.acquire(blocking=False):
            on_disk.wait()
            return
        try:
            outcome.update(update)
            try:
                outcome["fr"] = _torch.dump_flight_recorder()
                outcome["groups"] = _torch.known_groups(dist)
            except Exception as error:  # no process group, or Flight Recorder moved
                outcome.setdefault("error", f"{type(error).__name__}: {error}")
            _write(_outcome_path(folder, rank), outcome)
        finally:
            on_disk.set()

    def watchdog() -> None:
        time.sleep(max(timeout - _MARGIN, 0.1))
        frame = sys._current_frames().get(main.ident or -1)
        finish({"state": "stuck", "frames": stacks.frames_of(frame)})
        os._exit(3)

    threading.Thread(target=watchdog, daemon=True, name="ranklint-watchdog").start()
    code = 0
    try:
        if seed is not None:
            value = seed if same_seed else seed + rank
            random.seed(value)
            torch.manual_seed(value)
        _torch.record_annotations(notes, stacks.frames_of)
        store = f"file://{folder}/store"
        pg_timeout = datetime.timedelta(seconds=_collective_timeout(timeout))
        dist.distributed_c10d.default_pg_timeout = pg_timeout
        dist.init_process_group(
            "gloo", init_method=store, rank=rank, world_size=world_size, timeout=pg_timeout
        )
        _meet(dist, "ready", world_size, timeout)
        result = threads.settle(fn(rank, world_size, *inputs))
        finish({"state": "finished", "result": result})
        # Let the peers finish receiving this rank's last sends before it leaves.
        _meet(dist, "done", world_size, _LINGER)
    except BaseException as error:
        text = "".join(traceback.format_exception(error))
        failed = {"state": "failed", "error": f"{type(error).__name__}: {error}", "traceback": text}
        failed.update(exception=_pickled(error), backend=_from_backend(error, torch.__file__))
        finish(failed)
        code = 1
    finally:
        os._exit(code)


def run(
    fn: Callable[..., Any],
    world_size: int,
    *,
    timeout: float,
    inputs: Sequence[tuple[Any, ...]],
    seed: int | None,
    same_seed: bool,
) -> list[Any]:
    """Run ``fn(rank, world_size, *inputs[rank])`` in forked gloo processes."""
    threads.refuse_nesting("gloo")
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    torch, _dist = _torch.import_torch()
    if method == "fork":
        _warm_flight_recorder()
    with tempfile.TemporaryDirectory(prefix="ranklint-ranks-") as folder:
        processes = [
            context.Process(
                target=_child,
                args=(rank, world_size, fn, inputs[rank], folder, timeout, seed, same_seed),
                name=f"{threads.RANK_PREFIX}{rank}",
                daemon=True,
            )
            for rank in range(world_size)
        ]
        killed: set[int] = set()
        try:
            for process in processes:
                process.start()
            deadline = time.monotonic() + timeout + _GRACE
            for process in processes:
                process.join(max(deadline - time.monotonic(), 0))
            # Past the deadline every rank's watchdog has fired: wait for the
            # ranks still writing their outcome to exit, not for a fixed time.
            late = time.monotonic() + _LATE
            for process in processes:
                process.join(max(late - time.monotonic(), 0))
        finally:
            for rank, process in enumerate(processes):
                if process.is_alive():
                    killed.add(rank)
                    process.kill()
                process.join(5)
        outcomes = [
            _read(_outcome_path(folder, rank), rank, processes[rank].exitcode, rank in killed)
            for rank in range(world_size)
        ]
    roots = stacks.library_roots(torch.__file__, stacks.__file__)
    return _verdict(outcomes, roots, timeout)


def _read(path: Path, rank: int, exitcode: int | None, killed: bool) -> dict[str, Any]:
    """The outcome a rank wrote; without one, whether the parent killed it at the
    deadline or it died on its own (``os._exit``, a crash, the out-of-memory killer)."""
    try:
        return dict(pickle.loads(path.read_bytes()))
    except FileNotFoundError:
        if killed:
            return {"rank": rank, "state": "killed", "error": "the process left no outcome"}
        return {"rank": rank, "state": "died", "exitcode": exitcode}


#: Whether this process has symbolised a Flight Recorder dump (see :func:`_warm_flight_recorder`).
_WARM: list[bool] = []


def _warm_flight_recorder() -> None:
    """Make the ranks' dumps fast: a process's first dump with an entry spends about
    1 s setting up the stack symboliser, and forked ranks inherit the parent's. So
    set it up once here, where it leaves no trace (no process group, no entry)."""
    if _WARM:
        return
    _WARM.append(True)
    try:
        _torch.warm_stack_symbolizer()
    except Exception:  # the ranks' dumps are only slower
        logger.debug("warming the stack symboliser failed", exc_info=True)


def family(name: str) -> str:
    """An op's name without separators and variant suffixes: ``_reduce_scatter_base`` ->
    ``reducescatter``, so a ProcessGroup method matches Flight Recorder's name for it."""
    name = name.replace("_", "")
    for suffix in ("single", "coalesced", "base"):
        name = name.removesuffix(suffix)
    return name


def _annotate(
    ops: list[_torch.RecordedOp], notes: Sequence[_torch.Annotation]
) -> dict[int, _torch.Annotation]:
    """Each annotation's Flight Recorder entry: the first unmatched one of the same
    group and op family created at or after it. Keyed by the entry's index."""
    matched: dict[int, _torch.Annotation] = {}
    for note in sorted(notes, key=lambda n: n.time_ns):
        if note.method == "new_group":
            continue
        for index, op in enumerate(ops):
            if (
                index not in matched
                and op.group_name == note.group_name
                and family(op.op) == family(note.method)
                and (op.time_ns == 0 or op.time_ns >= note.time_ns)
            ):
                matched[index] = note
                break
    return matched


def _collectives(outcome: dict[str, Any], roots: Sequence[str]) -> list[Collective]:
    """A rank's collectives: Flight Recorder's entries with the annotations merged in."""
    groups: dict[str, tuple[int, ...]] = outcome.get("groups") or {}
    data = outcome.get("fr")
    if not data:
        return []
    start = int(outcome.get("start_ns") or 0)
    ops = [
        op
        for op in _torch.read_flight_recorder(data)
        if op.group_name in groups and (op.time_ns == 0 or op.time_ns >= start)
    ]
    notes: list[_torch.Annotation] = list(outcome.get("notes") or ())
    matched = _annotate(ops, notes)
    timeline: list[tuple[int, int, Collective]] = []
    for index, op in enumerate(ops):
        note = matched.get(index)
        members = groups[op.group_name]
        root = None
        if note is not None and note.root is not None and note.root < len(members):
            root = members[note.root]
        reduce_op = note.reduce_op if note is not None else None
        collective = as_collective(op, members, 0, roots, root=root, reduce_op=reduce_op)
        timeline.append((op.time_ns, index, collective))
    for index, note in enumerate(notes):
        if note.method == "new_group" and note.group_name in groups:
            site = stacks.locate(note.frames, roots)[0]
            collective = Collective(
                op="new_group",
                group=groups[note.group_name],
                group_name=note.group_name,
                seq=0,
                extra=(("ranks", str(list(note.ranks or ()))),),
                site=site,
                callers=stacks.callers(note.frames, roots),
            )
            timeline.append((note.time_ns, len(ops) + index, collective))
    counts: dict[str, int] = {}
    log = []
    for _time, _index, collective in sorted(timeline, key=lambda item: item[:2]):
        seq = counts.get(collective.group_name, 0)
        counts[collective.group_name] = seq + 1
        log.append(replace(collective, seq=seq))
    return log


def _verdict(outcomes: Sequence[dict[str, Any]], roots: Sequence[str], timeout: float) -> list[Any]:
    """The run's result, or the error that explains it, in the order threads mode
    would meet them: a rank that died, a divergence (unless a rank that never issued
    the collective had raised an error of its own first), a rank's error, a timeout."""
    views = [_view(outcome, roots) for outcome in outcomes]
    for outcome in outcomes:
        if outcome["state"] == "died":
            raise RankDied(outcome["rank"], outcome.get("exitcode"), views)
    divergence = first_divergence(views)
    if divergence is not None:
        missing = [rank for rank in divergence.group if rank not in divergence.at]
        causes = [outcomes[rank] for rank in missing if _own_error(outcomes[rank])]
        if not causes or _disagree(divergence):
            raise DivergenceError(divergence, views)
        raise _failure(causes[0])
    failed = [outcome for outcome in outcomes if outcome["state"] == "failed"]
    if failed:
        raise _failure(min(failed, key=lambda outcome: not _own_error(outcome)))
    if any(outcome["state"] != "finished" for outcome in outcomes):
        raise RanksTimeout(timeout, views)
    return [outcome["result"] for outcome in outcomes]


def _view(outcome: dict[str, Any], roots: Sequence[str]) -> RankView:
    frames = outcome.get("frames") or []
    state = {"stuck": "running", "killed": "running"}.get(outcome["state"], outcome["state"])
    return RankView(
        rank=outcome["rank"],
        state=state,
        log=tuple(_collectives(outcome, roots)),
        error=outcome.get("error"),
        stack=stacks.user_stack(frames, roots),
    )


def _own_error(outcome: dict[str, Any]) -> bool:
    """The rank raised an error of its own, not gloo giving up on a collective."""
    return outcome["state"] == "failed" and not outcome.get("backend")


def _disagree(divergence: Divergence) -> bool:
    """The members present at the position disagree (not only some missing)."""
    present = list(divergence.at.values())
    return any(present[0].differences(other) for other in present[1:])


def _failure(outcome: dict[str, Any]) -> RankFailure:
    """The rank's error with its own class where it pickled, and its traceback."""
    error: BaseException | None = None
    data = outcome.get("exception")
    if data is not None:
        try:
            error = pickle.loads(data)
        except Exception:  # a class the parent cannot import
            logger.debug("the exception of rank %s does not unpickle", outcome["rank"])
    if not isinstance(error, BaseException):
        error = RuntimeError(outcome.get("error"))
    return RankFailure(outcome["rank"], error, outcome.get("traceback", ""))
