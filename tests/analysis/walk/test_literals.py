"""Literal values read from the syntax tree: strings, integers and writes to os.environ."""

from __future__ import annotations

import libcst as cst
import pytest

from ranklint.analysis.walk.literals import environ_writes, int_value, string_value
from ranklint.analysis.walk.names import dotted_name


def expression(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ('"abc"', "abc"),
        ("'abc'", "abc"),
        ('""', ""),
        ('"""abc"""', "abc"),
        ("'''a'b'''", "a'b"),
        ('r"abc"', "abc"),
        ('R"abc"', "abc"),
        ('u"abc"', "abc"),
        ('"a\\tb"', "a\tb"),  # an escape: evaluated
        ('r"a\\tb"', "a\\tb"),  # a raw string keeps the backslash
        ('"a" "b"', "ab"),
        ('"a" "b" "c"', "abc"),
        ('"' + "x" * 398 + '"', "x" * 398),  # 400 characters with the quotes: read
        ('"' + "x" * 396 + '\\n"', "x" * 396 + "\n"),  # 400 with an escape: evaluated
    ],
)
def test_string_value_of_a_plain_string_literal_is_its_text(code: str, expected: str) -> None:
    assert string_value(expression(code)) == expected


@pytest.mark.parametrize(
    "code",
    [
        'b"abc"',  # bytes
        'B"abc"',
        'rb"abc"',
        'Rb"a\\tb"',
        'f"abc"',  # formatted: not a literal
        '"a" f"{b}"',  # a concatenation with a formatted part
        'f"{a}" "b"',
        "name",
        "1",
        '"' + "x" * 399 + '"',  # 401 characters with the quotes: too long to read
        '"' + "x" * 397 + '\\n"',  # 401 with an escape: too long to evaluate
    ],
)
def test_string_value_of_anything_but_a_short_plain_string_is_none(code: str) -> None:
    assert string_value(expression(code)) is None


def test_string_value_of_a_string_with_an_invalid_escape_is_none() -> None:
    bad = cst.SimpleString('"\\N{NO SUCH NAME}"')

    assert string_value(bad) is None


@pytest.mark.parametrize(
    ("code", "expected"),
    [("0", 0), ("42", 42), ("1_000", 1000), ("0x10", 16), ("0o10", 8), ("0b11", 3)],
)
def test_int_value_of_an_integer_literal_in_any_base_is_its_value(code: str, expected: int) -> None:
    assert int_value(expression(code)) == expected


@pytest.mark.parametrize("code", ['"1"', "1.0", "x", "-1", "1j"])
def test_int_value_of_anything_but_an_integer_literal_is_none(code: str) -> None:
    assert int_value(expression(code)) is None


def _resolve(node: cst.BaseExpression) -> str | None:
    """Resolves plain dotted names only (``os.environ``, ``os.putenv``)."""
    return dotted_name(node)


def writes(code: str) -> list[tuple[str, str | None]]:
    """(variable, value code) of each os.environ write found in the statement ``code``."""
    statement = cst.parse_statement(code)
    assert isinstance(statement, cst.SimpleStatementLine)
    node = statement.body[0]
    if isinstance(node, cst.Expr):
        node = node.value
    module = cst.Module(body=[])
    return [
        (key, None if value is None else module.code_for_node(value))
        for key, value, _ in environ_writes(node, _resolve)
    ]


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ('os.environ["MASTER_ADDR"] = "10.0.0.1"', [("MASTER_ADDR", '"10.0.0.1"')]),
        ('a = os.environ["X"] = v', [("X", "v")]),
        ('os.environ["X"] = os.environ["Y"] = v', [("X", "v"), ("Y", "v")]),
        ('os.environ.setdefault("X", "1")', [("X", '"1"')]),
        ('os.environ.setdefault("X")', [("X", None)]),
        ('os.putenv("X", v)', [("X", "v")]),
        ('os.environ.update({"A": a, "B": b})', [("A", "a"), ("B", "b")]),
        ("os.environ.update(A=a, B=b)", [("A", "a"), ("B", "b")]),
        ('os.environ.update({"A": a}, B=b)', [("A", "a"), ("B", "b")]),
        ('os.environ.update({"A": a, **rest, key: c})', [("A", "a")]),
    ],
)
def test_environ_writes_finds_every_documented_way_to_set_a_variable(
    code: str, expected: list[tuple[str, str | None]]
) -> None:
    assert writes(code) == expected


@pytest.mark.parametrize(
    "code",
    [
        'x = os.environ["X"]',  # a read
        "os.environ = {}",  # not a subscript
        'environ["X"] = v',  # not os.environ (as resolved)
        "os.environ[key] = v",  # a key that is not a literal
        'os.environ["X", "Y"] = v',  # two subscripts
        'os.environ["X":] = v',  # a slice
        "os.environ.setdefault()",  # no arguments
        "os.environ.setdefault(key, v)",
        'os.environ.get("X", v)',  # a read
        'config.update({"X": v})',  # another object's update
        'os.environ.pop("X")',
        'update({"X": v})',  # not an attribute call
        'x.y["X"] = v',
    ],
)
def test_environ_writes_finds_nothing_in_reads_and_other_objects(code: str) -> None:
    assert writes(code) == []


@pytest.mark.parametrize("code", ["os.environ", 'os.environ["X"]', "print(x)"])
def test_environ_writes_of_an_expression_that_is_no_call_to_a_method_is_empty(code: str) -> None:
    assert list(environ_writes(cst.parse_expression(code), _resolve)) == []


def test_environ_writes_reports_the_whole_statement_or_call() -> None:
    assign = cst.parse_statement('os.environ["X"] = "1"').body[0]  # type: ignore[attr-defined]
    call = cst.parse_expression('os.putenv("X", "1")')

    assert [node for _, _, node in environ_writes(assign, _resolve)] == [assign]
    assert [node for _, _, node in environ_writes(call, _resolve)] == [call]
