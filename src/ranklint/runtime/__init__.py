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

See ``docs/runtime.md``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from ranklint.runtime.report import (
    Collective,
    DivergenceError,
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
    same_seed: bool = False,
    explain: bool = True,
) -> list[Any]:
    """Run ``fn(rank, world_size, *rank_inputs(rank))`` on every rank; the results by rank.

    ``mode="threads"`` runs the ranks as threads of this process (fast; see
    ``docs/runtime.md`` for what it cannot isolate), ``mode="gloo"`` as forked
    processes on the gloo backend (results must pickle). Falls back to gloo
    when the threaded world is unavailable in this torch.

    Raises :class:`DivergenceError` when the ranks' collectives disagree or
    some rank never issues one, :class:`RankFailure` when a rank raises, and
    :class:`RanksTimeout` when ``timeout`` seconds pass with ranks still busy.
    With ``explain``, a divergence whose call site carries a ranklint finding
    says so.
    """
    if world_size < 1:
        raise ValueError(f"world_size must be at least 1, got {world_size}")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if timeout <= 0:
        raise ValueError(f"timeout must be positive, got {timeout}")
    inputs = [tuple(rank_inputs(rank)) if rank_inputs else () for rank in range(world_size)]
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
