"""ranklint.runtime.run_ranks in threads mode: diffs, isolation, deadlines."""

from __future__ import annotations

import os
import random
import sys

import pytest

torch = pytest.importorskip("torch", reason="the runtime companion needs torch")

from ranklint.runtime import (  # noqa: E402 - after the skip
    DivergenceError,
    RankFailure,
    RanksTimeout,
    run_ranks,
)
from tests import runtime_cases as cases  # noqa: E402

pytestmark = pytest.mark.timeout(120)


def _site_lines(error: DivergenceError) -> dict[int, int]:
    return {
        rank: c.site.line
        for rank, c in error.divergence.at.items()
        if c.site is not None and c.site.file == str(cases.HERE)
    }


def test_run_ranks_balanced_all_reduce_returns_each_ranks_sum() -> None:
    results = run_ranks(cases.balanced_sum, 3)

    for result in results:
        torch.testing.assert_close(torch.tensor(result), torch.full((4,), 6.0), rtol=0, atol=0)


def test_run_ranks_collective_under_rank_guard_names_the_rank_that_never_issued_it() -> None:
    with pytest.raises(DivergenceError) as caught:
        run_ranks(cases.guarded_all_reduce, 2, explain=False)

    text = str(caught.value)
    assert caught.value.divergence.position == 1
    assert "rank 1 never issued it" in text
    assert _site_lines(caught.value) == {0: cases.line_of("guarded")}
    assert "rank 0: all_reduce(group=[0, 1], shape=(4,), op=SUM) at " in text
    assert ">> #1 all_reduce" in text
    assert "rank 1: no collective #1 on this group (issued 1); returned from the function" in text


def test_run_ranks_different_ops_at_one_position_reports_both_lines() -> None:
    with pytest.raises(DivergenceError) as caught:
        run_ranks(cases.mismatched_ops, 2, explain=False)

    assert "disagree on the op" in str(caught.value)
    assert _site_lines(caught.value) == {
        0: cases.line_of("mismatch-reduce"),
        1: cases.line_of("mismatch-broadcast"),
    }


def test_run_ranks_barrier_two_calls_deep_shows_the_guarded_call_as_a_caller() -> None:
    with pytest.raises(DivergenceError) as caught:
        run_ranks(cases.barrier_two_calls_deep, 2, explain=False)

    barrier = caught.value.divergence.at[0]
    assert barrier.op == "barrier"
    assert barrier.site is not None
    assert barrier.site.line == cases.line_of("deep-barrier")
    assert cases.line_of("deep-call") in [site.line for site in barrier.callers]


def test_run_ranks_with_explain_quotes_the_static_finding_at_the_guarded_caller() -> None:
    with pytest.raises(DivergenceError) as caught:
        run_ranks(cases.barrier_two_calls_deep, 2)

    assert f"runtime_cases.py:{cases.line_of('deep-call')} in barrier_two_calls_deep(): RNK102" in (
        str(caught.value)
    )


def test_run_ranks_rank_dependent_trip_count_reports_the_extra_iteration() -> None:
    with pytest.raises(DivergenceError) as caught:
        run_ranks(cases.rank_dependent_loop, 3, explain=False)

    assert caught.value.divergence.position == 1
    assert "rank 0 never issued it" in str(caught.value)


@pytest.mark.parametrize(("case", "field"), cases.ARGUMENT_MISMATCHES)
def test_run_ranks_argument_mismatch_names_the_field(case: object, field: str) -> None:
    with pytest.raises(DivergenceError) as caught:
        run_ranks(case, 2, explain=False)  # type: ignore[arg-type]

    assert caught.value.divergence.reason == f"the ranks disagree on the {field}"


def test_run_ranks_dtype_mismatch_shows_both_dtypes() -> None:
    with pytest.raises(DivergenceError) as caught:
        run_ranks(cases.different_dtypes, 2, explain=False)

    text = str(caught.value)
    assert caught.value.divergence.reason == "the ranks disagree on the dtype"
    assert "dtype=float32, op=SUM)" in text
    assert "dtype=int64, op=SUM)" in text


def test_run_ranks_reduce_lands_on_the_destination_only() -> None:
    results = run_ranks(cases.reduce_to_root, 3)

    assert results == [[1.0, 1.0], [3.0, 3.0], [3.0, 3.0]]


def test_run_ranks_balanced_rank_branch_passes() -> None:
    assert run_ranks(cases.balanced_branch, 2) == [9.0, 9.0]


