"""Sequences of collectives compared across the sides of a rank test (`leaves.agree`)."""

from __future__ import annotations

import pytest

from ranklint.analysis.project.sequences import OPEN, CollectiveLeaf, agree, issued
from ranklint.model.kinds import CallKind


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
