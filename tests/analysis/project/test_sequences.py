"""Sequences of collectives compared across the sides of a rank test (`leaves.agree`),
and what an early exit skips of the code after it."""

from __future__ import annotations

import pytest

from ranklint.analysis.project.sequences import (
    NO_TAIL,
    OPEN,
    CollectiveLeaf,
    Tail,
    agree,
    issued,
)
from ranklint.model.events import Branch, Cond, Exit, ExitKind, Loop, exiting_conditions
from ranklint.model.kinds import CallKind
from ranklint.model.taint import CLEAN


def _leaf(op: str) -> CollectiveLeaf:
    return CollectiveLeaf(op, None, frozenset(), CallKind.COLLECTIVE, ())


B, R, G = _leaf("broadcast"), _leaf("all_reduce"), _leaf("barrier")


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ([B, R], [B, R], True),
        ([B, R], [B], False),  # closed sides must match exactly
        ([B], [B, R], False),
        ([], [], True),
        ([B, OPEN], [B, R, G], True),  # an open side agrees with what begins alike
        ([B, R, G], [B, OPEN, R], True),
        ([B, OPEN], [B], True),
        ([OPEN], [G], True),
        ([B, OPEN], [R, B], False),  # ... but not with what begins otherwise
        ([B, R, OPEN], [B], False),  # a closed side shorter than the open one's head
        ([B], [B, R, OPEN], False),
        ([B, OPEN, G], [B, R, OPEN], True),  # two open sides agree where they overlap
        ([R, OPEN], [B, OPEN], False),
    ],
)
def test_agree_compares_heads_up_to_the_first_received_value_test(
    first: list[CollectiveLeaf], second: list[CollectiveLeaf], expected: bool
) -> None:
    assert agree(first, second) is expected


def test_issued_drops_the_marks_of_received_value_tests_only() -> None:
    assert issued([B, OPEN, R]) == [B, R]


# -- what an early exit skips (Tail) and which tests it unbalances --------------------

# Four events that compare unequal (the tail only moves them around).
_A, _B, _C, _D = (
    Exit(kind) for kind in (ExitKind.RETURN, ExitKind.RAISE, ExitKind.EXIT, ExitKind.BREAK)
)


def test_tail_after_a_nested_block_puts_the_blocks_rest_before_the_enclosing_tail() -> None:
    tail = Tail(([_C],), ([_D],)).after([_A, _B])

    assert tail.skipped(ExitKind.CONTINUE) == [_A, _B, _C]
    assert tail.skipped(ExitKind.RETURN) == [_A, _B, _C, _D]
    assert Tail(([_C],), ([_D],)).after([]).skipped(ExitKind.RETURN) == [_C, _D]


def test_tail_into_a_loop_moves_everything_after_the_loop_to_what_only_a_return_skips() -> None:
    tail = Tail(([_C],), ([_D],)).into_loop([_A, _B])

    assert tail.skipped(ExitKind.BREAK) == []
    assert tail.skipped(ExitKind.RETURN) == [_A, _B, _C, _D]


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        (ExitKind.RETURN, [_A, _B]),
        (ExitKind.EXIT, [_A, _B]),
        (ExitKind.CONTINUE, [_A]),
        (ExitKind.BREAK, [_A]),
    ],
)
def test_tail_skipped_by_an_exit_is_the_loop_rest_and_for_function_exits_the_rest_too(
    kind: ExitKind, expected: list[Exit]
) -> None:
    assert Tail(([_A],), ([_B],)).skipped(kind) == expected
    assert NO_TAIL.skipped(kind) == []


def _cond(key: str) -> Cond:
    return Cond(key, CLEAN, key)


def test_exiting_conditions_name_tests_with_an_exit_anywhere_in_an_arm_not_in_nested_loops() -> (
    None
):
    inner = Branch(_cond("stale"), ([Exit(ExitKind.RETURN)], []))
    events = [
        Branch(_cond("rank==0"), ([inner], [])),  # a return on some paths of the arm
        Branch(_cond("other"), ([], [Exit(ExitKind.CONTINUE)])),  # in the second arm
        Branch(_cond("raise"), ([Exit(ExitKind.RAISE)], [])),  # a raise is not an exit
        Branch(_cond("loop"), ([Loop(None, [Exit(ExitKind.BREAK)])], [])),  # its own loop's
        Loop(None, [Branch(_cond("in-loop"), ([Exit(ExitKind.RETURN)], []))]),
        Branch(None, ([Exit(ExitKind.RETURN)], [])),  # no condition: nothing to name
    ]

    assert list(exiting_conditions(events)) == ["rank==0", "stale", "other", "in-loop"]
