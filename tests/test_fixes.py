"""Fixes as text (ranklint.fixes), the codemods fixes are built from, and the
engine's turning of node replacements into edits."""

from __future__ import annotations

import libcst as cst
import pytest

from ranklint.engine.fixing import fixes_of
from ranklint.findings import Edit, Fix
from ranklint.fixes import Lines, apply_fixes, smallest_edit
from ranklint.rules import PendingFinding, rule_by_code
from ranklint.rules.codemods import argument_holding, as_keyword, keyword_argument, with_argument
from tests.fix_cases import first_call, pending_fix_at, safe_fix

# -- Lines ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line", "col", "offset"),
    [
        ("ab\ncd", 1, 1, 0),
        ("ab\ncd", 1, 3, 2),
        ("ab\ncd", 2, 1, 3),
        ("ab\r\ncd", 2, 2, 5),
        ("ab\rcd", 2, 1, 3),
        ("ab\ncd", 2, 3, 5),
    ],
)
def test_lines_offset_and_position_are_inverse(text: str, line: int, col: int, offset: int) -> None:
    lines = Lines(text)

    assert lines.offset(line, col) == offset
    assert lines.position(offset) == (line, col)


@pytest.mark.parametrize(("line", "col"), [(0, 1), (3, 1), (1, 0), (1, 5)])
def test_lines_offset_outside_the_text_raises(line: int, col: int) -> None:
    with pytest.raises(ValueError, match=r"(line|column) \d+ is not in"):
        Lines("ab\ncd").offset(line, col)


# -- smallest_edit -------------------------------------------------------------


def test_smallest_edit_leaves_out_the_shared_start_and_end() -> None:
    lines = Lines("x = f(a)\n")

    edit = smallest_edit(lines, 4, 8, "f(a, b=1)")

    assert edit == Edit(1, 8, 1, 8, ", b=1")


def test_smallest_edit_of_a_deletion_spans_what_goes() -> None:
    lines = Lines("x = f(a, b)\n")

    assert smallest_edit(lines, 4, 11, "f(a)") == Edit(1, 8, 1, 11, "")


def test_smallest_edit_of_an_unchanged_text_is_none() -> None:
    assert smallest_edit(Lines("f(a)"), 0, 4, "f(a)") is None


def test_smallest_edit_does_not_share_a_character_twice() -> None:
    # "aa" -> "aaa": prefix and suffix must not both claim the middle "a".
    lines = Lines("aa")

    edit = smallest_edit(lines, 0, 2, "aaa")

    assert edit is not None
    assert apply_fixes("aa", [safe_fix(edit)])[0] == "aaa"


def test_smallest_edit_across_lines_gives_line_and_column_of_each_end() -> None:
    text = "f(\n    a,\n)\n"

    edit = smallest_edit(Lines(text), 0, 11, "f(\n    a,\n    b,\n)")

    assert edit == Edit(3, 1, 3, 1, "    b,\n")


# -- apply_fixes ---------------------------------------------------------------


def test_apply_fixes_applies_non_overlapping_fixes_in_order() -> None:
    text = "ab\ncd\n"
    first = safe_fix(Edit(1, 1, 1, 2, "A"))
    second = safe_fix(Edit(2, 2, 2, 3, "D"))

    fixed, done = apply_fixes(text, [second, first])

    assert fixed == "Ab\ncD\n"
    assert done == [first, second]


def test_apply_fixes_leaves_an_overlapping_or_touching_fix_for_the_next_round() -> None:
    first = safe_fix(Edit(1, 1, 1, 3, "X"))
    overlapping = safe_fix(Edit(1, 2, 1, 4, "Y"))
    touching = safe_fix(Edit(1, 3, 1, 3, "Z"))

    fixed, done = apply_fixes("abcd", [first, overlapping, touching])

    assert fixed == "Xcd"
    assert done == [first]


def test_apply_fixes_applies_identical_fixes_once() -> None:
    one = safe_fix(Edit(1, 2, 1, 2, "+"), message="one")
    same = safe_fix(Edit(1, 2, 1, 2, "+"), message="two")

    fixed, done = apply_fixes("ab", [one, same])

    assert fixed == "a+b"
    assert done == [one]


def test_apply_fixes_applies_all_edits_of_one_fix() -> None:
    fix = safe_fix(Edit(1, 1, 1, 1, "("), Edit(1, 3, 1, 3, ")"))

    assert apply_fixes("ab", [fix]) == ("(ab)", [fix])


@pytest.mark.parametrize(
    "fix",
    [
        safe_fix(Edit(5, 1, 5, 1, "x")),  # a line the text does not have
        safe_fix(Edit(1, 3, 1, 2, "x")),  # ends before it starts
        safe_fix(Edit(1, 1, 1, 3, "x"), Edit(1, 2, 1, 2, "y")),  # its own edits overlap
        safe_fix(),  # no edit
    ],
)
def test_apply_fixes_skips_a_fix_that_does_not_fit_the_text(fix: Fix) -> None:
    assert apply_fixes("abc\n", [fix]) == ("abc\n", [])


