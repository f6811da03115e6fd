"""Threads mode: every rank a thread of this process, one running at a time.

Each rank runs ``fn`` in its own thread with its own ``distributed_c10d``
world (torch's threaded world) and a process group of ours,
``RecordingGroup``, that every collective reaches: the ``torch.distributed``
calls, the functional collectives (DTensor, FSDP2's state dicts) and FSDP2's
own all-gathers and reduce-scatters. The group records what each rank issued
and where, and meets the other members at a rendezvous keyed by the group and
the position in its sequence.

The ranks take turns: one holds the baton and runs until it waits in a
collective or returns, then the lowest-numbered rank that can run goes on. So
a run is deterministic, each rank keeps its own RNG state and ``RANK``
environment across the switches, and a stall is seen the moment no rank can
run: a member that returned, raised or waits elsewhere is reported at once,
without waiting for a timeout. A rank that never yields (an endless loop, a
blocking call outside torch.distributed) is reported at the deadline with its
stack and abandoned.
"""

from __future__ import annotations

import asyncio
import ctypes
import inspect
import logging
import multiprocessing
import os
import random
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import ranklint.runtime._torch as _torch
import ranklint.runtime.stacks as stacks
from ranklint.runtime.group import make_group_class
from ranklint.runtime.report import (
    Collective,
    Divergence,
    DivergenceError,
    RankFailure,
    RanksTimeout,
    RankView,
    RuntimeCompanionError,
    compare_position,
    first_site_difference,
)

logger = logging.getLogger(__name__)

#: How often a waiting thread wakes to look at the world (never relied on to make progress).
_POLL = 0.05
#: The environment each rank sees as its own while it holds the baton.
_RANK_ENV = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK")
#: Only one threaded world at a time in a process: torch's world is a global.
_ACTIVE = threading.Lock()


class _Abort(BaseException):
    """Unwinds a rank's thread once the run has failed (a BaseException: user code keeps it)."""


@dataclass
class _Rendezvous:
    key: tuple[str, int]
    members: tuple[int, ...]
    arrived: dict[int, tuple[Collective, Any]] = field(default_factory=dict)
    waiters: set[int] = field(default_factory=set)
    done: bool = False


@dataclass
class _Rank:
    rank: int
    state: str = "starting"
    log: list[Collective] = field(default_factory=list)
    waiting: Collective | None = None
    result: Any = None
    error: str | None = None
    thread: threading.Thread | None = None
    #: whether the rank has held the baton (a divergence stops the run before some do).
    ran: bool = False


