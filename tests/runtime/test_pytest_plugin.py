"""The pytest plugin of the runtime companion, through a real pytest run (pytester)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch", reason="the runtime companion needs torch")

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.timeout(120)


def _report_lines(lines: list[str]) -> list[str]:
    """The failure report of a run, without the short summary at its end, whose
    length pytest sets by the environment (in CI it is never truncated)."""
    summary = [i for i, line in enumerate(lines) if "short test summary info" in line]
    return lines[: summary[0]] if summary else lines


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


GUARDED = """
import pytest
import torch.distributed as dist


@pytest.mark.ranks(2{options})
def test_guarded(rank):
    if rank == 0:
        dist.barrier()
"""


@pytest.mark.parametrize("options", ["", ", mode='gloo', timeout=20"])
def test_plugin_divergence_failure_shows_the_diff_first_without_the_plugins_source(
    pytester: pytest.Pytester, options: str
) -> None:
    pytester.makepyfile(test_guarded=GUARDED.format(options=options))

    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")

    result.assert_outcomes(failed=1)
    lines = result.stdout.lines
    first = "ranks diverged at collective #0 on group [0, 1]: rank 1 never issued it"
    failures = lines.index(next(line for line in lines if "FAILURES" in line))
    assert any(first in line for line in lines[failures : failures + 4])
    assert not [line for line in lines if "pytest_plugin.py" in line or "def body(" in line]
    assert not [line for line in lines if "runtime/__init__.py" in line]
    assert "All traceback entries are hidden" not in result.stdout.str()
    assert len(_report_lines(lines)) < 30


FAILING = """
import pytest


@pytest.mark.ranks(2{options})
def test_unhappy(rank):
    value = rank + 1
    assert value == 1, "rank one is unhappy"
"""


@pytest.mark.parametrize("options", ["", ", mode='gloo', timeout=20"])
def test_plugin_rank_failure_shows_the_ranks_assertion_without_the_plugins_source(
    pytester: pytest.Pytester, options: str
) -> None:
    pytester.makepyfile(test_failing=FAILING.format(options=options))

    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")

    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert "rank one is unhappy" in text
    assert "pytest_plugin.py" not in text
    assert "runtime/__init__.py" not in text


FIXTURE = """
import torch.distributed as dist


def test_fixture_guarded(ranks):
    def fn(rank, world_size):
        if rank == 0:
            dist.barrier()

    ranks(fn, 2, explain=False)
"""


def test_plugin_divergence_through_the_fixture_shows_the_tests_line_then_the_diff(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_fixture_guarded=FIXTURE)

    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")

    result.assert_outcomes(failed=1)
    lines = result.stdout.lines
    assert ">       ranks(fn, 2, explain=False)" in lines
    assert any("DivergenceError: ranks diverged at collective #0" in line for line in lines)
    assert not [line for line in lines if "threads.py" in line or "def run(" in line]
    assert len(_report_lines(lines)) < 24