def test_run_ranks_subgroups_reduce_within_each_group() -> None:
    results = run_ranks(cases.subgroups, 4)

    assert results == [[1.0, 1.0], [1.0, 1.0], [5.0, 5.0], [5.0, 5.0]]


def test_run_ranks_rank_raises_rank_failure_naming_the_rank_and_line() -> None:
    with pytest.raises(RankFailure) as caught:
        run_ranks(cases.fails_on_rank_one, 2)

    assert caught.value.rank == 1
    assert isinstance(caught.value.error, ValueError)
    assert str(caught.value).startswith("rank 1 raised ValueError: bad batch on rank 1")
    assert f"line {cases.line_of('raise')}" in str(caught.value)


def test_run_ranks_rank_that_never_yields_times_out_with_its_stack() -> None:
    cases.RELEASE.clear()
    try:
        with pytest.raises(RanksTimeout) as caught:
            run_ranks(cases.spins_forever, 2, timeout=1.0)
    finally:
        cases.RELEASE.set()

    text = str(caught.value)
    assert "did not finish within 1 s" in text
    assert f"rank 1: still running at {_rel(cases.HERE)}:{cases.line_of('spin')}" in text
    assert "rank 0: ready to run, but another rank never gave up its turn" in text


def _rel(path: os.PathLike[str]) -> str:
    return os.path.relpath(path)


def test_run_ranks_per_rank_seeds_give_each_rank_its_own_stream_and_rank_env() -> None:
    results = run_ranks(cases.random_draws, 2, seed=7)

    assert results[0][0] != results[1][0]
    assert [r[2] for r in results] == ["0", "1"]
    torch.manual_seed(7)
    random.seed(7)
    assert results[0][0] == torch.rand(1).item()
    assert results[0][1] == random.random()


def test_run_ranks_same_seed_gives_every_rank_the_same_stream() -> None:
    results = run_ranks(cases.random_draws, 3, seed=5, same_seed=True)

    assert len({(r[0], r[1]) for r in results}) == 1


def test_run_ranks_leaves_the_callers_rng_and_environment_as_they_were() -> None:
    torch.manual_seed(123)
    random.seed(123)
    before = os.environ.get("RANK")
    hook = sys.excepthook
    expected = (torch.rand(1).item(), random.random())
    torch.manual_seed(123)
    random.seed(123)

    run_ranks(cases.random_draws, 2)

    assert (torch.rand(1).item(), random.random()) == expected
    assert os.environ.get("RANK") == before
    assert sys.excepthook is hook


def test_run_ranks_uneven_loader_per_rank_inputs_diverges_at_the_extra_batch() -> None:
    def inputs(rank: int) -> tuple[list[torch.Tensor]]:
        return ([torch.ones(2)] * (3 + rank),)

    with pytest.raises(DivergenceError) as caught:
        run_ranks(cases.uneven_loader, 2, rank_inputs=inputs, explain=False)

    assert caught.value.divergence.position == 3
    assert "rank 0 never issued it" in str(caught.value)
    assert _site_lines(caught.value) == {1: cases.line_of("loader")}


def test_run_ranks_metrics_dicts_with_different_keys_diverge() -> None:
    def inputs(rank: int) -> tuple[dict[str, float]]:
        metrics = {"loss": 1.0, "acc": 0.5}
        if rank == 1:
            metrics["grad_norm"] = 2.0
        return (metrics,)

    with pytest.raises(DivergenceError) as caught:
        run_ranks(cases.metric_keys, 2, rank_inputs=inputs, explain=False)

    assert caught.value.divergence.position == 2


def test_run_ranks_metrics_dicts_with_the_same_keys_average() -> None:
    results = run_ranks(cases.metric_keys, 2, rank_inputs=lambda rank: ({"loss": float(rank)},))

    assert results == [{"loss": 0.5}, {"loss": 0.5}]


def test_run_ranks_dtensor_full_tensor_on_every_rank_passes() -> None:
    results = run_ranks(cases.full_tensor_everywhere, 2)

    assert results == [[float(n) for n in range(8)]] * 2


def test_run_ranks_full_tensor_on_rank_zero_only_names_full_tensor() -> None:
    with pytest.raises(DivergenceError) as caught:
        run_ranks(cases.full_tensor_on_rank_zero, 2, explain=False)

    gather = caught.value.divergence.at[0]
    assert gather.api == "full_tensor"
    assert gather.site is not None
    assert gather.site.line == cases.line_of("full-tensor")