class World:
    """The shared state of one threaded run: the baton, the rendezvous and the logs."""

    def __init__(self, world_size: int, roots: Sequence[str]) -> None:
        self.world_size = world_size
        self.roots = tuple(roots)
        self.cond = threading.Condition()
        self.holder: int | None = None
        self.runnable: set[int] = set()
        self.ranks = [_Rank(rank) for rank in range(world_size)]
        self.rendezvous: dict[tuple[str, int], _Rendezvous] = {}
        self.counters: dict[tuple[int, str], int] = {}
        self.failure: BaseException | None = None
        self.isolation: Callable[[int, str], None] = lambda rank, event: None

    # The baton. Every method below runs with ``self.cond`` held.

    def _dispatch(self) -> None:
        # No turn is given before every rank has joined: which thread starts first
        # must not decide the schedule (rank 0 always runs first).
        started = all(state.state != "starting" for state in self.ranks)
        if self.holder is None and self.runnable and self.failure is None and started:
            self.holder = min(self.runnable)
        self.cond.notify_all()
        if self.holder is None and self.failure is None:
            self._diagnose_stall()

    def _await_turn(self, rank: int) -> None:
        while self.holder != rank:
            if self.failure is not None:
                raise _Abort
            self.cond.wait(_POLL)
        self.ranks[rank].ran = True
        self.runnable.discard(rank)
        self.isolation(rank, "resume")

    def _yield_turn(self, rank: int) -> None:
        self.isolation(rank, "pause")
        if self.holder == rank:
            self.holder = None
        self._dispatch()

    def enter(self, rank: int) -> None:
        """Called by a rank's thread once its process group exists: wait for the baton."""
        with self.cond:
            self.ranks[rank].state = "running"
            self.runnable.add(rank)
            self._dispatch()
            self._await_turn(rank)

    def leave(self, rank: int, result: Any) -> None:
        """The rank returned from ``fn``."""
        with self.cond:
            state = self.ranks[rank]
            state.state, state.result = "finished", result
            self._yield_turn(rank)

    def fail(self, rank: int, error: BaseException) -> None:
        """The rank raised: the run fails with it, unless it already failed."""
        with self.cond:
            state = self.ranks[rank]
            state.state = "failed"
            state.error = f"{type(error).__name__}: {error}"
            if self.failure is None:
                text = "".join(traceback.format_exception(error))
                self.failure = RankFailure(rank, error, text)
            if self.holder == rank:
                self.holder = None
            self.cond.notify_all()

    def abandon(self, timeout: float) -> None:
        """The deadline passed: fail with what every rank was doing."""
        with self.cond:
            if self.failure is None:
                self.failure = RanksTimeout(timeout, self.views(with_stacks=True))
            self.cond.notify_all()

    # Collectives.

    def collective(
        self,
        rank: int,
        collective: Collective,
        data: Any,
        work: Callable[[list[Any]], None] | None,
    ) -> None:
        """Record ``collective`` for ``rank``, meet the other members, run ``work`` once."""
        with self.cond:
            if self.failure is not None:
                raise _Abort
            state = self.ranks[rank]
            state.log.append(collective)
            key = (collective.group_name, collective.seq)
            meeting = self.rendezvous.get(key)
            if meeting is None:
                meeting = self.rendezvous[key] = _Rendezvous(key, collective.group)
            if meeting.arrived:
                first = next(iter(meeting.arrived.values()))[0]
                if first.differences(collective):
                    at = {member: c for member, (c, _) in meeting.arrived.items()}
                    at[rank] = collective
                    divergence = compare_position(
                        meeting.members, collective.group_name, collective.seq, at
                    )
                    self._diverged(divergence)
                    raise _Abort
            meeting.arrived[rank] = (collective, data)
            if len(meeting.arrived) == len(meeting.members):
                if work is not None:
                    work([meeting.arrived[member][1] for member in meeting.members])
                meeting.done = True
                del self.rendezvous[key]
                self.runnable.update(meeting.waiters)
                for member in meeting.waiters:
                    self.ranks[member].state, self.ranks[member].waiting = "ready", None
                return
            meeting.waiters.add(rank)
            state.state, state.waiting = "waiting", collective
            self._yield_turn(rank)
            self._await_turn(rank)
            state.state, state.waiting = "running", None

    def next_seq(self, rank: int, group_name: str) -> int:
        """The position of ``rank``'s next collective on the group."""
        with self.cond:
            seq = self.counters.get((rank, group_name), 0)
            self.counters[(rank, group_name)] = seq + 1
            return seq

    def _diverged(self, divergence: Divergence | None) -> None:
        if divergence is None or self.failure is not None:
            return
        name = divergence.group_name
        logs = {r: [c for c in self.ranks[r].log if c.group_name == name] for r in divergence.group}
        earlier = first_site_difference(logs, divergence.position)
        divergence = replace(divergence, first_site_difference=earlier)
        self.failure = DivergenceError(divergence, self.views(pending=True))
        self.holder = None
        self.cond.notify_all()

    def _diagnose_stall(self) -> None:
        """No rank can run: if some wait, their collectives can never complete."""
        states = [state.state for state in self.ranks]
        if {"starting", "running", "ready"} & set(states):
            return
        waiting = [state for state in self.ranks if state.state == "waiting"]
        if not waiting:
            return
        first = waiting[0].waiting
        assert first is not None
        meeting = self.rendezvous[(first.group_name, first.seq)]
        at = {member: c for member, (c, _) in meeting.arrived.items()}
        self._diverged(compare_position(meeting.members, first.group_name, first.seq, at))

    def views(self, *, with_stacks: bool = False, pending: bool = False) -> list[RankView]:
        """What each rank did and is doing; with ``pending`` (the run stopped at a
        divergence), a rank that never held the baton, or whose collective completed
        but was not resumed, is ``"pending"``: it is not stalled, its turn never came."""
        frames = sys._current_frames() if with_stacks else {}
        views = []
        for state in self.ranks:
            stack: tuple[Any, ...] = ()
            thread = state.thread
            if with_stacks and thread is not None and thread.ident in frames:
                stack = stacks.user_stack(stacks.frames_of(frames[thread.ident]), self.roots)
            shown = "running" if state.state == "starting" else state.state
            unstarted = state.state in ("starting", "running") and not state.ran
            if pending and (state.state == "ready" or unstarted):
                shown = "pending"
            views.append(
                RankView(
                    rank=state.rank,
                    state=shown,
                    log=tuple(state.log),
                    waiting_in=state.waiting,
                    error=state.error,
                    stack=stack,
                )
            )
        return views


