"""Time the runtime companion's verdicts per case and mode, for docs/runtime.md's table.

    python bench/runtime/timings.py [--repeat 3]

Each case runs once to warm up, then ``--repeat`` times; the median is printed
as a markdown table row (case, mode, verdict, seconds). The same run measures
gloo mode's Flight Recorder warm-up against its baseline: a balanced
all_reduce with the warm-up skipped (each forked rank then sets up the stack
symboliser itself), as a ratio, so the figure holds on another machine.
Run from the repository root (the cases live in ``tests/runtime_cases.py``).
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from ranklint.runtime import run_ranks  # noqa: E402 - after the path
from tests import runtime_cases as cases  # noqa: E402

logger = logging.getLogger(__name__)

#: (label, function, modes, options); each runs on 2 ranks.
CASES: list[tuple[str, Callable[..., Any], tuple[str, ...], dict[str, Any]]] = [
    ("balanced all_reduce", cases.balanced_sum, ("threads", "gloo"), {}),
    ("all_reduce under `if rank == 0`", cases.guarded_all_reduce, ("threads", "gloo"), {}),
    ("all_reduce against broadcast", cases.mismatched_ops, ("threads", "gloo"), {}),
    ("barrier two calls deep", cases.barrier_two_calls_deep, ("threads", "gloo"), {}),
    ("rank-dependent trip count", cases.rank_dependent_loop, ("threads", "gloo"), {}),
    ("`full_tensor()` on rank 0 only", cases.full_tensor_on_rank_zero, ("threads", "gloo"), {}),
    ("FSDP2 step", cases.fsdp2_step, ("threads", "gloo"), {}),
    ("a rank raises before its peer's collective", cases.raises_before_its_collective,
     ("threads", "gloo"), {}),
    ("a rank leaves with `os._exit(3)`", cases.exits_without_outcome, ("gloo",), {}),
    ("`new_group` on one rank only", cases.group_created_on_one_side, ("gloo",), {}),
]  # fmt: skip


def _once(fn: Callable[..., Any], mode: str, options: dict[str, Any]) -> tuple[str, float]:
    start = time.perf_counter()
    try:
        run_ranks(fn, 2, mode=mode, explain=False, timeout=20, **options)
        verdict = "passes"
    except Exception as error:
        verdict = type(error).__name__
    return verdict, time.perf_counter() - start


def _median(fn: Callable[..., Any], mode: str, repeat: int, **options: Any) -> tuple[str, float]:
    verdict, _ = _once(fn, mode, options)  # warm-up: imports, the first world
    times = [_once(fn, mode, options)[1] for _ in range(repeat)]
    return verdict, statistics.median(times)


def warm_up_ratio(repeat: int) -> tuple[float, float]:
    """Seconds of a balanced gloo run without and with the parent's warm-up."""
    from ranklint.runtime import gloo

    saved = list(gloo._WARM)
    gloo._WARM[:] = [True]  # pretend it ran: the ranks pay the set-up themselves
    try:
        import torch.distributed as dist

        if dist.is_initialized():  # pragma: no cover - a bench run starts clean
            raise SystemExit("run the bench in a fresh process")
        cold = statistics.median(_once(cases.balanced_sum, "gloo", {})[1] for _ in range(repeat))
    finally:
        gloo._WARM[:] = saved
    gloo._warm_flight_recorder()
    warm = statistics.median(_once(cases.balanced_sum, "gloo", {})[1] for _ in range(repeat))
    return cold, warm


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    cold, warm = warm_up_ratio(args.repeat)
    sys.stdout.write(
        f"gloo balanced all_reduce: {cold:.2f} s without the warm-up, {warm:.2f} s with it "
        f"(ratio {warm / cold:.2f})\n\n"
    )
    sys.stdout.write("| case | mode | verdict | seconds |\n| --- | --- | --- | ---: |\n")
    for label, fn, modes, options in CASES:
        for mode in modes:
            verdict, seconds = _median(fn, mode, args.repeat, **options)
            sys.stdout.write(f"| {label} | {mode} | {verdict} | {seconds:.2f} |\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
