"""The comparison behind ``run_ranks(..., equivalent_to=M)``, on its own: no ranks run.

``differences`` (what differs, where, by what factor), ``name_factor``, the
checks ``check_replicated`` and ``check``, ``validate``, and the text and
fields of ``NotEquivalentError``, which users read: its lines are asserted
whole.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

torch = pytest.importorskip("torch", reason="the tensors compared need torch")
np = pytest.importorskip("numpy")

from ranklint.runtime.equivalence import (  # noqa: E402 - after the skip
    OTHERS,
    STRUCTURE,
    VALUE,
    Difference,
    NotEquivalentError,
    check,
    check_replicated,
    differences,
    name_factor,
    validate,
)

EXACT = {"rtol": 0.0, "atol": 0.0}
DEFAULT = {"rtol": 1e-5, "atol": 1e-6}  # run_ranks's defaults

HINT_UP = (
    "  hint: a SUM where a MEAN was meant, a loss multiplied by the world size, or a value "
    "reduced (summed) once too often gives this factor"
)
HINT_DOWN = (
    "  hint: a MEAN where a SUM was meant (a count or a total averaged), or a value divided by "
    "the world size once too often, gives this factor"
)
HINT_SQUARE = (
    "  hint: two SUM reductions where one MEAN was meant (gradients summed twice, or a loss "
    "scaled by the world size whose gradients are summed) give this factor"
)
HINT_OTHER = (
    "  hint: a value computed from the rank's own shard and never reduced, a reduction over the "
    "wrong group, or shards of unequal size averaged as equals differ like this"
)
HINT_REPLICATED = (
    "  hint: values every rank should hold alike differ; a reduction whose inputs are ordered "
    "per rank (a dict whose key order depends on the rank, stacked before an all_reduce) puts "
    "values into the wrong slots. Return per-rank values only after gathering them"
)
HINT_STRUCTURE = (
    "  hint: the function returned differently built results; a value gathered from every "
    "rank, or a rank's own shard returned unreduced, changes its shape with the world size"
)
CANNOT_COMPARE = (
    "cannot compare values of type {}; return tensors, numbers, strings or dicts, lists and "
    "tuples of them"
)


class Tag:
    """A value of no known kind, equal only to itself, shown as its text."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


class Lazy(Tag):
    """A value whose ``==`` builds an expression instead of answering (as sympy's, or arrays')."""

    def __eq__(self, other: object) -> Any:
        return f"{self} == {other}"  # a truthy non-bool

    __hash__ = None  # type: ignore[assignment]


class Opaque(Tag):
    """A value whose ``==`` raises."""

    def __eq__(self, other: object) -> bool:
        raise TypeError("no comparison")

    __hash__ = None  # type: ignore[assignment]


class DTensor(torch.Tensor):
    """Named like torch's DTensor, which holds only a shard of its value on each rank."""


def _error(reference: list[Any], results: list[Any], **tolerances: float) -> NotEquivalentError:
    with pytest.raises(NotEquivalentError) as caught:
        check(reference, results, **(tolerances or DEFAULT))
    return caught.value


def _replicated_error(results: list[Any], **tolerances: float) -> NotEquivalentError:
    with pytest.raises(NotEquivalentError) as caught:
        check_replicated(results, len(results), **(tolerances or EXACT))
    return caught.value


# validate


def test_validate_accepts_zero_tolerances_and_a_reference_that_divides_the_world_size() -> None:
    assert validate(4, 2, 0, 0) is None
    assert validate(2, 1, 0.0, 1e-6) is None


