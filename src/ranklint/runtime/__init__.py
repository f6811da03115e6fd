"""The runtime companion: run a function on N simulated ranks, diff their collectives.

``pip install 'ranklint[runtime]'`` adds torch. Nothing in the linter imports
this package, and this module imports torch only when :func:`run_ranks` runs.

>>> def step(rank, world_size):                       # doctest: +SKIP
...     t = torch.ones(4)
...     if rank == 0:
...         dist.all_reduce(t)
>>> run_ranks(step, 2)                                 # doctest: +SKIP
DivergenceError: ranks diverged at collective #0 on group [0, 1]: rank 1 never issued it
  rank 0: all_reduce(group=[0, 1], shape=(4,), op=SUM) at train.py:4 in step()
  rank 1: no collective #0 on this group (issued 0); returned from the function ...

``equivalent_to=1`` runs the function at world size 1 as well and compares
what it returns (parameters after a step, the loss, logged metrics): the
function shards its own data (``batch.chunk(world_size)[rank]``), and a value
that changes with the world size raises :class:`NotEquivalentError`:

>>> run_ranks(train_step, 2, equivalent_to=1)          # doctest: +SKIP
NotEquivalentError: not equivalent: result['grads']['w'] on rank 0 at world size 2 is 2 times
its value at world size 1 (factor 2, equal to the world size 2) ...

See ``docs/runtime.md``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from ranklint.runtime.equivalence import NotEquivalentError
from ranklint.runtime.report import (
    Collective,
    DivergenceError,
    RankDied,
    RankFailure,
    RanksTimeout,
    RankView,
    RuntimeCompanionError,
    Site,
)

logger = logging.getLogger(__name__)

__all__ = [
    "Collective",
    "DivergenceError",
    "NotEquivalentError",
    "RankDied",
    "RankFailure",
    "RankView",
    "RanksTimeout",
    "RuntimeCompanionError",
    "Site",
    "run_ranks",
]

MODES = ("threads", "gloo")


def run_ranks(
    fn: Callable[..., Any],
    world_size: int,
    *,
    mode: str = "threads",
    timeout: float = 60.0,
    rank_inputs: Callable[[int], Sequence[Any]] | None = None,
    seed: int | None = 0,
    same_seed: bool | None = None,
    explain: bool = True,
    equivalent_to: int | None = None,
    rtol: float = 1e-5,
    atol: float = 1e-6,
) -> list[Any]:
    """Run ``fn(rank, world_size, *rank_inputs(rank))`` on every rank; the results by rank.

    ``mode="threads"`` runs the ranks as threads of this process (fast; see
    ``docs/runtime.md`` for what it cannot isolate), ``mode="gloo"`` as forked
    processes on the gloo backend (results must pickle). Falls back to gloo
    when the threaded world is unavailable in this torch.

    Raises :class:`DivergenceError` when the ranks' collectives disagree or
    some rank never issues one, :class:`RankFailure` when a rank raises, and
    :class:`RanksTimeout` when ``timeout`` seconds passed with ranks still busy.
    With ``explain``, a divergence whose call site carries a ranklint finding
    says so.

    With ``equivalent_to=M``, ``fn`` also runs on M ranks first (same mode,
    seed and timeout, each run its own ``timeout``), and the results are
    compared within ``rtol``/``atol``: the ranks of each run with each other,
    then every rank's result at ``world_size`` with rank 0's at M. ``fn``
    shards its own data by ``rank`` and ``world_size``; ``rank_inputs`` is
    refused. A difference raises :class:`NotEquivalentError`. ``same_seed``
    defaults to ``True`` then (every rank draws the same initial weights and
    random batch, as a job seeded once does), to ``False`` otherwise.
    """
    __tracebackhide__ = True  # pytest: a failure shows the caller's line and the report
    if world_size < 1:
        raise ValueError(f"world_size must be at least 1, got {world_size}")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if timeout <= 0:
        raise ValueError(f"timeout must be positive, got {timeout}")
    if equivalent_to is None:
        inputs = [tuple(rank_inputs(rank)) if rank_inputs else () for rank in range(world_size)]
        return _run(fn, world_size, mode, timeout, inputs, seed, bool(same_seed), explain)
    if rank_inputs is not None:
        raise ValueError(
            "rank_inputs cannot be combined with equivalent_to: the runs at both world sizes "
            "must see the same data, so fn(rank, world_size) shards it itself "
            "(batch.chunk(world_size)[rank] or batch[rank::world_size])"
        )
    from ranklint.runtime import equivalence

    equivalence.validate(world_size, equivalent_to, rtol, atol)
    same = True if same_seed is None else same_seed
    reference = _run(fn, equivalent_to, mode, timeout, [()] * equivalent_to, seed, same, explain)
    results = _run(fn, world_size, mode, timeout, [()] * world_size, seed, same, explain)
    equivalence.check(reference, results, rtol=rtol, atol=atol)
    return results


def _run(
    fn: Callable[..., Any],
    world_size: int,
    mode: str,
    timeout: float,
    inputs: list[tuple[Any, ...]],
    seed: int | None,
    same_seed: bool,
    explain: bool,
) -> list[Any]:
    """One run of ``fn`` on ``world_size`` ranks, its divergence explained on request."""
    __tracebackhide__ = True
    if mode == "threads":
        from ranklint.runtime import _torch

        if not _torch.threads_available():
            logger.warning("the threaded world is unavailable in this torch; using mode='gloo'")
            mode = "gloo"
    try:
        if mode == "threads":
            from ranklint.runtime import threads

            return threads.run(
                fn, world_size, timeout=timeout, inputs=inputs, seed=seed, same_seed=same_seed
            )
        from ranklint.runtime import gloo

        return gloo.run(
            fn, world_size, timeout=timeout, inputs=inputs, seed=seed, same_seed=same_seed
        )
    except DivergenceError as error:
        if not explain:
            raise
        from ranklint.runtime import static

        notes = static.notes_for(error)
        if not notes:
            raise
        raise error.annotate(notes) from None