@dataclass
class _Isolation:
    """Each rank's RNG states and rank environment, swapped in and out with the baton."""

    torch: Any
    world_size: int
    seed: int | None
    same_seed: bool
    saved: dict[int, dict[str, Any]] = field(default_factory=dict)

    def start(self, rank: int) -> None:
        if self.seed is not None:
            seed = self.seed if self.same_seed else self.seed + rank
            random.seed(seed)
            self.torch.manual_seed(seed)
            numpy = sys.modules.get("numpy")
            if numpy is not None:
                numpy.random.seed(seed)
        self.saved[rank] = self._capture()

    def _capture(self) -> dict[str, Any]:
        numpy = sys.modules.get("numpy")
        return {
            "random": random.getstate(),
            "torch": self.torch.get_rng_state(),
            "numpy": numpy.random.get_state() if numpy is not None else None,
        }

    def restore(self, saved: dict[str, Any]) -> None:
        """Put RNG states taken by :meth:`_capture` back."""
        random.setstate(saved["random"])
        self.torch.set_rng_state(saved["torch"])
        numpy = sys.modules.get("numpy")
        if numpy is not None and saved["numpy"] is not None:
            numpy.random.set_state(saved["numpy"])

    def __call__(self, rank: int, event: str) -> None:
        if event == "pause":
            self.saved[rank] = self._capture()
            return
        self.restore(self.saved[rank])
        env = {"RANK": rank, "LOCAL_RANK": rank, "GROUP_RANK": 0}
        env.update(WORLD_SIZE=self.world_size, LOCAL_WORLD_SIZE=self.world_size)
        os.environ.update({key: str(value) for key, value in env.items()})


def settle(result: Any) -> Any:
    """An ``async def`` rank function's result: its coroutine, run to the end here."""
    if inspect.iscoroutine(result):
        return asyncio.run(result)
    return result


