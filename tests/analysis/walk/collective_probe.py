"""Observe the collectives one call issues, on the threaded world of ``run_ranks``.

Threads mode's process group hands every collective of every rank to
``World.collective``: the ``torch.distributed`` calls, the functional
collectives (DTensor, FSDP2) and the C++ callers (DDP's reducer, FSDP1's
flat-parameter all-gathers). :func:`patched` wraps that method so that a rank
thread inside :meth:`Probe.capture` appends each collective's op name to its
own list; the rank function returns the list, and ``run_ranks`` hands back one
per rank. Nothing is recorded outside ``capture``, so a case may build its
model, mesh and optimizer first and watch only the call under test.

Two threads-mode gaps are bridged while patched, neither of which changes
which collectives torch issues:

- the threaded group registers no backend, so ``_get_pg_default_device``
  (FSDP1's optimizer state dict, ShardedTensor) finds no device: it answers
  ``cpu``, as gloo would;
- FSDP1's ``SimpleProfiler`` keeps its open timers in a class-wide set, so two
  ranks of one process inside the same timer fail; it times nothing here.

Used by ``test_catalog_confirmed*.py`` and ``bench/recall/catalog_sweep.py``.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

#: The marks of a confirmation module besides `distributed` (which each module
#: writes out): torch deprecates FSDP1 and the older checkpoint names; those
#: warnings are not the subject.
CONFIRMATION_MARKS = [
    pytest.mark.timeout(120),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore::UserWarning"),
]

#: One rank's record: the op of each collective it issued, in order.
OpLog = list[str]

_local = threading.local()


class Probe:
    """Records, per rank thread, the collectives issued inside :meth:`capture`."""

    @contextlib.contextmanager
    def capture(self) -> Iterator[OpLog]:
        """The collectives this rank issues in the block (nested blocks see theirs too)."""
        log: OpLog = []
        outer: list[OpLog] = getattr(_local, "logs", [])
        _local.logs = [*outer, log]
        try:
            yield log
        finally:
            _local.logs = outer

    def call(self, action: Callable[[], Any]) -> OpLog:
        """The collectives ``action()`` issues on this rank."""
        with self.capture() as log:
            action()
        return log


def _record(op: str) -> None:
    for log in getattr(_local, "logs", ()):
        log.append(op)


@contextlib.contextmanager
def patched() -> Iterator[Probe]:
    """Install the recorder and the two bridges; undo them on exit."""
    import torch
    import torch.distributed.distributed_c10d as c10d
    from torch.distributed.fsdp import _debug_utils, _optim_utils

    from ranklint.runtime import threads

    world_collective = threads.World.collective
    default_device = c10d._get_pg_default_device
    profile = _debug_utils.SimpleProfiler.__dict__["profile"]

    def collective(self: Any, rank: int, collective: Any, data: Any, work: Any) -> None:
        _record(str(collective.op))
        world_collective(self, rank, collective, data, work)

    def device(group: Any = None) -> Any:
        try:
            return default_device(group)
        except RuntimeError:
            return torch.device("cpu")

    def untimed(cls: type, profile_type: str) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    threads.World.collective = collective  # type: ignore[method-assign]
    c10d._get_pg_default_device = device
    _optim_utils._get_pg_default_device = device  # imported by name there
    _debug_utils.SimpleProfiler.profile = classmethod(untimed)  # type: ignore[assignment]
    try:
        yield Probe()
    finally:
        threads.World.collective = world_collective  # type: ignore[method-assign]
        c10d._get_pg_default_device = default_device
        _optim_utils._get_pg_default_device = default_device
        _debug_utils.SimpleProfiler.profile = profile  # type: ignore[method-assign]


def run_logged(fn: Callable[[int, int], Any], world_size: int = 2, timeout: float = 60.0) -> Any:
    """``run_ranks(fn, world_size)`` in threads mode: each rank's result."""
    from ranklint.runtime import run_ranks

    return run_ranks(fn, world_size, mode="threads", timeout=timeout, explain=False)
