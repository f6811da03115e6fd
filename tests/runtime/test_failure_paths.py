"""The runtime companion's report when a run fails: dead ranks, raised errors, nesting,
abandoned threads, and what gloo mode's verdict keeps from the ranks' outcomes."""

from __future__ import annotations

import os
import pickle
import threading
from typing import Any

import pytest

torch = pytest.importorskip("torch", reason="the runtime companion needs torch")

from ranklint.runtime import (  # noqa: E402 - after the skip
    DivergenceError,
    RankDied,
    RankFailure,
    RanksTimeout,
    RuntimeCompanionError,
    gloo,
    run_ranks,
)
from tests import runtime_cases as cases  # noqa: E402

pytestmark = pytest.mark.timeout(180)

distributed = pytest.mark.distributed


def _rank_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("ranklint-rank-")]


def test_threads_rank_that_never_yields_has_its_thread_stopped_after_the_timeout() -> None:
    cases.RELEASE.clear()  # the rank spins until the run stops it
    try:
        with pytest.raises(RanksTimeout):
            run_ranks(cases.spins_forever, 2, timeout=1)
        for thread in _rank_threads():
            thread.join(timeout=10)  # bounded: the run already told it to stop

        assert _rank_threads() == []
    finally:
        cases.RELEASE.set()


@pytest.mark.parametrize(
    ("case", "outer", "inner"),
    [
        (cases.nests_a_threads_run, "threads", "threads"),
        (cases.nests_a_gloo_run, "threads", "gloo"),
    ],
)
def test_threads_nested_run_fails_with_one_clear_error(case: Any, outer: str, inner: str) -> None:
    with pytest.raises(RankFailure) as caught:
        run_ranks(case, 2)

    assert isinstance(caught.value.error, RuntimeCompanionError)
    assert (
        f"run_ranks(mode={inner!r}) was called from a rank of a run_ranks(mode={outer!r}) run: "
        "runs cannot be nested" in str(caught.value.error)
    )
    assert _rank_threads() == []


def test_threads_second_concurrent_run_is_refused_while_one_runs() -> None:
    entered, release = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def waits(rank: int, world_size: int) -> None:
        entered.set()
        release.wait(30)

    def other() -> None:
        try:
            run_ranks(waits, 1)
        except BaseException as error:
            errors.append(error)

    thread = threading.Thread(target=other)
    thread.start()
    try:
        entered.wait(30)
        with pytest.raises(RuntimeCompanionError, match="already running in this process"):
            run_ranks(cases.balanced_sum, 2)
    finally:
        release.set()
        thread.join(30)
    assert errors == []


@distributed
def test_gloo_nested_run_fails_with_one_clear_error_of_its_own_class() -> None:
    with pytest.raises(RankFailure) as caught:
        run_ranks(cases.nests_a_gloo_run, 2, mode="gloo", timeout=20)

    assert type(caught.value.error) is RuntimeCompanionError
    assert "run_ranks(mode='gloo') was called from a rank of a run_ranks(mode='gloo') run" in str(
        caught.value
    )


@distributed
def test_gloo_rank_that_exits_without_an_outcome_is_reported_dead_with_its_exit_code() -> None:
    with pytest.raises(RankDied) as caught:
        run_ranks(cases.exits_without_outcome, 2, mode="gloo", timeout=20)

    assert (caught.value.rank, caught.value.exitcode) == (1, 3)
    text = str(caught.value)
    assert text.startswith("rank 1 exited with code 3 before it reported")
    assert "still running" not in text
    assert "rank 0: " in text


@distributed
def test_gloo_rank_killed_by_a_signal_is_reported_with_the_signal_name() -> None:
    with pytest.raises(RankDied) as caught:
        run_ranks(cases.killed_by_signal, 2, mode="gloo", timeout=20)

    assert caught.value.exitcode == -9
    assert str(caught.value).startswith(
        "rank 1 was killed by signal 9 (SIGKILL) before it reported"
    )


@pytest.mark.parametrize("mode", ["threads", pytest.param("gloo", marks=distributed)])
def test_rank_raising_before_its_peers_collective_is_one_rank_failure_in_both_modes(
    mode: str,
) -> None:
    with pytest.raises(RankFailure) as caught:
        run_ranks(cases.raises_before_its_collective, 2, mode=mode, timeout=20)

    assert caught.value.rank == 1
    assert type(caught.value.error) is KeyError
    assert caught.value.error.args == ("no batch for rank 1",)
    assert f'runtime_cases.py", line {cases.line_of("key-error")}' in caught.value.traceback_text


