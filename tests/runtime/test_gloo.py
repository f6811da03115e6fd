"""ranklint.runtime.run_ranks in gloo mode: forked processes, diffs from Flight Recorder."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="the runtime companion needs torch")

from ranklint.runtime import (  # noqa: E402 - after the skip
    DivergenceError,
    RankFailure,
    RanksTimeout,
    run_ranks,
)
from tests import runtime_cases as cases  # noqa: E402

pytestmark = [pytest.mark.distributed, pytest.mark.timeout(180)]


def _lines(error: DivergenceError) -> dict[int, int]:
    return {r: c.site.line for r, c in error.divergence.at.items() if c.site is not None}


def test_gloo_balanced_all_reduce_returns_each_ranks_sum() -> None:
    results = run_ranks(cases.balanced_sum, 2, mode="gloo", timeout=20)

    for result in results:
        torch.testing.assert_close(torch.tensor(result), torch.full((4,), 3.0), rtol=0, atol=0)


def test_gloo_collective_under_rank_guard_is_diffed_from_flight_recorder() -> None:
    with pytest.raises(DivergenceError) as caught:
        run_ranks(cases.guarded_all_reduce, 2, mode="gloo", timeout=20, explain=False)

    assert caught.value.divergence.position == 1
    assert "rank 1 never issued it" in str(caught.value)
    assert _lines(caught.value) == {0: cases.line_of("guarded")}


def test_gloo_different_ops_report_both_lines() -> None:
    with pytest.raises(DivergenceError) as caught:
        run_ranks(cases.mismatched_ops, 2, mode="gloo", timeout=20, explain=False)

    assert "disagree on the op" in str(caught.value)
    assert _lines(caught.value) == {
        0: cases.line_of("mismatch-reduce"),
        1: cases.line_of("mismatch-broadcast"),
    }


def test_gloo_barrier_two_calls_deep_quotes_the_static_finding() -> None:
    with pytest.raises(DivergenceError) as caught:
        run_ranks(cases.barrier_two_calls_deep, 2, mode="gloo", timeout=20)

    assert f"runtime_cases.py:{cases.line_of('deep-call')} in barrier_two_calls_deep(): RNK102" in (
        str(caught.value)
    )


def test_gloo_full_tensor_on_rank_zero_names_full_tensor() -> None:
    with pytest.raises(DivergenceError) as caught:
        run_ranks(cases.full_tensor_on_rank_zero, 2, mode="gloo", timeout=20, explain=False)

    assert caught.value.divergence.at[0].api == "full_tensor"


def test_gloo_uneven_loader_diverges_at_the_extra_batch() -> None:
    def inputs(rank: int) -> tuple[list[torch.Tensor]]:
        return ([torch.ones(2)] * (2 + rank),)

    with pytest.raises(DivergenceError) as caught:
        run_ranks(cases.uneven_loader, 2, mode="gloo", timeout=20, rank_inputs=inputs)

    assert caught.value.divergence.position == 2


def test_gloo_fsdp2_step_passes_with_the_same_parameters_on_every_rank() -> None:
    results = run_ranks(cases.fsdp2_step, 2, mode="gloo", timeout=60)

    torch.testing.assert_close(
        torch.tensor(results[0]), torch.tensor(results[1]), rtol=1e-6, atol=1e-6
    )


def test_gloo_rank_raises_rank_failure_naming_the_rank() -> None:
    with pytest.raises(RankFailure) as caught:
        run_ranks(cases.fails_on_rank_one, 2, mode="gloo", timeout=20)

    assert caught.value.rank == 1
    assert "ValueError: bad batch on rank 1" in str(caught.value)


def _spinning_rank_times_out() -> RanksTimeout:
    """Run ``spins_forever`` to its deadline (4 s); the timeout it raises."""
    cases.RELEASE.clear()  # the forked ranks inherit it: cleared, they spin
    try:
        with pytest.raises(RanksTimeout) as caught:
            run_ranks(cases.spins_forever, 2, mode="gloo", timeout=4)
    finally:
        cases.RELEASE.set()
    return caught.value


def test_gloo_rank_that_never_returns_is_killed_at_the_deadline_with_its_stack() -> None:
    timeout = _spinning_rank_times_out()

    assert f"runtime_cases.py:{cases.line_of('spin')} in spins_forever()" in str(timeout)


def _slow_flight_recorder(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """Every rank's Flight Recorder dump takes ``seconds`` (a loaded machine); the
    forked ranks inherit the patch."""
    import time

    from ranklint.runtime import _torch

    real = _torch.dump_flight_recorder

    def slow() -> bytes:
        time.sleep(seconds)
        return real()

    monkeypatch.setattr(_torch, "dump_flight_recorder", slow)


def test_gloo_rank_whose_outcome_is_written_after_the_deadline_still_reports_its_stack(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The watchdog fires at 2 s and writes at 8 s, past the deadline and grace (7 s).
    _slow_flight_recorder(monkeypatch, 6.0)

    timeout = _spinning_rank_times_out()

    assert f"runtime_cases.py:{cases.line_of('spin')} in spins_forever()" in str(timeout)


def test_gloo_watchdog_firing_while_a_rank_writes_its_outcome_keeps_that_outcome(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Each rank's main thread is inside its (slow) dump when its watchdog fires
    # at 2 s: the watchdog waits for the write instead of leaving without it.
    _slow_flight_recorder(monkeypatch, 4.0)

    with pytest.raises(RankFailure) as caught:
        run_ranks(cases.fails_on_rank_one, 2, mode="gloo", timeout=4)

    assert caught.value.rank == 1
    assert "ValueError: bad batch on rank 1" in str(caught.value)


def test_gloo_falls_back_when_threads_are_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    from ranklint.runtime import _torch

    monkeypatch.setattr(_torch, "threads_available", lambda: False)

    assert run_ranks(cases.async_sum, 2, mode="threads", timeout=20) == [2.0, 2.0]


@pytest.mark.parametrize(("case", "field"), cases.ARGUMENT_MISMATCHES)
def test_gloo_argument_mismatch_names_the_field(case: object, field: str) -> None:
    with pytest.raises(DivergenceError) as caught:
        run_ranks(case, 2, mode="gloo", timeout=20, explain=False)  # type: ignore[arg-type]

    assert caught.value.divergence.reason == f"the ranks disagree on the {field}"


def test_gloo_subgroups_reduce_within_each_group() -> None:
    assert run_ranks(cases.subgroups, 4, mode="gloo", timeout=30) == [
        [1.0, 1.0],
        [1.0, 1.0],
        [5.0, 5.0],
        [5.0, 5.0],
    ]


def test_family_matches_method_and_flight_recorder_names() -> None:
    from ranklint.runtime.gloo import family

    assert family("reduce_scatter_single") == family("_reduce_scatter_base") == "reducescatter"
    assert family("allreduce_coalesced") == family("all_reduce") == "allreduce"
    assert family("broadcast") != family("reduce")