# -- codemods ------------------------------------------------------------------


def _call(code: str) -> cst.Call:
    expression = cst.parse_expression(code)
    assert isinstance(expression, cst.Call)
    return expression


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("f()", "f(k=0)"),
        ("f(a)", "f(a, k=0)"),
        ("f(a )", "f(a, k=0 )"),
        ("f(a, b=1)", "f(a, b=1, k=0)"),
        ("f(a,)", "f(a, k=0,)"),
        ("f(\n    a,\n    b,\n)", "f(\n    a,\n    b,\n    k=0,\n)"),
        ("f(\n    a,\n)", "f(\n    a,\n    k=0,\n)"),
        ("f(a,  # why\n  b)", "f(a,  # why\n  b, k=0)"),
    ],
)
def test_with_argument_adds_a_keyword_after_the_last_argument_keeping_the_layout(
    before: str, after: str
) -> None:
    call = _call(before)

    assert _code(with_argument(call, keyword_argument("k", cst.Integer("0")))) == after


@pytest.mark.parametrize(
    ("before", "index", "after"),
    [
        ("f(t, src=i, group=g)", 1, "f(t, group_src=i, group=g)"),
        ("f(t, i, group=g)", 1, "f(t, group_src=i, group=g)"),
        ("f(t, i)", 1, "f(t, group_src=i)"),
    ],
)
def test_as_keyword_renames_a_keyword_or_names_the_last_positional(
    before: str, index: int, after: str
) -> None:
    call = _call(before)

    fixed = as_keyword(call, call.args[index], "group_src")

    assert fixed is not None
    assert _code(fixed) == after


@pytest.mark.parametrize(("before", "index"), [("f(t, i, g)", 1), ("f(t, *a)", 1), ("f(t)", 5)])
def test_as_keyword_refuses_a_positional_followed_by_another_or_a_star(
    before: str, index: int
) -> None:
    call = _call(before)
    arg = call.args[index] if index < len(call.args) else cst.Arg(cst.Name("x"))

    assert as_keyword(call, arg, "group_src") is None


def test_argument_holding_finds_the_argument_of_a_value_node() -> None:
    call = _call("f(a, k=b)")

    assert argument_holding(call, call.args[1].value) is call.args[1]
    assert argument_holding(call, cst.Name("b")) is None


# -- the engine's edits --------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "fixed"),
    [
        ("x = (f(a))\n", "x = (f(a, k=0))\n"),
        (
            "def g():\n    return f(\n        a,\n    )\n",
            "def g():\n    return f(\n        a,\n        k=0,\n    )\n",
        ),
        (
            "if y:\n    z = (1 +\n         f(a,\n  b))\n",
            "if y:\n    z = (1 +\n         f(a,\n  b, k=0))\n",
        ),
    ],
)
def test_fixes_of_turns_a_node_replacement_into_the_smallest_edit(text: str, fixed: str) -> None:
    module = cst.parse_module(text)
    call = first_call(module)
    pending = pending_fix_at(
        module, call, with_argument(call, keyword_argument("k", cst.Integer("0")))
    )

    [fix] = fixes_of(module, text, [pending])

    assert fix is not None
    assert fix.message == "fix it"
    assert len(fix.edits) == 1
    assert apply_fixes(text, [fix])[0] == fixed


def test_fixes_of_drops_a_fix_whose_node_text_is_not_where_positions_put_it() -> None:
    text = "x = f(a)\n"
    module = cst.parse_module(text)
    call = first_call(module)
    pending = pending_fix_at(module, call, call.with_changes(args=()))

    [fix] = fixes_of(module, "x = g(a)\n", [pending])

    assert fix is None


def test_fixes_of_gives_none_for_findings_without_a_fix_or_without_a_change() -> None:
    text = "x = f(a)\n"
    module = cst.parse_module(text)
    call = first_call(module)
    rule = rule_by_code("RNK103")
    assert rule is not None
    plain = PendingFinding(rule, call, "m", None, module.body[0])

    assert fixes_of(module, text, [plain]) == [None]
    assert fixes_of(module, text, [pending_fix_at(module, call, call)]) == [None]


def test_fixes_of_drops_a_fix_whose_code_cannot_be_generated_and_keeps_the_others() -> None:
    text = "x = f(a)\ny = g(b)\n"
    module = cst.parse_module(text)
    call = first_call(module)
    # An invalid replacement (set past libcst's validation): generating its code raises.
    invalid = call.deep_clone()
    object.__setattr__(invalid, "args", (object(),))
    broken = pending_fix_at(module, call, invalid)
    good = pending_fix_at(
        module, call, with_argument(call, keyword_argument("k", cst.Integer("0")))
    )

    fixes = fixes_of(module, text, [broken, good])

    assert fixes[0] is None
    assert fixes[1] is not None
