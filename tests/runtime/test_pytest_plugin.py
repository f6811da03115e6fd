"""The pytest plugin of the runtime companion, through a real pytest run (pytester)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch", reason="the runtime companion needs torch")

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.timeout(120)

BODIES = """
import pytest
import torch
import torch.distributed as dist


@pytest.mark.ranks(2)
def test_balanced(rank, world_size):
    tensor = torch.ones(2) * (rank + 1)
    dist.all_reduce(tensor)
    assert world_size == 2
    torch.testing.assert_close(tensor, torch.full((2,), 3.0), rtol=0, atol=0)


@pytest.mark.ranks(2)
def test_guarded(rank):
    if rank == 0:
        dist.barrier()


@pytest.mark.ranks(3)
def test_assert_on_one_rank(rank):
    assert rank != 2, "rank two is unhappy"


def test_fixture(ranks):
    def fn(rank, world_size):
        return dist.get_rank()
    assert ranks(fn, 4) == [0, 1, 2, 3]


@pytest.mark.ranks("two")
def test_bad_marker():
    pass
"""


def test_plugin_marker_runs_bodies_on_ranks_and_names_failing_rank(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_ranks=BODIES)

    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")

    result.assert_outcomes(passed=2, failed=3)
    text = result.stdout.str()
    assert "ranks diverged at collective #0 on group [0, 1]: rank 1 never issued it" in text
    assert "rank two is unhappy" in text
    assert "(raised on rank 2 of 3)" in text
    assert "takes the world size as its one positional argument" in text


def test_plugin_registers_the_marker_under_strict_markers(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--markers")

    assert "@pytest.mark.ranks(world_size, mode='threads', timeout=60.0)" in result.stdout.str()


def test_plugin_under_xdist_and_pytest_timeout_gives_the_same_verdicts(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_ranks=BODIES)

    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-q", "-n", "2", "--timeout", "60"
    )

    result.assert_outcomes(passed=2, failed=3)
    assert "(raised on rank 2 of 3)" in result.stdout.str()