@pytest.mark.parametrize(
    ("world_size", "equivalent_to", "rtol", "atol", "message"),
    [
        (2, 1.0, 0, 0, "equivalent_to must be a world size (an int), got 1.0"),
        (2, False, 0, 0, "equivalent_to must be a world size (an int), got False"),
        (2, 0, 0, 0, "equivalent_to must be at least 1, got 0"),
        (
            2,
            2,
            0,
            0,
            "equivalent_to (2) must be smaller than world_size (2): "
            "the reference run is the smaller one",
        ),
        (
            3,
            2,
            0,
            0,
            "world_size (3) must be a multiple of equivalent_to (2), "
            "so that both sizes shard the data evenly",
        ),
        (2, 1, True, 0, "rtol must be a non-negative number, got True"),
        (2, 1, "0.1", 0, "rtol must be a non-negative number, got '0.1'"),
        (2, 1, -1e-5, 0, "rtol must be a non-negative number, got -1e-05"),
        (2, 1, 0, -1, "atol must be a non-negative number, got -1"),
        (2, 1, 0, math.nan, "atol must be a non-negative number, got nan"),
        (2, 1, 0, None, "atol must be a non-negative number, got None"),
    ],
)
def test_validate_refuses_bad_sizes_and_tolerances_with_a_value_error_naming_them(
    world_size: int, equivalent_to: Any, rtol: Any, atol: Any, message: str
) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        validate(world_size, equivalent_to, rtol, atol)


# differences: structure


@pytest.mark.parametrize(
    ("expected", "got", "path", "detail", "summaries"),
    [
        (
            {"x": torch.ones(2)},
            {"x": 1.5},
            "result['x']",
            "a tensor at M, a number at N",
            ("tensor(shape=(2,), dtype=float32) [1, 1]", "1.5"),
        ),
        ([None], [0.0], "result[0]", "None at M, a number at N", ("None", "0")),
        (("adam",), (1,), "result[0]", "a string at M, a number at N", ("'adam'", "1")),
        (
            np.array([1.0, 2.0]),
            3.0,
            "result",
            "an array at M, a number at N",
            ("array(shape=(2,), dtype=float64)", "3"),
        ),
        ([{1, 2}], [1], "result[0]", "a set at M, a number at N", ("{1, 2}", "1")),
        (
            {"a": 1},
            [1],
            "result",
            "a dict at M, a list at N",
            ("dict with keys ['a']", "list of 1"),
        ),
        ((1,), [1], "result", "a tuple at M, a list at N", ("tuple of 1", "list of 1")),
        (
            {"a": 1, "b": 2},
            {"a": 1},
            "result",
            "keys ['b'] only at M",
            ("dict with keys ['a', 'b']", "dict with keys ['a']"),
        ),
        (
            {"a": 1},
            {"a": 1, "b": 2, "c": 3},
            "result",
            "keys ['b', 'c'] only at N",
            ("dict with keys ['a']", "dict with keys ['a', 'b', 'c']"),
        ),
        (
            {"a": 1, "b": 2},
            {"a": 1, "c": 2},
            "result",
            "keys ['b'] only at M; keys ['c'] only at N",
            ("dict with keys ['a', 'b']", "dict with keys ['a', 'c']"),
        ),
        ([1, 2], [1, 2, 3], "result", "length 2 at M, 3 at N", ("list of 2", "list of 3")),
        (
            {"w": torch.ones(2, 3)},
            {"w": torch.ones(3)},
            "result['w']",
            "shape (2, 3) at M, (3,) at N",
            (
                "tensor(shape=(2, 3), dtype=float32) [1, 1, 1, 1, 1, 1]",
                "tensor(shape=(3,), dtype=float32) [1, 1, 1]",
            ),
        ),
        (
            torch.tensor(2.0),
            torch.ones(1),
            "result",
            "shape () at M, (1,) at N",
            ("tensor(2, dtype=float32)", "tensor(shape=(1,), dtype=float32) [1]"),
        ),
        (
            torch.ones(2),
            torch.ones(2, dtype=torch.float64),
            "result",
            "dtype float32 at M, float64 at N",
            (
                "tensor(shape=(2,), dtype=float32) [1, 1]",
                "tensor(shape=(2,), dtype=float64) [1, 1]",
            ),
        ),
        (
            torch.ones(2).as_subclass(DTensor),
            1.0,
            "result",
            "a tensor at M, a number at N",
            ("DTensor(shape=(2,), dtype=float32)", "1"),
        ),
    ],
)
def test_differences_structure_mismatch_names_what_differs_and_summarises_both_sides(
    expected: Any, got: Any, path: str, detail: str, summaries: tuple[str, str]
) -> None:
    found = differences(expected, got, labels=("M", "N"), **EXACT)

    assert found == [Difference(path, STRUCTURE, *summaries, detail=detail)]