def test_run_ranks_fsdp2_step_passes_with_the_same_parameters_on_every_rank() -> None:
    results = run_ranks(cases.fsdp2_step, 2)

    torch.testing.assert_close(
        torch.tensor(results[0]), torch.tensor(results[1]), rtol=1e-6, atol=1e-6
    )


def test_run_ranks_async_function_is_run_to_completion() -> None:
    assert run_ranks(cases.async_sum, 2) == [2.0, 2.0]


def test_run_ranks_divergent_case_repeated_never_hangs() -> None:
    for _ in range(50):
        with pytest.raises(DivergenceError):
            run_ranks(cases.guarded_all_reduce, 4, timeout=10, explain=False)


def test_run_ranks_same_run_twice_gives_the_same_report() -> None:
    texts = []
    for _ in range(2):
        with pytest.raises(DivergenceError) as caught:
            run_ranks(cases.rank_dependent_loop, 4, explain=False)
        texts.append(str(caught.value))

    assert texts[0] == texts[1]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"world_size": 0}, "world_size must be at least 1"),
        ({"world_size": 2, "mode": "nccl"}, "mode must be one of threads, gloo"),
        ({"world_size": 2, "timeout": 0}, "timeout must be positive"),
    ],
)
def test_run_ranks_bad_arguments_raise_value_error(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        run_ranks(cases.balanced_sum, **kwargs)


@pytest.mark.filterwarnings("ignore::FutureWarning")  # the deprecated collectives too
def test_run_ranks_every_collective_moves_the_right_data() -> None:
    results = run_ranks(cases.every_collective, 2)

    for rank, result in enumerate(results):
        assert result["all_gather"] == [0.0, 1.0]
        assert result["all_gather_into_tensor"] == [0.0, 1.0]
        assert result["broadcast"] == 1.0
        assert result["scatter"] == 10.0 + rank
        assert result["gather"] == ([0.0, 1.0] if rank == 1 else None)
        assert result["all_reduce_coalesced"] == [[1.0], [2.0, 2.0]]
        assert result["reduce_scatter"] == float(sum(s + rank for s in range(2)))
        assert result["all_to_all_single"] == [float(rank), 10.0 + rank]
        assert result["all_to_all"] == [float(rank), 100.0 + rank]
        assert result["reduce"] == ([6.0, 6.0] if rank == 0 else [3.0, 3.0])
        assert result["reduce_scatter_tensor"] == float(sum(rank + s for s in range(2)))
        assert result["backend"] == "ranklint_threads"


@pytest.mark.filterwarnings("ignore::FutureWarning")  # the deprecated collectives too
def test_run_ranks_records_each_collectives_op_root_reduction_and_shapes() -> None:
    with pytest.raises(DivergenceError) as caught:
        run_ranks(lambda r, w: cases.every_collective(r, w, extra=True), 2, explain=False)

    log = caught.value.views[1].log
    assert [(c.op, c.root, c.reduce_op, c.shapes) for c in log] == [
        ("all_gather", None, None, ((1,),)),
        ("all_gather_single", None, None, ((1,),)),
        ("broadcast", 1, None, ((1,),)),
        ("scatter", 0, None, ((1,),)),
        ("gather", 1, None, ((1,),)),
        ("all_reduce_coalesced", None, "MAX", ((1,), (2,))),
        ("reduce_scatter", None, "SUM", ((1,),)),
        ("all_to_all_single", None, None, ((2,),)),
        ("all_to_all", None, None, ((1,), (1,))),
        ("reduce", 0, "PRODUCT", ((2,),)),
        ("reduce_scatter_single", None, "SUM", ((2,),)),
        ("barrier", None, None, ()),
    ]
    assert [c.seq for c in log] == list(range(12))
    assert {c.dtypes for c in log[:-1]} == {("float32",), ("float32", "float32")}
    assert log[1].api == "all_gather_into_tensor"
    assert caught.value.divergence.position == 12


def test_run_ranks_group_creation_records_the_members() -> None:
    with pytest.raises(DivergenceError) as caught:
        run_ranks(cases.group_on_some_ranks, 2, explain=False)

    created = caught.value.divergence.at
    assert created[0].extra == (("ranks", "[0]"),)
    assert created[1].extra == (("ranks", "[0, 1]"),)
    assert created[0].op == "new_group"
