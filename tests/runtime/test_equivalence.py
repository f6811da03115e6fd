"""Equivalence across world sizes: run_ranks(..., equivalent_to=M) and its comparison.

The five bug classes each get a small training step of their own, buggy and
fixed: the buggy one must raise NotEquivalentError naming the value and the
factor, the fixed one must pass.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

torch = pytest.importorskip("torch", reason="the runtime companion needs torch")

import torch.distributed as dist  # noqa: E402 - after the skip
from torch.nn.parallel import DistributedDataParallel  # noqa: E402

from ranklint.runtime import (  # noqa: E402
    DivergenceError,
    NotEquivalentError,
    RankFailure,
    RuntimeCompanionError,
    run_ranks,
)
from ranklint.runtime.equivalence import (  # noqa: E402
    STRUCTURE,
    VALUE,
    differences,
    name_factor,
)
from tests import runtime_cases as cases  # noqa: E402

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.timeout(120)

BATCH = torch.randn(8, 4, generator=torch.Generator().manual_seed(1))
TARGET = torch.randn(8, generator=torch.Generator().manual_seed(2))
AVG = dist.ReduceOp.AVG
SUM = dist.ReduceOp.SUM


def _shard(rank: int, world_size: int) -> tuple[Any, Any]:
    return BATCH.chunk(world_size)[rank], TARGET.chunk(world_size)[rank]


def _weights() -> Any:
    return torch.linspace(-1.0, 1.0, 4).requires_grad_()


def _mean_over_ranks(value: Any) -> Any:
    value = value.detach().clone()
    dist.all_reduce(value, op=AVG)
    return value


# (1) gradients all_reduced with SUM where MEAN was meant.


def _sgd_step(rank: int, world_size: int, grad_op: Any) -> dict[str, Any]:
    w = _weights()
    x, y = _shard(rank, world_size)
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    dist.all_reduce(w.grad, op=grad_op)
    with torch.no_grad():
        w -= 0.1 * w.grad
    return {"loss": _mean_over_ranks(loss), "grads": {"w": w.grad}, "params": {"w": w.detach()}}


def grads_summed(rank: int, world_size: int) -> dict[str, Any]:
    return _sgd_step(rank, world_size, SUM)


def grads_averaged(rank: int, world_size: int) -> dict[str, Any]:
    return _sgd_step(rank, world_size, AVG)


# (2) a metric reduced twice: counted over all ranks in evaluate, summed again when logged.


def _evaluate(rank: int, world_size: int, reduce_again: bool) -> dict[str, Any]:
    x, y = _shard(rank, world_size)
    correct = ((x @ torch.ones(4)).sign() == y.sign()).sum()
    dist.all_reduce(correct, op=dist.ReduceOp.SUM)  # the total over the ranks
    metrics = {"correct": correct, "seen": torch.tensor(len(BATCH))}
    if reduce_again:  # the logger reduces what it is given, already reduced
        dist.all_reduce(metrics["correct"], op=dist.ReduceOp.SUM)
    return metrics


def metric_reduced_twice(rank: int, world_size: int) -> dict[str, Any]:
    return _evaluate(rank, world_size, reduce_again=True)


def metric_reduced_once(rank: int, world_size: int) -> dict[str, Any]:
    return _evaluate(rank, world_size, reduce_again=False)


# (3) the loss multiplied by the world size ("DDP divides by it").


def _scaled_step(rank: int, world_size: int, scale: float) -> dict[str, Any]:
    w = _weights()
    x, y = _shard(rank, world_size)
    loss = ((x @ w - y) ** 2).mean() * scale
    loss.backward()
    dist.all_reduce(w.grad, op=AVG)
    return {"loss": _mean_over_ranks(loss), "grads": {"w": w.grad}}


def loss_times_world_size(rank: int, world_size: int) -> dict[str, Any]:
    return _scaled_step(rank, world_size, scale=world_size)


def loss_unscaled(rank: int, world_size: int) -> dict[str, Any]:
    return _scaled_step(rank, world_size, scale=1.0)


# (4) metrics stacked in a rank-dependent key order, then all_reduced: equal shapes.


def _metrics(rank: int, world_size: int, sort_keys: bool) -> dict[str, Any]:
    x, y = _shard(rank, world_size)
    error = x @ torch.ones(4) - y
    metrics: dict[str, Any] = {}
    # the order the metrics arrive in depends on the rank (as events do)
    for name in ("mse", "mae") if rank % 2 == 0 else ("mae", "mse"):
        metrics[name] = (error**2).mean() if name == "mse" else error.abs().mean()
    names = sorted(metrics) if sort_keys else list(metrics)
    stacked = torch.stack([metrics[name] for name in names])
    dist.all_reduce(stacked, op=AVG)
    return dict(zip(names, stacked.tolist(), strict=True))


def metrics_in_rank_order(rank: int, world_size: int) -> dict[str, Any]:
    return _metrics(rank, world_size, sort_keys=False)


def metrics_in_sorted_order(rank: int, world_size: int) -> dict[str, Any]:
    return _metrics(rank, world_size, sort_keys=True)


# (5) a double reduction: DDP averages the gradients, a helper sums them again.


def _ddp_step(rank: int, world_size: int, sync_again: bool) -> dict[str, Any]:
    torch.manual_seed(0)
    model = DistributedDataParallel(torch.nn.Linear(4, 1))
    x, y = _shard(rank, world_size)
    loss = ((model(x).squeeze(1) - y) ** 2).mean()
    loss.backward()  # DDP all_reduces (averages) the gradients here
    if sync_again:
        for parameter in model.parameters():
            dist.all_reduce(parameter.grad, op=dist.ReduceOp.SUM)
    return {
        "loss": _mean_over_ranks(loss),
        "grads": {name: p.grad for name, p in model.module.named_parameters()},
    }


def ddp_grads_summed_again(rank: int, world_size: int) -> dict[str, Any]:
    return _ddp_step(rank, world_size, sync_again=True)


def ddp_grads_once(rank: int, world_size: int) -> dict[str, Any]:
    return _ddp_step(rank, world_size, sync_again=False)


def _not_equivalent(fn: Any, world_size: int, **options: Any) -> NotEquivalentError:
    with pytest.raises(NotEquivalentError) as caught:
        run_ranks(fn, world_size, equivalent_to=1, explain=False, **options)
    return caught.value


# The five classes, caught and fixed.


def test_equivalence_sum_where_mean_was_meant_names_the_gradient_and_the_world_size() -> None:
    error = _not_equivalent(grads_summed, 2)

    assert error.path == "result['grads']['w']"
    assert (error.rank, error.world_size, error.reference_world_size) == (0, 2, 1)
    assert error.factor == pytest.approx(2.0, rel=1e-5)
    assert "factor 2, equal to the world size 2" in str(error)
    assert "also differ: result['params']['w']" in str(error)
    assert "a SUM where a MEAN was meant" in str(error)


def test_equivalence_gradients_averaged_passes_and_returns_the_n_rank_results() -> None:
    results = run_ranks(grads_averaged, 2, equivalent_to=1)

    assert len(results) == 2
    torch.testing.assert_close(results[0]["params"]["w"], results[1]["params"]["w"])


def test_equivalence_metric_reduced_twice_names_the_metric_and_the_world_size() -> None:
    error = _not_equivalent(metric_reduced_twice, 4)

    assert error.path == "result['correct']"
    assert error.factor == pytest.approx(4.0)
    assert error.factor_name == "the world size 4"
    assert (error.expected, error.got) == ("tensor(2, dtype=int64)", "tensor(8, dtype=int64)")


def test_equivalence_metric_reduced_once_passes_at_world_size_4() -> None:
    results = run_ranks(metric_reduced_once, 4, equivalent_to=1)

    assert [int(result["seen"]) for result in results] == [8, 8, 8, 8]


def test_equivalence_loss_times_world_size_names_the_loss_first() -> None:
    error = _not_equivalent(loss_times_world_size, 2)

    assert error.path == "result['loss']"
    assert error.factor == pytest.approx(2.0, rel=1e-5)
    assert "result['grads']['w'] (factor 2, equal to the world size 2)" in str(error)


def test_equivalence_unscaled_loss_passes() -> None:
    assert len(run_ranks(loss_unscaled, 2, equivalent_to=1)) == 2


def test_equivalence_metrics_in_rank_dependent_order_are_reported_as_not_replicated() -> None:
    error = _not_equivalent(metrics_in_rank_order, 2)

    text = str(error)
    assert error.path == "result['mse']"
    assert (error.reference_rank, error.rank) == (0, 1)
    assert error.world_size == error.reference_world_size == 2
    assert text.startswith(
        "not replicated at world size 2: result['mse'] differs between rank 0 and rank 1"
    )
    assert "key order depends on the rank" in text


def test_equivalence_metrics_in_sorted_order_pass() -> None:
    results = run_ranks(metrics_in_sorted_order, 2, equivalent_to=1)

    assert results[0] == pytest.approx(results[1], rel=1e-6)


def test_equivalence_ddp_gradients_summed_again_names_the_weight_and_the_world_size() -> None:
    error = _not_equivalent(ddp_grads_summed_again, 2)

    assert error.path == "result['grads']['weight']"
    assert error.factor == pytest.approx(2.0, rel=1e-5)
    assert "equal to the world size 2" in str(error)
    assert "result['grads']['bias'] (factor 2, equal to the world size 2)" in str(error)


def test_equivalence_ddp_gradients_reduced_once_pass() -> None:
    assert len(run_ranks(ddp_grads_once, 2, equivalent_to=1)) == 2


# run_ranks: sizes, seeds, tolerances, propagation, arguments.


def test_equivalence_against_two_ranks_names_the_ratio_of_the_world_sizes() -> None:
    with pytest.raises(NotEquivalentError) as caught:
        run_ranks(grads_summed, 4, equivalent_to=2)

    assert caught.value.reference_world_size == 2
    assert caught.value.factor == pytest.approx(2.0, rel=1e-5)
    assert caught.value.factor_name == "the ratio of the world sizes 4/2"


def _random_batch_mean(rank: int, world_size: int) -> Any:
    batch = torch.randn(8)
    return _mean_over_ranks(batch.chunk(world_size)[rank].mean())


def test_equivalence_seeds_every_rank_alike_by_default_so_a_random_batch_is_shared() -> None:
    results = run_ranks(_random_batch_mean, 2, equivalent_to=1)

    torch.testing.assert_close(results[0], results[1], rtol=0, atol=0)


def test_equivalence_with_per_rank_seeds_draws_different_batches_and_fails() -> None:
    with pytest.raises(NotEquivalentError):
        run_ranks(_random_batch_mean, 2, equivalent_to=1, same_seed=False)


def _off_by(relative: float) -> Any:
    def fn(rank: int, world_size: int) -> float:
        return 1.0 + relative * (world_size - 1)

    return fn


def test_equivalence_difference_inside_rtol_passes_and_outside_fails() -> None:
    assert run_ranks(_off_by(1e-3), 2, equivalent_to=1, rtol=1e-2) == [1.001, 1.001]
    with pytest.raises(NotEquivalentError) as caught:
        run_ranks(_off_by(1e-3), 2, equivalent_to=1)

    assert caught.value.max_abs_diff == pytest.approx(1e-3)
    assert "(rtol=1e-05, atol=1e-06)" in str(caught.value)


def test_equivalence_divergence_at_world_size_n_propagates_unchanged() -> None:
    with pytest.raises(DivergenceError):
        run_ranks(cases.guarded_all_reduce, 2, equivalent_to=1, explain=False)


def _raises_alone(rank: int, world_size: int) -> None:
    if world_size == 1:
        raise ValueError("only at world size 1")


def test_equivalence_failure_of_the_reference_run_propagates_as_rank_failure() -> None:
    with pytest.raises(RankFailure, match="only at world size 1"):
        run_ranks(_raises_alone, 2, equivalent_to=1)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"equivalent_to": 2}, r"equivalent_to \(2\) must be smaller than world_size \(2\)"),
        ({"equivalent_to": 0}, "equivalent_to must be at least 1"),
        ({"equivalent_to": True}, "equivalent_to must be a world size"),
        ({"equivalent_to": 1, "rtol": -1.0}, "rtol must be a non-negative number"),
        ({"equivalent_to": 1, "rank_inputs": lambda rank: ()}, "rank_inputs cannot be combined"),
    ],
)
def test_equivalence_bad_arguments_raise_value_error_before_running(
    options: dict[str, Any], message: str
) -> None:
    def never(rank: int, world_size: int) -> None:
        raise AssertionError("ran")

    with pytest.raises(ValueError, match=message):
        run_ranks(never, 2, **options)


def test_equivalence_world_size_not_a_multiple_of_the_reference_raises_value_error() -> None:
    with pytest.raises(ValueError, match=r"world_size \(3\) must be a multiple of equivalent_to"):
        run_ranks(grads_averaged, 3, equivalent_to=2)


def test_not_equivalent_error_belongs_to_the_runtime_family() -> None:
    assert issubclass(NotEquivalentError, RuntimeCompanionError)


# The comparison on its own.


def test_differences_of_equal_nested_results_are_none() -> None:
    value = {"a": [torch.ones(3), 2, None, "x", True], "b": (1.5, float("nan"))}
    other = {"b": (1.5, float("nan")), "a": [torch.ones(3), 2.0, None, "x", True]}

    assert differences(value, other, rtol=0, atol=0) == []


@pytest.mark.parametrize(
    ("expected", "got", "path", "detail"),
    [
        (
            {"a": 1, "b": 2},
            {"a": 1, "c": 2},
            "result",
            "keys ['b'] only at M; keys ['c'] only at N",
        ),
        ([1, 2], [1, 2, 3], "result", "length 2 at M, 3 at N"),
        ({"x": torch.ones(2)}, {"x": 1.0}, "result['x']", "a tensor at M, a number at N"),
        ([torch.ones(8)], [torch.ones(4)], "result[0]", "shape (8,) at M, (4,) at N"),
        (torch.ones(2), torch.ones(2, dtype=torch.float64), "result", "dtype float32 at M"),
        ((True,), (1,), "result[0]", "a bool at M, a number at N"),
        ([None], [0.0], "result[0]", "None at M, a number at N"),
        ((1,), [1], "result", "a tuple at M, a list at N"),
    ],
)
def test_differences_structure_mismatch_is_reported_with_what_differs(
    expected: Any, got: Any, path: str, detail: str
) -> None:
    (found,) = differences(expected, got, rtol=0, atol=0, labels=("M", "N"))

    assert (found.path, found.kind) == (path, STRUCTURE)
    assert detail in found.detail


def test_differences_value_mismatch_names_the_index_of_the_largest_difference() -> None:
    expected = torch.zeros(2, 3)
    got = expected.clone()
    got[1, 2], got[0, 0] = 5.0, 1.0

    (found,) = differences({"w": expected}, {"w": got}, rtol=0, atol=0)

    assert (found.path, found.kind, found.index) == ("result['w']", VALUE, (1, 2))
    assert found.max_abs_diff == 5.0
    assert found.factor is None


def test_differences_factor_is_the_scale_only_when_a_scale_explains_the_values() -> None:
    base = torch.tensor([1.0, -2.0, 3.0])

    (scaled,) = differences(base, base * 3, rtol=1e-5, atol=1e-6)
    (shifted,) = differences(base, base + 1, rtol=1e-5, atol=1e-6)

    assert scaled.factor == pytest.approx(3.0)
    assert shifted.factor is None


def test_differences_tolerance_follows_atol_plus_rtol_times_expected() -> None:
    assert differences(100.0, 100.5, rtol=0.01, atol=0) == []
    assert differences(100.0, 101.5, rtol=0.01, atol=0)[0].max_abs_diff == pytest.approx(1.5)
    assert differences(torch.zeros(2), torch.full((2,), 1e-7), rtol=0, atol=1e-6) == []


def test_differences_nan_on_one_side_only_differs() -> None:
    (found,) = differences(torch.tensor([1.0, 2.0]), torch.tensor([1.0, math.nan]), rtol=0, atol=0)

    assert found.index == (1,)
    assert found.max_abs_diff == math.inf


def test_differences_strings_and_bools_compare_exactly() -> None:
    found = differences(["adam", True], ["sgd", False], rtol=1.0, atol=1.0)

    assert [(d.path, d.expected, d.got) for d in found] == [
        ("result[0]", "'adam'", "'sgd'"),
        ("result[1]", "True", "False"),
    ]


def test_differences_summary_of_a_long_tensor_shows_its_first_elements() -> None:
    (found,) = differences(torch.arange(10.0), torch.arange(10.0) * 2, rtol=0, atol=0)

    assert found.expected == "tensor(shape=(10,), dtype=float32) [0, 1, 2, 3, 4, 5, ...]"


@pytest.mark.parametrize(
    ("factor", "n", "m", "name"),
    [
        (4.0, 4, 1, "the world size 4"),
        (0.25, 4, 1, "1 / the world size 4"),
        (4.0, 2, 1, "the square of the world size 2"),
        (2.0, 4, 2, "the ratio of the world sizes 4/2"),
        (4.0, 4, 2, "the world size 4"),
        (2.0004, 2, 1, "the world size 2"),
        (2.01, 2, 1, None),
        (1.37, 2, 1, None),
        (None, 2, 1, None),
    ],
)
def test_name_factor_names_world_size_ratios_only(
    factor: float | None, n: int, m: int, name: str | None
) -> None:
    assert name_factor(factor, n, m) == name


def _rank_dependent(rank: int, world_size: int) -> dict[str, Any]:
    return {"step": 3, "rank_value": torch.tensor([float(rank)])}


def test_equivalence_result_that_differs_per_rank_is_not_replicated_naming_both_ranks() -> None:
    error = _not_equivalent(_rank_dependent, 2)

    assert error.path == "result['rank_value']"
    assert str(error).splitlines()[1:3] == [
        "  rank 0: tensor(shape=(1,), dtype=float32) [0]",
        "  rank 1: tensor(shape=(1,), dtype=float32) [1]",
    ]


def _shard_returned(rank: int, world_size: int) -> Any:
    return BATCH.chunk(world_size)[rank] * 0 + 1


def test_equivalence_shard_returned_unreduced_is_a_shape_difference() -> None:
    error = _not_equivalent(_shard_returned, 2)

    assert error.kind == STRUCTURE
    assert error.factor is None
    assert "shape (8, 4) at world size 1, (4, 4) at world size 2" in str(error)


# The pytest marker.

MARKED = """
import pytest
import torch
import torch.distributed as dist

