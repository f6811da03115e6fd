"""A value given under a rank test and, alike, under its opposite reaches every rank (RNK102)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ranklint.analysis.walk.flags import side_of
from tests.conftest import codes_by_line

pytestmark = pytest.mark.timeout(30)
SELECT = ("RNK102",)

# composer's `maybe_create_object_store_from_uri`: rank 0 builds the store,
# broadcasts the path, then the other ranks build theirs.
_OPEN_STORE = textwrap.dedent(
    """
    import torch.distributed as dist


    def open_store(path):
        store = None
        if dist.get_rank() == 0:
            store = Store(path)
        dist.barrier()
        if dist.get_rank() != 0:
            store = Store(path)
        if store is not None:
            dist.barrier()
"""
)


def _barrier_line(source: str) -> int:
    """The line of the barrier under `if store is not None:` (the snippet's lines)."""
    lines = source.lstrip("\n").splitlines()
    return lines.index("    if store is not None:") + 2


_SECOND = "    if dist.get_rank() != 0:\n        store = Store(path)\n"


@pytest.mark.parametrize(
    "test",
    ["dist.get_rank() != 0", "not dist.get_rank() == 0", "not (dist.get_rank() == 0)"],
)
def test_rnk102_on_a_value_assigned_alike_under_opposite_tests_is_silent(test: str) -> None:
    source = _OPEN_STORE.replace("dist.get_rank() != 0", test)
    assert codes_by_line(source, select=SELECT) == []


def test_rnk102_on_a_flag_and_its_negation_assigning_alike_is_silent() -> None:
    source = (
        _OPEN_STORE.replace("def open_store(path):", "def open_store(path, is_main):")
        .replace("dist.get_rank() == 0", "is_main")
        .replace("dist.get_rank() != 0", "not is_main")
    )
    assert codes_by_line(source, select=SELECT) == []


@pytest.mark.parametrize(
    ("change", "new"),
    [
        # Different values: the name says which side a rank took.
        (_SECOND, _SECOND.replace("Store(path)", "Other(path)")),
        # Reassigned between the tests: rank 0 ends with None.
        ("    dist.barrier()\n    if", "    store = None\n    if"),
        # The same test twice: the other ranks never assign it.
        ("dist.get_rank() != 0", "dist.get_rank() == 0"),
        # Assigned under another test in between.
        ("    dist.barrier()\n    if", "    if flag:\n        store = Z()\n    if"),
        # The opposite assignment is itself conditional.
        (_SECOND, _SECOND.replace("        store", "        if flag:\n            store")),
        # Assigned otherwise under a test of something else (`not flag`).
        ("    dist.barrier()\n    if", "    if not flag:\n        store = Z()\n    if"),
        # A loop, not an `if`: it may not run at all.
        ("    if dist.get_rank() != 0:", "    while dist.get_rank() != 0:"),
    ],
    ids=[
        "different-values",
        "reset",
        "same-test",
        "other-test",
        "nested",
        "negated-other-test",
        "loop",
    ],
)
def test_rnk102_on_a_value_that_only_some_ranks_hold_reports_the_collective(
    change: str, new: str
) -> None:
    source = _OPEN_STORE.replace(change, new, 1)
    assert new in source
    assert codes_by_line(source, select=SELECT) == [(_barrier_line(source), "RNK102")]


def test_rnk102_on_a_rank_valued_value_assigned_alike_under_opposite_tests_reports_it() -> None:
    # Every rank holds a value, but each its own: it depends on the rank.
    source = _OPEN_STORE.replace("Store(path)", "str(dist.get_rank())")
    assert source.count("str(dist.get_rank())") == 2
    assert codes_by_line(source, select=SELECT) == [(_barrier_line(source), "RNK102")]


def test_rnk102_on_a_global_assigned_alike_under_opposite_tests_is_silent() -> None:
    source = textwrap.dedent(
        """
        import torch.distributed as dist

        STORE = None


        def open_store(path):
            global STORE
            if dist.get_rank() == 0:
                STORE = Store(path)
            dist.barrier()
            if dist.get_rank() != 0:
                STORE = Store(path)
            if STORE is not None:
                dist.barrier()
        """
    )
    assert codes_by_line(source, select=SELECT) == []


def test_rnk102_on_opposite_tests_in_different_blocks_reports_the_collective() -> None:
    # Rank 0 assigns only where `a` holds, the others only where `b` holds.
    source = textwrap.dedent(
        """
        import torch.distributed as dist


        def open_store(path, a, b):
            store = None
            if a:
                if dist.get_rank() == 0:
                    store = Store(path)
            if b:
                if dist.get_rank() != 0:
                    store = Store(path)
            if store is not None:
                dist.barrier()
        """
    )
    assert codes_by_line(source, select=SELECT) == [(_barrier_line(source), "RNK102")]


def test_rnk102_when_the_first_test_has_an_else_arm_reports_the_collective() -> None:
    source = _OPEN_STORE.replace(
        "        store = Store(path)\n    dist.barrier()",
        "        store = Store(path)\n    else:\n        kind = 1\n    dist.barrier()",
    )
    assert "else:" in source
    assert codes_by_line(source, select=SELECT) == [(_barrier_line(source), "RNK102")]


def _side(text: str) -> tuple[str, bool]:
    return side_of(cst.parse_expression(text))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("flag", ("flag", False)),
        ("not flag", ("flag", True)),
        ("rank == 0", ("rank == 0", False)),
        ("rank != 0", ("rank == 0", True)),
        ("not rank != 0", ("rank == 0", False)),
        ("x is not None", ("x is None", True)),
    ],
)
def test_side_of_names_the_shared_key_and_whether_the_test_is_its_opposite(
    text: str, expected: tuple[str, bool]
) -> None:
    assert _side(text) == expected


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("rank == 0", "rank != 0"),
        ("x is None", "x is not None"),
        ("k in keys", "k not in keys"),
        ("flag", "not flag"),
        ("rank == 0", "not rank == 0"),
        ("not not flag", "not flag"),
        ("rank  ==  0", "rank != 0"),
    ],
)
def test_side_of_a_test_and_its_opposite_shares_the_key_on_opposite_sides(
    first: str, second: str
) -> None:
    (key_a, negated_a), (key_b, negated_b) = _side(first), _side(second)
    assert key_a == key_b
    assert negated_a != negated_b


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("rank == 0", "rank == 1"),
        ("rank == 0", "rank != 1"),
        ("rank == 0", "rank > 0"),
        ("rank < 1", "rank >= 1"),
        ("a == b == c", "not a == b == c"),
    ],
)
def test_side_of_tests_it_does_not_pair_differs_or_stays_on_one_side(
    first: str, second: str
) -> None:
    (key_a, negated_a), (key_b, negated_b) = _side(first), _side(second)
    if first.count("==") == 2:
        # A chained comparison is keyed by its text: only `not` flips it.
        assert (key_a, negated_a) == (key_b, not negated_b)
    else:
        assert key_a != key_b or negated_a == negated_b
