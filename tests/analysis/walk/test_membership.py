"""Groups whose members are written out, and rank tests that split them (RNK102)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ranklint.analysis.walk.membership import (
    GroupTable,
    created_groups,
    names_the_rank,
    splits,
    written_ranks,
)
from ranklint.analysis.walk.names import NameTable
from tests.conftest import codes_by_line

pytestmark = pytest.mark.timeout(30)
SELECT = ("RNK102",)


def _table(module: cst.Module) -> NameTable:
    table = NameTable()
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            small = statement.body[0]
            if isinstance(small, (cst.Import, cst.ImportFrom)):
                table.bind_import_statement(small)
    return table


def _module(body: str) -> cst.Module:
    return cst.parse_module("import torch.distributed as dist\n" + textwrap.dedent(body))


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("g = dist.new_group([2, 3])", {"g": frozenset({2, 3})}),
        ("g = dist.new_group((0, 1))", {"g": frozenset({0, 1})}),
        ("g = dist.new_group(ranks=[1])", {"g": frozenset({1})}),
        ("g = dist.new_group(backend='gloo', ranks=[0, 2])", {"g": frozenset({0, 2})}),
        ("g = dist.new_group(ranks)", {"g": None}),
        ("g = dist.new_group([0, r])", {"g": None}),
        ("g = dist.new_group([])", {"g": None}),
        ("g = dist.new_group()", {"g": None}),
        ("g = make_group([0, 1])", {"g": None}),
        ("g = dist.new_group([0, 1])\ng = dist.new_group([2, 3])", {"g": None}),
        ("g = dist.new_group([0, 1])\ng = None", {"g": None}),
        ("a, b = dist.new_group([0, 1]), None", {}),
        ("def f():\n    g = dist.new_group([0, 1])", {}),
    ],
)
def test_created_groups_maps_each_name_to_the_ranks_written_out(
    body: str, expected: dict[str, frozenset[int] | None]
) -> None:
    module = _module(body)
    assert created_groups(module, _table(module)) == expected


def test_group_table_prefers_the_function_s_own_name_to_the_module_s() -> None:
    module = _module("G = dist.new_group([2, 3])\n")
    table = GroupTable(module, _table(module), module.code)
    name = cst.Name("G")
    assert table.members(name, None) == frozenset({2, 3})
    assert table.members(name, {}) == frozenset({2, 3})
    assert table.members(name, {"G": None}) is None
    assert table.members(name, {"G": frozenset({0})}) == frozenset({0})
    assert table.members(cst.Name("H"), None) is None
    assert table.members(cst.parse_expression("self.G"), None) is None
    assert table.members(None, None) is None


@pytest.mark.parametrize(
    ("test", "members", "expected"),
    [
        (("==", 2), {2, 3}, True),
        (("==", 0), {2, 3}, False),
        (("!=", 3), {2, 3}, True),
        (("<", 3), {2, 3}, True),
        (("<", 2), {2, 3}, False),
        (("<=", 2), {2, 3}, True),
        ((">", 2), {2, 3}, True),
        ((">", 1), {2, 3}, False),
        ((">=", 3), {2, 3}, True),
        ((">=", 2), {2, 3}, False),
        (("==", 2), {2}, False),
        # The rank modulo a number: members of both parities, or of one.
        (("%2==", 0), {2, 3}, True),
        (("%2!=", 0), {2, 3}, True),
        (("%2==", 0), {2, 4}, False),
        (("%3==", 1), {1, 4}, False),
        (("%3==", 1), {1, 5}, True),
        # A number that is not written out splits nothing it can tell.
        (("==", "world_size - 1"), {1, 2}, False),
    ],
)
def test_splits_when_members_disagree_on_the_test(
    test: tuple[str, int | str], members: set[int], expected: bool
) -> None:
    assert splits(test, frozenset(members)) is expected


_SYNC = """
    import torch.distributed as dist

    GROUP_LINE

    def sync(grad):
        LOCAL_LINE
        if TEST:
            dist.all_reduce(grad, group=g)
"""


def _source(test: str, *, local: str = "g = dist.new_group([2, 3])", module: str = "") -> str:
    return (
        _SYNC.replace("GROUP_LINE", module)
        .replace("LOCAL_LINE", local or "pass")
        .replace("TEST", test)
    )


@pytest.mark.parametrize(
    ("test", "reported"),
    [
        ("dist.get_rank() == 2", True),
        ("dist.get_rank() != 3", True),
        ("dist.get_rank() >= 2", False),
        ("dist.get_rank() < 2", False),
        ("dist.get_rank() in (2, 3)", False),
        ("dist.get_rank() == 0", False),
    ],
)
def test_rnk102_on_a_written_out_group_reports_tests_that_split_its_members(
    test: str, reported: bool
) -> None:
    expected = [(8, "RNK102")] if reported else []
    assert codes_by_line(_source(test), select=SELECT) == expected


def test_rnk102_on_a_module_group_reports_a_test_that_splits_its_members() -> None:
    source = _source("dist.get_rank() == 2", local="", module="g = dist.new_group([2, 3])")
    assert codes_by_line(source, select=SELECT) == [(8, "RNK102")]


def test_rnk102_on_a_local_name_that_shadows_a_module_group_does_not_judge_it() -> None:
    source = _source(
        "dist.get_rank() == 2", local="g = pick_group()", module="g = dist.new_group([2, 3])"
    )
    assert codes_by_line(source, select=SELECT) == []


def test_rnk102_on_a_group_of_unknown_members_does_not_judge_it() -> None:
    source = _source("dist.get_rank() == 2", local="g = dist.new_group(ranks)")
    assert codes_by_line(source, select=SELECT) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[0, 1]", frozenset({0, 1})),
        ("(2, 3)", frozenset({2, 3})),
        ("range(4)", frozenset({0, 1, 2, 3})),
        ("list(range(2, 4))", frozenset({2, 3})),
        ("list(range(0, 8, 4))", frozenset({0, 4})),
        ("range(0, 8, 0)", None),
        ("range(0, 1)", frozenset({0})),
        ("range(0, 4, 1, 1)", None),
        ("range(2, n)", None),
        (f"range({1 << 16})", frozenset(range(1 << 16))),
        (f"range({(1 << 16) + 1})", None),
        ("range(n)", None),
        ("range(3, 1)", None),
        ("range(10**9)", None),
        ("range(1 << 20)", None),
        ("list(ranks)", None),
        ("[rank, 1]", None),
        ("[]", None),
    ],
)
def test_written_ranks_reads_literal_lists_and_ranges_of_literal_bounds(
    text: str, expected: frozenset[int] | None
) -> None:
    assert written_ranks(cst.parse_expression(text)) == expected


def test_rnk102_on_a_group_of_a_literal_range_reports_tests_that_split_its_members() -> None:
    source = _source("dist.get_rank() == 2", local="g = dist.new_group(list(range(2, 4)))")

    assert codes_by_line(source, select=SELECT) == [(8, "RNK102")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("dist.get_rank()", True),
        ('int(os.environ["RANK"])', True),
        ('os.environ["RANK"]', True),
        ("rank", True),
        ("self.global_rank", True),
        ("trainer.global_rank", True),
        ("x", False),
        ("me", False),
        ("is_main", False),
        ("self.flag", False),
    ],
)
def test_names_the_rank_reads_the_rank_itself_not_a_value_derived_from_it(
    text: str, expected: bool
) -> None:
    assert names_the_rank(cst.parse_expression(text)) is expected
