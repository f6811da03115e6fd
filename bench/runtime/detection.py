"""Detection of the runtime companion's own cases, per class and mode.

    python bench/runtime/detection.py [--modes threads,gloo]

Runs each case of ``tests/runtime_cases.py`` and of the equivalence cases in
``tests/runtime/test_equivalence.py`` on 2 ranks and checks that the run ends
the way the class says: the right error, naming the right thing (the rank
that raised and its exception's class, the dead rank's exit code, the line,
the factor). It prints one row per class and mode: detected / cases.

To compare with an older checkout of ranklint, run it with that checkout's
``src`` first on ``PYTHONPATH`` (the cases come from this checkout): a case
that the older code cannot run (an option it does not have) counts as missed.
"""

from __future__ import annotations

import argparse
import logging
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(1, str(ROOT))

import ranklint.runtime as runtime  # noqa: E402 - after the path
from tests import runtime_cases as cases  # noqa: E402

try:  # the equivalence cases import the error an older checkout does not have
    from tests.runtime import test_equivalence as eq
except ImportError:
    eq = None

logger = logging.getLogger(__name__)

Check = Callable[[BaseException | None], bool]


def _error_named(name: str, *, text: str = "", **fields: Any) -> Check:
    """The run raised an error of class ``name`` whose text has ``text`` and
    whose attributes equal ``fields`` (an attribute ``error_class`` checks the
    class name of ``.error``)."""

    def check(error: BaseException | None) -> bool:
        if error is None or type(error).__name__ != name or text not in str(error):
            return False
        for key, value in fields.items():
            got = type(error.error).__name__ if key == "error_class" else getattr(error, key, None)
            same = abs(got - value) < 1e-3 if isinstance(value, float) and got else got == value
            if not same:
                return False
        return True

    return check


def _diverged_at(marker: str) -> Check:
    line = cases.line_of(marker)

    def check(error: BaseException | None) -> bool:
        if type(error).__name__ != "DivergenceError":
            return False
        at = error.divergence.at.values()  # type: ignore[union-attr]
        return any(c.site is not None and c.site.line == line for c in at)

    return check


def _passes(error: BaseException | None) -> bool:
    return error is None


def _rank_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("ranklint-rank-")]


#: The rank threads still alive after the last run (read before a spinning rank is released).
_LEFT: list[threading.Thread] = []


def _threads_stopped(error: BaseException | None) -> bool:
    return type(error).__name__ == "RanksTimeout" and not _LEFT


def _eq(name: str) -> Callable[..., Any]:
    """An equivalence case, or a stand-in that says the checkout cannot run it."""
    if eq is not None:
        return getattr(eq, name)  # type: ignore[no-any-return]

    def missing(rank: int, world_size: int) -> None:
        raise NotImplementedError("this checkout has no equivalence check")

    return missing


