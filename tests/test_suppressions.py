"""Suppression comments, the same in every face."""

from __future__ import annotations

import pytest

from ranklint.suppressions import parse_suppressions
from tests.conftest import codes_by_line

IMPORT = "import torch.distributed as dist\n"


@pytest.mark.parametrize(
    "comment",
    [
        "# noqa",
        "# noqa: RNK101",
        "# noqa:RNK101",
        "# NOQA: RNK101",
        "# noqa: E501, RNK101",
        "# noqa: RNK101,RNK301",
        "# ranklint: ignore[RNK101]",
        "# ranklint: ignore[RNK301, RNK101]",
        "# ranklint: ignore",
        "# some note  # noqa: RNK101",
        "# noqa: rnk101",
        "# ranklint: ignore[rnk101]",
        "# Ranklint: Ignore[RNK101]",
        "# noqa: RNK1",
        "# noqa: RNK10",
        "# noqa: rnk1",
        "# ranklint: ignore[RNK1]",
    ],
)
def test_suppression_comment_on_the_reported_line_hides_the_finding(comment: str) -> None:
    source = f"{IMPORT}dist.init_process_group('gloo')  {comment}\n"

    assert codes_by_line(source) == []


@pytest.mark.parametrize(
    "comment",
    [
        "# noqa: RNK301",
        "# ranklint: ignore[RNK301]",
        "# noqa: RNK2",
        "# noqa: RNK1011",
        "# ranklint: ignore[E501]",
    ],
)
def test_suppression_for_another_code_keeps_the_finding(comment: str) -> None:
    source = f"{IMPORT}dist.init_process_group('gloo')  {comment}\n"

    assert codes_by_line(source) == [(2, "RNK101")]


def test_noqa_inside_a_string_is_not_a_suppression() -> None:
    source = f"{IMPORT}dist.init_process_group('# noqa')\n"

    assert codes_by_line(source) == [(2, "RNK101")]


def test_noqa_on_another_line_does_not_suppress() -> None:
    source = f"{IMPORT}# noqa\ndist.init_process_group('gloo')\n"

    assert codes_by_line(source) == [(3, "RNK101")]


@pytest.mark.parametrize("where", ["first", "last"])
def test_suppression_on_first_or_last_line_of_multiline_statement_applies(where: str) -> None:
    first = "  # noqa: RNK101" if where == "first" else ""
    last = "  # noqa: RNK101" if where == "last" else ""
    source = f"{IMPORT}GROUP = dist.new_group({first}\n    ranks=[0, 1],\n){last}\n"

    assert codes_by_line(source) == []


def test_suppression_on_middle_line_of_multiline_statement_does_not_apply() -> None:
    source = f"{IMPORT}GROUP = dist.new_group(\n    ranks=[0, 1],  # noqa: RNK101\n)\n"

    assert codes_by_line(source) == [(2, "RNK101")]


def test_suppression_on_last_line_of_enclosing_statement_applies_to_nested_call() -> None:
    source = f"{IMPORT}GROUPS = wrap(\n    dist.new_group([0, 1]),\n    other,\n)  # noqa: RNK101\n"

    assert codes_by_line(source) == []


def test_skip_file_comment_hides_every_finding() -> None:
    source = f"# ranklint: skip-file\n{IMPORT}from os import *; sep\ndist.init_process_group()\n"

    assert codes_by_line(source) == []


def test_file_with_comments_that_are_not_suppressions_reports_normally() -> None:
    source = f"# ranklint is great\n{IMPORT}dist.init_process_group()  # noqa-like text\n"

    assert codes_by_line(source) == [(3, "RNK101")]


def test_noqa_elsewhere_in_the_file_does_not_skip_the_whole_file() -> None:
    source = f"{IMPORT}x = 1  # noqa\ndist.init_process_group()\n"

    assert codes_by_line(source) == [(3, "RNK101")]
    assert parse_suppressions(source).skip_file is False


@pytest.mark.parametrize(
    ("comment", "expected"),
    [
        ("# noqa: RNK101  # ranklint: ignore[RNK102]", frozenset({"RNK101", "RNK102"})),
        ("# ranklint: ignore[RNK102]  # noqa: RNK101", frozenset({"RNK101", "RNK102"})),
        ("# noqa  # ranklint: ignore[RNK102]", None),
        ("# noqa: RNK102  # ranklint: ignore", None),
    ],
)
def test_two_suppressions_in_one_comment_combine_their_codes(
    comment: str, expected: frozenset[str] | None
) -> None:
    suppressions = parse_suppressions(f"x = 1\ny = 2  {comment}\n")

    assert suppressions.by_line == {2: expected}
    assert suppressions.suppresses("RNK102", [2])
    assert suppressions.suppresses("RNK101", [2])
    assert not suppressions.suppresses("RNK101", [1])


def test_comments_are_still_found_when_the_tokenizer_rejects_the_source() -> None:
    # An unterminated triple-quoted string: tokenize raises, lines are scanned instead.
    source = 'a = "#"\nb = 1  # noqa: RNK101  # ranklint: ignore[RNK102]\nc = 2\nd = """\n'

    suppressions = parse_suppressions(source)

    assert suppressions.by_line == {2: frozenset({"RNK101", "RNK102"})}
    assert not suppressions.skip_file


@pytest.mark.parametrize("newline", ["\r", "\r\n"], ids=["cr", "crlf"])
def test_suppression_after_lines_ended_by_carriage_returns_applies_to_its_own_line(
    newline: str,
) -> None:
    # A lone `\r` ends a line for the parser; the comment's line must agree.
    source = f"# note{newline}x = 0\n{IMPORT}GROUP = dist.new_group(\n    [0, 1],\n)  # noqa\n"

    assert codes_by_line(source) == []


def test_noqa_after_a_carriage_return_does_not_suppress_the_line_before() -> None:
    source = f"{IMPORT}dist.init_process_group('gloo')\r# noqa\n"

    assert codes_by_line(source) == [(2, "RNK101")]