def test_differences_structure_mismatch_stops_the_walk_below_it() -> None:
    found = differences({"a": [1, {"x": 1}]}, {"a": [2]}, **EXACT)

    assert [(d.path, d.kind) for d in found] == [("result['a']", STRUCTURE)]


# differences: values


def test_differences_lists_at_most_the_limit_in_the_expected_order() -> None:
    expected = {key: 0.0 for key in "hgfedcba"}
    got = {key: 1.0 for key in "abcdefgh"}

    default = differences(expected, got, **EXACT)
    two = differences(expected, got, limit=2, **EXACT)

    assert [d.path for d in default] == [f"result[{key!r}]" for key in "hgfedcba"[: OTHERS + 1]]
    assert [d.path for d in two] == ["result['h']", "result['g']"]


def test_differences_numbers_report_the_gap_and_the_ratio_as_factor() -> None:
    assert differences(1.0, 3.0, **EXACT) == [
        Difference("result", VALUE, "1", "3", max_abs_diff=2.0, factor=3.0)
    ]
    assert differences([2], [-1], **EXACT) == [
        Difference("result[0]", VALUE, "2", "-1", max_abs_diff=3.0, factor=-0.5)
    ]


def test_differences_number_summaries_show_six_significant_digits() -> None:
    (found,) = differences(1 / 3, 2 / 3, **EXACT)

    assert (found.expected, found.got) == ("0.333333", "0.666667")
    assert found.factor == pytest.approx(2.0)


@pytest.mark.parametrize(
    ("expected", "got", "max_abs_diff"),
    [
        (0.0, 1.0, 1.0),
        (math.inf, 1.0, math.inf),
        (1.0, math.inf, math.inf),
        (1.0, -math.inf, math.inf),
    ],
)
def test_differences_number_has_no_factor_against_zero_or_an_infinity(
    expected: float, got: float, max_abs_diff: float
) -> None:
    (found,) = differences(expected, got, **EXACT)

    assert (found.kind, found.max_abs_diff, found.factor) == (VALUE, max_abs_diff, None)


def test_differences_nan_equals_nan_and_differs_from_a_number_by_infinity() -> None:
    assert differences([math.nan, math.inf], [math.nan, math.inf], **EXACT) == []
    assert differences(math.nan, 1.0, rtol=1.0, atol=1.0) == [
        Difference("result", VALUE, "nan", "1", max_abs_diff=math.inf)
    ]
    assert differences(1.0, math.nan, rtol=1.0, atol=1.0)[0].max_abs_diff == math.inf


def test_differences_number_tolerance_is_inclusive_and_relative_to_the_expected_value() -> None:
    assert differences(1.0, 1.5, rtol=0, atol=0.5) == []
    assert differences(2.0, 3.0, rtol=0.5, atol=0) == []
    assert differences(2.0, 3.0, rtol=0.25, atol=0.5) == []
    # 0.4 * |got| would cover the gap of 1; 0.4 * |expected| does not.
    assert differences(2.0, 3.0, rtol=0.4, atol=0)[0].max_abs_diff == 1.0


def test_differences_tensor_tolerance_is_inclusive_and_infinities_equal_themselves() -> None:
    assert differences(torch.tensor([2.0]), torch.tensor([3.0]), rtol=0.25, atol=0.5) == []
    infinite = torch.tensor([math.inf, -math.inf, 1.0])
    assert differences(infinite, infinite.clone(), **EXACT) == []
    assert differences(torch.ones(0), torch.ones(0), **EXACT) == []


