"""The taint value: how the union of two taints combines each of their parts."""

from __future__ import annotations

import dataclasses

import pytest

from ranklint.model.taint import CLEAN, Taint

pytestmark = pytest.mark.timeout(30)

_FLAGS = ("rank", "membership", "strong", "share", "data")


@pytest.mark.parametrize("flag", _FLAGS)
def test_union_of_taints_holds_a_flag_either_side_holds(flag: str) -> None:
    marked = Taint(**{flag: True}, via=frozenset({"a.f"}))
    plain = Taint(via=frozenset({"b.g"}))
    for union in (marked | plain, plain | marked):
        assert {f for f in _FLAGS if getattr(union, f)} == {flag}
        assert union.via == frozenset({"a.f", "b.g"})


def test_union_of_taints_joins_axes_and_via() -> None:
    first = Taint(rank=True, axes=frozenset({"tp"}), via=frozenset({"a.f"}))
    second = Taint(rank=True, axes=frozenset({"dp"}), via=frozenset({"b.g"}))
    assert first | second == Taint(
        rank=True, axes=frozenset({"tp", "dp"}), via=frozenset({"a.f", "b.g"})
    )


def test_union_with_the_clean_taint_is_the_other_taint_itself() -> None:
    taint = Taint(rank=True, share=True)
    assert taint | CLEAN is taint
    assert CLEAN | taint is taint


@pytest.mark.parametrize(
    ("taint", "expected"),
    [
        (CLEAN, False),
        (Taint(rank=True), True),
        (Taint(via=frozenset({"a.f"})), True),
        (Taint(share=True, data=True, strong=True, membership=True), False),
    ],
)
def test_possible_when_rank_dependent_now_or_through_a_call(taint: Taint, expected: bool) -> None:
    assert taint.possible is expected


def test_taint_is_immutable() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Taint().rank = True  # type: ignore[misc]
