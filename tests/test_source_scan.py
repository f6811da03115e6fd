"""When CPython's own parser checks a file before libcst: only where a cheap scan
finds nesting that may be past CPython's limits, and after libcst fails (issue 17)."""

from __future__ import annotations

import pytest

from ranklint import lint_source
from ranklint import source as source_module
from ranklint.source import SourceError, may_pass_nesting_limits, parse_source

IMPORT = "import torch.distributed as dist\n"


def nested_brackets(depth: int) -> str:
    return "x = " + "(" * depth + "1" + ")" * depth + "\n"


def broken_chain(terms: int) -> str:
    """``x = (a +`` / ``a +`` / ... ``a)``: one expression written over many lines."""
    return "x = (" + " +\n".join(["a"] * terms) + ")\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (nested_brackets(99), False),
        (nested_brackets(100), True),
        ("x = '" + "(" * 100 + "'\n", False),  # unbalanced: never paired
        ("x = ['" + "(" * 100 + "', '" + ")" * 100 + "']\n", True),  # in strings, still counted
        ("x = [" + "[" * 99 + "]" * 99 + "]\n", True),  # every kind of bracket
        ("x = {" + "{" * 98 + "}" * 98 + "}\n", False),
        ("x = '" + "a" * 1994 + "'\n", False),  # a line of 2,000 characters
        ("x = '" + "a" * 1995 + "'\n", True),
        ("\n".join(["y = 1"] * 1000), False),  # short lines only, however many
        (broken_chain(1000), False),  # 999 breaks at an operator
        (broken_chain(1001), True),
        ("x = (" + " \\\n- ".join(["a"] * 1001) + ")\n", True),  # operator first, after `\`
        ("x = (" + " |\n".join(["a"] * 1001) + ")\n", True),
        ("x = (" + "\n% ".join(["a"] * 1001) + ")\n", True),
        ("ok = (" + " or\n".join(["a"] * 2000) + ")\n", False),  # flat in CPython
    ],
)
def test_nesting_scan_says_yes_exactly_past_its_thresholds(text: str, expected: bool) -> None:
    assert may_pass_nesting_limits(text) is expected


def test_ordinary_code_is_parsed_without_cpythons_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(text: str) -> None:
        raise AssertionError("CPython's parser ran")

    monkeypatch.setattr(source_module, "_cpython_check", fail)

    module = parse_source(IMPORT + "x = f(g(1), [2, 3])\n")

    assert module.code == IMPORT + "x = f(g(1), [2, 3])\n"


def test_chain_over_many_lines_past_cpythons_limit_is_rejected_before_libcst() -> None:
    with pytest.raises(SourceError, match="nesting too deep") as caught:
        parse_source(broken_chain(4000))

    assert (caught.value.line, caught.value.col) == (1, 1)


def test_brackets_deeper_than_the_scan_but_within_cpythons_limit_are_linted() -> None:
    source = IMPORT + "x = " + "(" * 150 + "dist.new_group()" + ")" * 150 + "\n"

    result = lint_source(source, "pkg/mesh.py")

    assert [(f.code, f.line) for f in result.findings] == [("RNK101", 2)]


def test_brackets_past_cpythons_limit_are_reported_with_its_message() -> None:
    result = lint_source(nested_brackets(250), "pkg/deep.py")

    assert [(f.code, f.line) for f in result.findings] == [("RNK001", 1)]
    assert "too many nested parentheses" in result.findings[0].message


def test_syntax_error_found_by_libcst_gets_cpythons_message_and_position() -> None:
    result = lint_source("x = 1\ndef f(:\n    pass\n", "pkg/bad.py")

    assert [(f.code, f.line, f.col) for f in result.findings] == [("RNK001", 2, 7)]
    assert "invalid syntax" in result.findings[0].message


def test_indentation_past_the_limits_gets_cpythons_message() -> None:
    source = "".join("    " * level + "if x:\n" for level in range(120)) + "    " * 120 + "pass\n"

    result = lint_source(source, "pkg/indent.py")

    assert [f.code for f in result.findings] == ["RNK001"]
    assert "too many levels of indentation" in result.findings[0].message


def test_code_that_only_cpython_rejects_is_linted_when_the_scan_sent_it_to_cpython_first() -> None:
    # A comment line long enough for the scan; `except A, e:` is PEP 758 syntax,
    # which libcst parses and CPython 3.11 rejects with a message that is no
    # nesting limit: libcst's tree is used, as without the scan.
    source = (
        "# " + "x" * 2100 + "\n" + IMPORT + "try:\n    pass\nexcept Exception, e:\n    pass\n"
        "dist.new_group()\n"
    )

    result = lint_source(source, "pkg/legacy.py")

    assert may_pass_nesting_limits(source)
    assert [(f.code, f.line) for f in result.findings] == [("RNK101", 7)]


def test_undecodable_byte_after_a_leading_newline_is_reported_at_its_own_column() -> None:
    result = lint_source(b"\n\xff = 1\n", "pkg/bad.py")

    assert [(f.code, f.line, f.col) for f in result.findings] == [("RNK001", 2, 1)]