def test_differences_tensor_reports_the_largest_difference_outside_the_tolerance() -> None:
    # index 1 differs by more, but within rtol=0.1 of 10; index 2 is outside it.
    expected = torch.tensor([0.0, 10.0, 0.0])
    got = torch.tensor([0.0, 10.4, 0.3])

    (found,) = differences(expected, got, rtol=0.1, atol=0)

    assert found.index == (2,)
    assert found.max_abs_diff == pytest.approx(0.3)


def test_differences_complex_tensor_compares_real_and_imaginary_parts() -> None:
    (found,) = differences(torch.tensor([1 + 1j, 2 + 2j]), torch.tensor([1 + 1j, 2 + 5j]), **EXACT)

    assert (found.index, found.max_abs_diff) == ((1, 1), 3.0)
    assert found.got == "tensor(shape=(2,), dtype=complex64) [1+1j, 2+5j]"


def test_differences_bool_tensor_summary_shows_its_values() -> None:
    (found,) = differences(torch.tensor([True, False]), torch.tensor([True, True]), **EXACT)

    assert found.expected == "tensor(shape=(2,), dtype=bool) [True, False]"
    assert found.index == (1,)


def test_differences_tensor_summary_of_exactly_six_elements_has_no_ellipsis() -> None:
    (found,) = differences(torch.arange(6.0), torch.arange(6.0) + 1, **EXACT)

    assert found.expected == "tensor(shape=(6,), dtype=float32) [0, 1, 2, 3, 4, 5]"
    assert found.got == "tensor(shape=(6,), dtype=float32) [1, 2, 3, 4, 5, 6]"


@pytest.mark.parametrize("side", ["expected", "got"])
def test_differences_dtensor_on_either_side_raises_type_error_asking_for_the_full_tensor(
    side: str,
) -> None:
    shard = torch.ones(2).as_subclass(DTensor)
    values = {"expected": {"w": torch.ones(2)}, "got": {"w": torch.ones(2)}}
    values[side] = {"w": shard}

    with pytest.raises(TypeError) as caught:
        differences(values["expected"], values["got"], **EXACT)

    assert str(caught.value) == (
        "result['w'] is a DTensor: return dtensor.full_tensor() from the function (on every "
        "rank), or its local shard gathered, so that it can be compared after the run"
    )


def test_differences_numpy_arrays_compare_as_tensors_with_each_other_and_with_tensors() -> None:
    array = np.array([1.0, 2.0])
    tensor = torch.tensor([1.0, 2.0], dtype=torch.float64)

    assert differences(array, array.copy(), **EXACT) == []
    assert differences(array, tensor, **EXACT) == []
    assert differences(tensor, array, **EXACT) == []
    assert differences(array, np.array([1.0, 4.0]), **EXACT) == [
        Difference(
            "result",
            VALUE,
            "tensor(shape=(2,), dtype=float64) [1, 2]",
            "tensor(shape=(2,), dtype=float64) [1, 4]",
            max_abs_diff=2.0,
            index=(1,),
            factor=None,
        )
    ]


def test_differences_numpy_bools_compare_as_bools() -> None:
    assert differences([np.True_, np.False_], [np.True_, np.False_], **EXACT) == []
    assert differences(np.True_, True, **EXACT) == []

    found = differences([np.True_], [np.False_], **EXACT)

    assert [(d.path, d.kind) for d in found] == [("result[0]", VALUE)]


def test_differences_strings_none_and_bools_compare_exactly_without_a_gap() -> None:
    assert differences(["a", None, True], ["a", None, True], **EXACT) == []
    assert differences({"opt": "adam", "flag": True}, {"opt": "sgd", "flag": False}, **EXACT) == [
        Difference("result['opt']", VALUE, "'adam'", "'sgd'"),
        Difference("result['flag']", VALUE, "True", "False"),
    ]


def test_differences_string_summary_is_cut_after_sixty_characters() -> None:
    sixty, sixty_one = "a" * 58, "a" * 59  # their reprs: 60 and 61 characters

    (found,) = differences(sixty, sixty_one, **EXACT)

    assert found.expected == repr(sixty)
    assert found.got == "'" + "a" * 56 + "...'"


