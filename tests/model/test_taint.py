"""The taint value: how the union of two taints combines each of their parts."""

from __future__ import annotations

import dataclasses

import pytest

from ranklint.model.taint import CLEAN, Taint, element_of, element_target

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


def test_element_of_a_call_result_keeps_the_axes_and_names_the_element() -> None:
    taint = Taint(via=frozenset({"a.f", "b.g#0"}), axes=frozenset({"tp"}))

    element = element_of(taint, 1)

    assert element == Taint(via=frozenset({"a.f#1"}), axes=frozenset({"tp"}))
    assert [element_target(raw) for raw in element.via] == [("a.f", 1)]


def test_element_of_a_taint_whose_calls_are_all_elements_already_is_clean() -> None:
    taint = Taint(via=frozenset({"b.g#0"}), axes=frozenset({"tp"}))

    assert element_of(taint, 1) == CLEAN


def test_element_target_of_a_plain_call_has_no_index() -> None:
    assert element_target("pkg.mod.get_rank") == ("pkg.mod.get_rank", None)