@distributed
def test_gloo_group_created_on_one_side_is_diffed_at_the_collective_timeout_not_the_deadline() -> (
    None
):
    with pytest.raises(DivergenceError) as caught:
        run_ranks(cases.group_created_on_one_side, 2, mode="gloo", timeout=60, explain=False)

    at = caught.value.divergence.at
    assert (at[0].op, at[1].op) == ("new_group", "barrier")
    # At the deadline the watchdog would have written both ranks as still running.
    assert [view.state for view in caught.value.views] == ["failed", "failed"]


def _raise_from(path: str, error: BaseException) -> BaseException:
    """``error`` raised by code compiled as if it lived at ``path``."""
    try:
        exec(compile("raise error", path, "exec"), {"error": error})
    except BaseException as raised:
        return raised
    raise AssertionError("unreachable")


@pytest.mark.parametrize(
    ("inside", "error", "expected"),
    [
        (True, RuntimeError("Connection closed by peer"), True),
        (True, ValueError("Tensors must be contiguous"), False),
        (False, RuntimeError("a user's own RuntimeError"), False),
    ],
)
def test_from_backend_is_true_only_for_gloo_errors_raised_inside_torch_distributed(
    inside: bool, error: BaseException, expected: bool
) -> None:
    folder = os.path.join(os.path.dirname(torch.__file__), "distributed")
    path = os.path.join(folder if inside else os.getcwd(), "distributed_c10d.py")

    assert gloo._from_backend(_raise_from(path, error), torch.__file__) is expected


def _entry(seq: int, time_ns: int) -> dict[str, Any]:
    return {
        "process_group": ("0", "default_pg"),
        "collective_seq_id": seq,
        "profiling_name": "gloo:all_reduce",
        "input_sizes": [[1]],
        "input_dtypes": ["Float"],
        "frames": [{"filename": "train.py", "line": 3 + seq, "name": "step"}],
        "time_created_ns": time_ns,
    }


def test_gloo_collectives_drop_flight_recorder_entries_older_than_the_ranks_start() -> None:
    dump = pickle.dumps({"entries": [_entry(0, 100), _entry(1, 300), _entry(2, 400)]})
    outcome = {"fr": dump, "groups": {"0": (0, 1)}, "notes": [], "start_ns": 200}

    log = gloo._collectives(outcome, roots=())

    assert [c.site.line for c in log if c.site is not None] == [4, 5]
    assert [c.seq for c in log] == [0, 1]


def _outcome(rank: int, state: str, **fields: Any) -> dict[str, Any]:
    return {"rank": rank, "state": state, "result": None, **fields}


def test_gloo_verdict_reports_a_dead_rank_before_a_divergence_it_caused() -> None:
    outcomes = [_outcome(0, "failed", error="RuntimeError: closed", backend=True)]
    outcomes.append(_outcome(1, "died", exitcode=3))

    with pytest.raises(RankDied, match="rank 1 exited with code 3"):
        gloo._verdict(outcomes, roots=(), timeout=5)


def test_gloo_verdict_prefers_a_ranks_own_error_to_the_backends_timeout() -> None:
    own = pickle.dumps(KeyError("k"))
    outcomes = [
        _outcome(0, "failed", error="RuntimeError: closed", backend=True),
        _outcome(1, "failed", error="KeyError: 'k'", backend=False, exception=own),
    ]

    with pytest.raises(RankFailure) as caught:
        gloo._verdict(outcomes, roots=(), timeout=5)

    assert (caught.value.rank, type(caught.value.error)) == (1, KeyError)


def test_gloo_verdict_without_a_pickled_exception_keeps_the_text_as_runtime_error() -> None:
    outcomes = [_outcome(0, "finished"), _outcome(1, "failed", error="Boom: x", exception=None)]

    with pytest.raises(RankFailure) as caught:
        gloo._verdict(outcomes, roots=(), timeout=5)

    assert (type(caught.value.error), str(caught.value.error)) == (RuntimeError, "Boom: x")


@distributed
def test_gloo_run_warms_the_symbolizer_once_and_leaves_no_world_or_entry_behind() -> None:
    import sys

    hook = sys.excepthook

    run_ranks(cases.balanced_sum, 2, mode="gloo", timeout=20)

    assert gloo._WARM == [True]
    assert not torch.distributed.is_initialized()
    assert sys.excepthook is hook
    entries = pickle.loads(torch._C._distributed_c10d._dump_fr_trace()).get("entries", [])
    assert entries == []