def test_differences_other_values_compare_with_their_equality() -> None:
    same = Tag("the same")

    assert differences([{1, 2}, same, 1 + 2j], [{1, 2}, same, 1 + 2j], **EXACT) == []
    assert differences([{1}], [{2}], **EXACT) == [Difference("result[0]", VALUE, "{1}", "{2}")]


def test_differences_other_value_summary_is_cut_after_sixty_characters() -> None:
    (found,) = differences(Tag("x" * 60), Tag("y" * 61), **EXACT)

    assert (found.expected, found.got) == ("x" * 60, "y" * 57 + "...")


@pytest.mark.parametrize("kind", [Lazy, Opaque])
def test_differences_value_whose_equality_does_not_answer_cannot_be_compared(kind: type) -> None:
    found = differences({"v": kind("first")}, {"v": kind("second")}, **EXACT)

    assert found == [
        Difference(
            "result['v']",
            STRUCTURE,
            "first",
            "second",
            detail=CANNOT_COMPARE.format(kind.__name__),
        )
    ]


# differences: the factor of a tensor


def test_differences_tensor_factor_fits_a_scale_with_zero_elements() -> None:
    (found,) = differences(torch.tensor([1.0, 0.0]), torch.tensor([2.0, 0.0]), **EXACT)

    assert found.factor == 2.0


def test_differences_tensor_factor_allows_float32_rounding_of_large_values() -> None:
    got = torch.tensor([2000.0, 4000.004])  # twice the expected, rounded

    (found,) = differences(torch.tensor([1000.0, 2000.0]), got, **EXACT)

    assert found.factor == pytest.approx(2.0, rel=1e-5)


def test_differences_tensor_factor_is_none_when_no_scale_explains_the_values() -> None:
    (flipped,) = differences(torch.tensor([1.0, -1.0]), torch.tensor([1.0, 1.0]), **EXACT)

    assert flipped.factor is None


def test_differences_tensor_factor_allows_ten_times_rtol_around_the_scale() -> None:
    ones = torch.ones(2)

    (inside,) = differences(ones, torch.tensor([1.981, 2.019]), rtol=1e-3, atol=0)
    (outside,) = differences(ones, torch.tensor([1.979, 2.021]), rtol=1e-3, atol=0)

    assert inside.factor == pytest.approx(2.0)
    assert outside.factor is None


# name_factor


@pytest.mark.parametrize(
    ("factor", "n", "m", "name"),
    [
        (1 / 16, 4, 1, "1 / the square of the world size 4"),
        (16.0, 4, 1, "the square of the world size 4"),
        (0.5, 4, 2, "the ratio of the world sizes 2/4"),
        (0.25, 4, 2, "1 / the world size 4"),
        (9.0, 6, 2, "the square of the ratio of the world sizes 6/2"),
        (3.0, 6, 2, "the ratio of the world sizes 6/2"),
        (4.003, 4, 1, "the world size 4"),
        (125.125, 125, 1, "the world size 125"),  # exactly 0.1% off: inside
        (125.13, 125, 1, None),
        (-2.0, 2, 1, None),
        (1.0, 4, 2, None),
    ],
)
def test_name_factor_names_each_world_size_ratio_within_a_tenth_of_a_percent(
    factor: float, n: int, m: int, name: str | None
) -> None:
    assert name_factor(factor, n, m) == name


# NotEquivalentError: the message and its fields


