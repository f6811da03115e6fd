"""Which arm of a branch runs once every N steps: nested `and`/`or` tests, and the
depth to which they are read (`hot_markers.periodic_arm`)."""

from __future__ import annotations

import libcst as cst
import pytest

from ranklint.analysis.walk.hot_markers import periodic_arm

PERIODIC = "step % 10 == 0"


def _arm(test: str) -> int:
    return periodic_arm(cst.parse_expression(test))


def _nested(operator: str, leaf: str, depth: int, *, on_the_left: bool) -> str:
    """``leaf`` at ``depth`` levels of ``operator`` (the other operand: ``n``)."""
    test = leaf
    for _ in range(depth):
        test = f"({test}) {operator} n" if on_the_left else f"n {operator} ({test})"
    return test


@pytest.mark.parametrize("on_the_left", [True, False], ids=["left", "right"])
@pytest.mark.parametrize(("depth", "expected"), [(1, 1), (16, 1), (17, 0)])
def test_periodic_test_under_nested_ands_is_read_sixteen_levels_deep(
    on_the_left: bool, depth: int, expected: int
) -> None:
    assert _arm(_nested("and", PERIODIC, depth, on_the_left=on_the_left)) == expected


@pytest.mark.parametrize("on_the_left", [True, False], ids=["left", "right"])
def test_test_nested_past_the_depth_is_neither_arm(on_the_left: bool) -> None:
    # Beyond the depth nothing is read: not even that `n` is not periodic.
    assert _arm(_nested("and", "n", 17, on_the_left=on_the_left)) == 0
    assert _arm(_nested("and", "n", 3, on_the_left=on_the_left)) == 0


@pytest.mark.parametrize(("depth", "expected"), [(2, 1), (16, 1), (17, 0)])
def test_or_of_periodic_tests_is_periodic_while_every_operand_is_read(
    depth: int, expected: int
) -> None:
    test = PERIODIC
    for index in range(depth):
        test = f"step % {index + 2} == 0 or ({test})"
    left = PERIODIC
    for index in range(depth):
        left = f"({left}) or step % {index + 2} == 0"

    assert _arm(test) == expected
    assert _arm(left) == expected


@pytest.mark.parametrize(
    ("test", "expected"),
    [("not step % 10 == 0", -1), ("not not step % 10 == 0", 1), ("step % 10 != 0", -1)],
)
def test_negations_flip_the_periodic_arm(test: str, expected: int) -> None:
    assert _arm(test) == expected


@pytest.mark.parametrize(
    ("test", "expected"),
    [
        # flags that hold on the first step only
        ("first_step", 1),
        ("self.first_step", 1),
        ("is_first_step", 1),
        ("is_first", 0),  # may name a pipeline stage
        ("first_step()", 0),  # a call, not a flag
        ("step", 0),
        # flags that hold from the second step on
        ("self._initialized", -1),
        ("initialized", -1),
        ("self._warmed_up", -1),
        ("not self._initialized", 1),
        ("self.not_initialized", 0),
        ("self.un_initialized", 0),
        ("self.uninitialized", 0),
        ("self._initialized == 0", 0),
    ],
)
def test_once_only_flags_name_the_arm_that_runs_once(test: str, expected: int) -> None:
    assert _arm(test) == expected