def run(
    fn: Callable[..., Any],
    world_size: int,
    *,
    timeout: float,
    inputs: Sequence[tuple[Any, ...]],
    seed: int | None,
    same_seed: bool,
) -> list[Any]:
    """Run ``fn(rank, world_size, *inputs[rank])`` on threads; the per-rank results."""
    refuse_nesting("threads")
    torch, dist = _torch.import_torch()
    api = _torch.threads_api()
    if not _ACTIVE.acquire(blocking=False):
        raise RuntimeCompanionError(
            "run_ranks(mode='threads') is already running in this process, in another "
            "thread: one threaded run at a time (torch's threaded world is a global)"
        )
    roots = stacks.library_roots(torch.__file__, stacks.__file__)
    world = World(world_size, roots)
    isolation = _Isolation(torch, world_size, seed, same_seed)
    world.isolation = isolation
    group_class = make_group_class(world, api, dist, torch)
    backend = _backend(dist)
    _FACTORY[0] = lambda rank, size: group_class(rank, tuple(range(size)), rank)
    saved_env = {key: os.environ.get(key) for key in _RANK_ENV}
    outer_rng = isolation._capture()
    # init_process_group chains a "[rankN]" prefix onto sys.excepthook, once per rank.
    excepthook = sys.excepthook
    store = dist.HashStore()

    def body(rank: int) -> None:
        try:
            dist.init_process_group(backend, rank=rank, world_size=world_size, store=store)
            world.enter(rank)
            result = settle(fn(rank, world_size, *inputs[rank]))
            world.leave(rank, result)
        except _Abort:
            pass
        except BaseException as error:
            world.fail(rank, error)
        finally:
            try:
                if dist.is_initialized():
                    dist.destroy_process_group()
            except Exception:  # teardown of an abandoned world
                logger.debug("destroy_process_group failed on rank %d", rank, exc_info=True)

    api.install()
    api.set_isolation(True)
    try:
        for state in world.ranks:
            isolation.start(state.rank)
        for state in world.ranks:
            thread = threading.Thread(
                target=body, args=(state.rank,), name=f"{RANK_PREFIX}{state.rank}", daemon=True
            )
            state.thread = thread
            thread.start()
        _wait(world, timeout)
        for state in world.ranks:
            if state.thread is not None:
                state.thread.join(timeout=1.0)
        _stop_abandoned(world)
    finally:
        api.set_isolation(False)
        api.uninstall()
        _restore(saved_env, outer_rng, isolation)
        sys.excepthook = excepthook
        _ACTIVE.release()
    if world.failure is not None:
        raise world.failure
    return [state.result for state in world.ranks]


#: The name of every rank's thread (threads mode) and process (gloo mode).
RANK_PREFIX = "ranklint-rank-"


def refuse_nesting(mode: str) -> None:
    """Fail at once when called from a rank of a run in progress: a nested run
    cannot work in either mode (one threaded world per process; a forked gloo rank
    is a daemon, which may not fork), and failing later reads like another error."""
    if threading.current_thread().name.startswith(RANK_PREFIX):
        outer = "threads"
    elif multiprocessing.current_process().name.startswith(RANK_PREFIX):
        outer = "gloo"
    else:
        return
    raise RuntimeCompanionError(
        f"run_ranks(mode={mode!r}) was called from a rank of a run_ranks(mode={outer!r}) run: "
        "runs cannot be nested; call run_ranks from the test or the script, and let the "
        "rank function call the code under test directly"
    )


def _stop_abandoned(world: World) -> None:
    """End the rank threads still running after the run failed (an endless loop, a
    rank that never yields): left alone, each keeps a core busy for the rest of the
    process. Python code is stopped by raising :class:`_Abort` in its thread at its
    next bytecode; a thread blocked in native code stops when it returns there."""
    for state in world.ranks:
        thread = state.thread
        if thread is None or not thread.is_alive() or thread.ident is None:
            continue
        ctypes.pythonapi.PyThreadState_SetAsyncExc(
            ctypes.c_ulong(thread.ident), ctypes.py_object(_Abort)
        )
        thread.join(timeout=_STOP_WAIT)
        if thread.is_alive():
            logger.warning("rank %d's thread did not stop; it is left running", state.rank)


#: Seconds to wait for an abandoned rank's thread to stop once told to.
_STOP_WAIT = 5.0


#: The default group's maker for the run in progress (the backend is registered once).
_FACTORY: list[Callable[[int, int], Any]] = []
_BACKEND = "ranklint_threads"


def _backend(dist: Any) -> str:
    if not _FACTORY:
        _FACTORY.append(lambda rank, size: None)
        dist.Backend.register_backend(
            _BACKEND,
            lambda store, rank, size, timeout: _FACTORY[0](rank, size),
            devices=["cpu"],
        )
    return _BACKEND


def _wait(world: World, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    with world.cond:
        while world.failure is None:
            if all(state.state == "finished" for state in world.ranks):
                return
            left = deadline - time.monotonic()
            if left <= 0:
                break
            world.cond.wait(min(left, _POLL))
    world.abandon(timeout)


def _restore(env: dict[str, str | None], rng: dict[str, Any], isolation: _Isolation) -> None:
    for key, value in env.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    isolation.restore(rng)