def test_error_for_a_factor_equal_to_the_world_size_names_it_and_suggests_a_sum() -> None:
    reference = [{"loss": 1.0, "grads": {"w": torch.tensor([1.0, -2.0])}}]
    result = {"loss": 1.0, "grads": {"w": torch.tensor([2.0, -4.0])}}

    error = _error(reference, [result, result])

    assert str(error).splitlines() == [
        "not equivalent: result['grads']['w'] on rank 0 at world size 2 is 2 times its value "
        "at world size 1 (factor 2, equal to the world size 2)",
        "  world size 1, rank 0: tensor(shape=(2,), dtype=float32) [1, -2]",
        "  world size 2, rank 0: tensor(shape=(2,), dtype=float32) [2, -4]",
        "  largest difference 2 at index [1] (rtol=1e-05, atol=1e-06); the ranks at world "
        "size 2 agree with each other",
        HINT_UP,
    ]
    assert (error.path, error.kind, error.rank, error.reference_rank) == (
        "result['grads']['w']",
        VALUE,
        0,
        0,
    )
    assert (error.world_size, error.reference_world_size) == (2, 1)
    assert (error.factor, error.factor_name, error.max_abs_diff) == (2.0, "the world size 2", 2.0)
    assert (error.rtol, error.atol, error.others, error.replicated_check) == (1e-5, 1e-6, (), False)


def test_error_for_an_unnamed_factor_gives_the_factor_alone_and_the_general_hint() -> None:
    error = _error([{"loss": 1.0}], [{"loss": 1.37}] * 2)

    assert str(error).splitlines() == [
        "not equivalent: result['loss'] on rank 0 at world size 2 is 1.37 times its value at "
        "world size 1",
        "  world size 1, rank 0: 1",
        "  world size 2, rank 0: 1.37",
        "  largest difference 0.37 (rtol=1e-05, atol=1e-06); the ranks at world size 2 agree "
        "with each other",
        HINT_OTHER,
    ]
    assert error.factor_name is None


def test_error_for_the_square_of_the_world_size_suggests_two_sums() -> None:
    error = _error([torch.tensor([1.0, 3.0])], [torch.tensor([4.0, 12.0])] * 2)

    lines = str(error).splitlines()
    assert lines[0] == (
        "not equivalent: result on rank 0 at world size 2 is 4 times its value at world size 1 "
        "(factor 4, equal to the square of the world size 2)"
    )
    assert lines[-1] == HINT_SQUARE


@pytest.mark.parametrize(
    ("world_size", "reference_world_size", "name"),
    [(2, 1, "1 / the world size 2"), (4, 2, "the ratio of the world sizes 2/4")],
)
def test_error_for_a_factor_below_one_suggests_a_mean_where_a_sum_was_meant(
    world_size: int, reference_world_size: int, name: str
) -> None:
    error = _error([{"count": 8.0}] * reference_world_size, [{"count": 4.0}] * world_size)

    lines = str(error).splitlines()
    assert lines[0] == (
        f"not equivalent: result['count'] on rank 0 at world size {world_size} is 0.5 times its "
        f"value at world size {reference_world_size} (factor 0.5, equal to {name})"
    )
    assert lines[1] == f"  world size {reference_world_size}, rank 0: 8"
    assert lines[-1] == HINT_DOWN


def test_error_for_a_value_without_a_factor_says_it_differs_and_not_by_how_much() -> None:
    error = _error([{"opt": "adam"}], [{"opt": "sgd"}] * 2)

    assert str(error).splitlines() == [
        "not equivalent: result['opt'] on rank 0 at world size 2 differs from its value at world "
        "size 1",
        "  world size 1, rank 0: 'adam'",
        "  world size 2, rank 0: 'sgd'",
        "  the values are not equal (rtol=1e-05, atol=1e-06)",
        HINT_OTHER,
    ]
    assert (error.factor, error.max_abs_diff) == (None, None)


def test_error_for_a_factor_of_one_says_the_value_differs() -> None:
    # scattered around the reference: the best scale is 1, which explains nothing.
    error = _error([torch.tensor([1.0, -1.0])], [torch.tensor([1.1, -0.9])] * 2, rtol=0.05, atol=0)

    assert str(error).splitlines()[0] == (
        "not equivalent: result on rank 0 at world size 2 differs from its value at world size 1"
    )