W = torch.tensor([0.5, -1.0, 2.0])
X = torch.arange(12.0).reshape(4, 3)


def _grad(rank, world_size, op):
    w = W.clone().requires_grad_()
    (X.chunk(world_size)[rank] @ w).pow(2).mean().backward()
    dist.all_reduce(w.grad, op=op)
    return {"grad": w.grad}


@pytest.mark.ranks(2, equivalent_to=1)
def test_averaged(rank, world_size):
    return _grad(rank, world_size, dist.ReduceOp.AVG)


@pytest.mark.ranks(2, equivalent_to=1, rtol=1e-4, atol=1e-5)
def test_summed(rank, world_size):
    return _grad(rank, world_size, dist.ReduceOp.SUM)


@pytest.mark.ranks(2, rtol=1e-4)
def test_tolerance_without_reference():
    pass


@pytest.mark.ranks(2, equivalent_to=2)
def test_reference_too_large():
    pass
"""


def test_plugin_marker_equivalent_to_compares_returned_values_and_validates_options(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_equivalent=MARKED)

    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")

    result.assert_outcomes(passed=1, failed=3)
    text = result.stdout.str()
    assert "result['grad'] on rank 0 at world size 2 is 2 times its value" in text
    assert "(rtol=0.0001, atol=1e-05)" in text
    assert "def check(" not in text  # the comparison's frames are hidden
    assert "got rtol without equivalent_to" in text
    assert "equivalent_to (2) must be smaller than world_size (2)" in text


@pytest.mark.slow
@pytest.mark.distributed
def test_equivalence_in_gloo_mode_catches_the_sum_and_passes_the_mean() -> None:
    with pytest.raises(NotEquivalentError) as caught:
        run_ranks(grads_summed, 2, equivalent_to=1, mode="gloo", timeout=60, explain=False)

    assert caught.value.path == "result['grads']['w']"
    assert caught.value.factor_name == "the world size 2"
    assert len(run_ranks(grads_averaged, 2, equivalent_to=1, mode="gloo", timeout=60)) == 2