#: (class, case name, function, modes, options, check)
CASES: list[tuple[str, str, Callable[..., Any], tuple[str, ...], dict[str, Any], Check]] = [
    ("divergence", "guarded all_reduce", cases.guarded_all_reduce, ("threads", "gloo"), {},
     _diverged_at("guarded")),
    ("divergence", "all_reduce against broadcast", cases.mismatched_ops, ("threads", "gloo"),
     {}, _diverged_at("mismatch-reduce")),
    ("divergence", "barrier two calls deep", cases.barrier_two_calls_deep, ("threads", "gloo"),
     {}, _error_named("DivergenceError")),
    ("divergence", "new_group on one rank", cases.group_created_on_one_side, ("gloo",), {},
     _diverged_at("one-side-group")),
    ("a rank raises", "raises before its peer's collective", cases.raises_before_its_collective,
     ("threads", "gloo"), {}, _error_named("RankFailure", rank=1, error_class="KeyError")),
    ("a rank raises", "raises after a collective", cases.fails_on_rank_one, ("threads", "gloo"),
     {}, _error_named("RankFailure", rank=1, error_class="ValueError")),
    ("a rank dies", "os._exit(3)", cases.exits_without_outcome, ("gloo",), {},
     _error_named("RankDied", rank=1, exitcode=3)),
    ("a rank dies", "SIGKILL", cases.killed_by_signal, ("gloo",), {},
     _error_named("RankDied", rank=1, exitcode=-9)),
    ("nested run", "threads in a rank", cases.nests_a_threads_run, ("threads", "gloo"), {},
     _error_named("RankFailure", text="cannot be nested")),
    ("nested run", "gloo in a rank", cases.nests_a_gloo_run, ("threads", "gloo"), {},
     _error_named("RankFailure", text="cannot be nested")),
    ("abandoned rank", "spins forever", cases.spins_forever, ("threads",), {"timeout": 2},
     _threads_stopped),
    ("equivalence", "SUM where MEAN was meant", _eq("grads_summed"), ("threads", "gloo"),
     {"equivalent_to": 1}, _error_named("NotEquivalentError", factor=2.0)),
    ("equivalence", "metric reduced twice", _eq("metric_reduced_twice"), ("threads", "gloo"),
     {"equivalent_to": 1}, _error_named("NotEquivalentError")),
    ("equivalence", "loss times world size", _eq("loss_times_world_size"), ("threads", "gloo"),
     {"equivalent_to": 1}, _error_named("NotEquivalentError", factor=2.0)),
    ("equivalence", "metrics in rank order", _eq("metrics_in_rank_order"), ("threads", "gloo"),
     {"equivalent_to": 1}, _error_named("NotEquivalentError")),
    ("equivalence", "DDP grads summed again", _eq("ddp_grads_summed_again"), ("threads", "gloo"),
     {"equivalent_to": 1}, _error_named("NotEquivalentError", factor=2.0)),
    ("equivalence, fixed", "gradients averaged", _eq("grads_averaged"), ("threads", "gloo"),
     {"equivalent_to": 1}, _passes),
    ("equivalence, fixed", "metric reduced once", _eq("metric_reduced_once"), ("threads", "gloo"),
     {"equivalent_to": 1}, _passes),
    ("equivalence, fixed", "loss unscaled", _eq("loss_unscaled"), ("threads", "gloo"),
     {"equivalent_to": 1}, _passes),
    ("equivalence, fixed", "metrics in sorted order", _eq("metrics_in_sorted_order"),
     ("threads", "gloo"), {"equivalent_to": 1}, _passes),
    ("equivalence, fixed", "DDP grads once", _eq("ddp_grads_once"), ("threads", "gloo"),
     {"equivalent_to": 1}, _passes),
]  # fmt: skip


def run_case(fn: Callable[..., Any], mode: str, options: dict[str, Any]) -> BaseException | None:
    """The error the run ended with (``None`` when it passed)."""
    options = {"timeout": 20, **options}
    released = fn is cases.spins_forever
    if released:
        cases.RELEASE.clear()
    try:
        runtime.run_ranks(fn, 2, mode=mode, explain=False, **options)
    except Exception as error:
        return error
    finally:
        for thread in _rank_threads():
            thread.join(timeout=10)  # a stopped rank ends at its next line
        _LEFT[:] = [thread for thread in _rank_threads() if thread.is_alive()]
        if released:
            cases.RELEASE.set()
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--modes", default="threads,gloo")
    args = parser.parse_args(argv)
    modes = args.modes.split(",")
    sys.stdout.write(f"ranklint.runtime from {Path(runtime.__file__).parent}\n")
    totals: dict[tuple[str, str], list[int]] = {}
    for kind, name, fn, case_modes, options, check in CASES:
        for mode in [m for m in modes if m in case_modes]:
            error = run_case(fn, mode, options)
            ok = check(error)
            totals.setdefault((kind, mode), [0, 0])
            totals[(kind, mode)][0] += ok
            totals[(kind, mode)][1] += 1
            got = "passed" if error is None else f"{type(error).__name__}: {str(error)[:70]!r}"
            sys.stdout.write(f"{'ok  ' if ok else 'MISS'} {mode:7} {kind}: {name} -> {got}\n")
            sys.stdout.flush()
    sys.stdout.write("\n| class | mode | detected |\n| --- | --- | ---: |\n")
    for (kind, mode), (found, count) in totals.items():
        sys.stdout.write(f"| {kind} | {mode} | {found}/{count} |\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