def test_error_for_a_structure_difference_gives_the_detail_and_the_structure_hint() -> None:
    error = _error([{"gathered": [1.0]}], [{"gathered": [1.0, 1.0]}] * 2)

    assert str(error).splitlines() == [
        "not equivalent: result['gathered'] on rank 0 at world size 2 is built differently than "
        "at world size 1",
        "  world size 1, rank 0: list of 1",
        "  world size 2, rank 0: list of 2",
        "  length 1 at world size 1, 2 at world size 2",
        HINT_STRUCTURE,
    ]
    assert (error.kind, error.factor, error.factor_name) == (STRUCTURE, None, None)


def test_error_lists_the_other_differences_with_their_factors() -> None:
    reference = {"a": 1.0, "b": 1.0, "c": [1], "d": "x", "e": 1.0}
    result = {"a": 2.0, "b": 3.0, "c": [1, 2], "d": "y", "e": 0.5}

    error = _error([reference], [result, result])

    assert str(error).splitlines()[4] == (
        "  also differ: result['b'] (factor 3), result['c'] (structure), result['d'], "
        "result['e'] (factor 0.5, equal to 1 / the world size 2)"
    )
    assert [other.path for other in error.others] == [
        "result['b']",
        "result['c']",
        "result['d']",
        "result['e']",
    ]


def test_error_not_replicated_names_both_ranks_without_naming_a_factor() -> None:
    error = _replicated_error([{"x": 1.0, "y": 1.0}, {"x": 2.0, "y": 3.0}])

    assert str(error).splitlines() == [
        "not replicated at world size 2: result['x'] differs between rank 0 and rank 1",
        "  rank 0: 1",
        "  rank 1: 2",
        "  largest difference 1 (rtol=0, atol=0)",
        "  also differ: result['y']",
        HINT_REPLICATED,
    ]
    assert (error.rank, error.reference_rank, error.replicated_check) == (1, 0, True)
    assert (error.world_size, error.reference_world_size) == (2, 2)
    assert (error.factor, error.factor_name) == (2.0, None)
    assert (error.expected, error.got, error.max_abs_diff) == ("1", "2", 1.0)
    assert [other.path for other in error.others] == ["result['y']"]


def test_error_not_replicated_structure_labels_the_ranks() -> None:
    error = _replicated_error([[1.0], [1.0], [1.0, 2.0]])

    assert error.rank == 2
    assert str(error).splitlines()[:4] == [
        "not replicated at world size 3: result differs between rank 0 and rank 2",
        "  rank 0: list of 1",
        "  rank 2: list of 2",
        "  length 1 at rank 0, 2 at rank 2",
    ]


def test_check_replicated_compares_each_rank_with_rank_0_but_not_rank_0_with_itself() -> None:
    assert check_replicated([Opaque("alone")], 1, **EXACT) is None

    error = _replicated_error([Opaque("first"), Opaque("second")])

    assert (error.rank, error.kind, error.expected, error.got) == (1, STRUCTURE, "first", "second")


def test_check_compares_the_reference_ranks_with_each_other_first() -> None:
    error = _error([{"x": 1.0}, {"x": 2.0}], [{"x": 5.0}] * 4)

    assert (error.world_size, error.reference_world_size, error.rank) == (2, 2, 1)
    assert str(error).startswith(
        "not replicated at world size 2: result['x'] differs between rank 0 and rank 1"
    )


def test_check_compares_the_ranks_at_n_with_each_other_before_the_reference() -> None:
    error = _error([{"x": 1.0}], [{"x": 2.0}, {"x": 3.0}])

    assert (error.world_size, error.reference_world_size, error.rank) == (2, 2, 1)
    assert error.factor_name is None


def test_check_passes_equal_results_and_raises_with_the_tolerances_given() -> None:
    assert check([{"x": 1.0}], [{"x": 1.0 + 1e-9}] * 2, **DEFAULT) is None

    error = _error([{"x": 1.0}], [{"x": 1.5}] * 2, rtol=0.25, atol=0.125)

    assert (error.rtol, error.atol) == (0.25, 0.125)
    assert "(rtol=0.25, atol=0.125)" in str(error).splitlines()[3]
