"""Fixes as text (ranklint.fixing.edits), the codemods fixes are built from, and the
engine's turning of node replacements into edits."""

from __future__ import annotations

import logging
import sys

import libcst as cst
import pytest

from ranklint.findings import Edit, Fix
from ranklint.fixing.edits import Lines, apply_fixes, smallest_edit
from ranklint.fixing.plan import _block_indent, _code, fixes_of
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


def test_smallest_edit_starts_at_the_first_character_when_only_that_one_differs() -> None:
    lines = Lines("abc")

    edit = smallest_edit(lines, 0, 3, "xbc")

    assert edit == Edit(1, 1, 1, 2, "x")


def test_smallest_edit_leaves_out_a_shared_end_of_several_characters() -> None:
    lines = Lines("xab")

    edit = smallest_edit(lines, 0, 3, "yab")

    assert edit == Edit(1, 1, 1, 2, "y")


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


@pytest.mark.parametrize(
    "unfit",
    [
        pytest.param(safe_fix(), id="no-edit"),
        pytest.param(safe_fix(Edit(1, 1, 1, 2, "X")), id="same-edits-as-an-earlier-fix"),
        pytest.param(safe_fix(Edit(7, 1, 7, 1, "x")), id="a-line-the-text-does-not-have"),
        pytest.param(safe_fix(Edit(1, 3, 1, 2, "x")), id="ends-before-it-starts"),
        pytest.param(
            safe_fix(Edit(1, 1, 1, 3, "x"), Edit(1, 2, 1, 2, "y")), id="its-own-edits-overlap"
        ),
    ],
)
def test_apply_fixes_still_applies_the_fixes_after_one_it_skips(unfit: Fix) -> None:
    first = safe_fix(Edit(1, 1, 1, 2, "X"))
    later = safe_fix(Edit(1, 4, 1, 5, "D"))

    fixed, done = apply_fixes("abcd", [first, unfit, later])

    assert fixed == "XbcD"
    assert done == [first, later]


def test_apply_fixes_still_applies_a_fix_after_one_left_for_the_next_round() -> None:
    first = safe_fix(Edit(1, 1, 1, 2, "A"))
    overlapping = safe_fix(Edit(1, 1, 1, 3, "B"))
    later = safe_fix(Edit(1, 4, 1, 5, "D"))

    fixed, done = apply_fixes("abcd", [first, overlapping, later])

    assert fixed == "AbcD"
    assert done == [first, later]


def test_apply_fixes_takes_the_fix_that_starts_first_even_when_another_ends_sooner() -> None:
    wide = safe_fix(Edit(1, 1, 1, 5, "W"))
    inner = safe_fix(Edit(1, 2, 1, 3, "I"))

    fixed, done = apply_fixes("abcdef", [inner, wide])

    assert fixed == "Wef"
    assert done == [wide]


@pytest.mark.parametrize(
    "second",
    [
        pytest.param(safe_fix(Edit(1, 1, 1, 2, "Y")), id="same-span"),
        pytest.param(safe_fix(Edit(1, 1, 1, 3, "Y")), id="same-start-ends-later"),
    ],
)
def test_apply_fixes_of_two_fixes_starting_at_one_place_takes_the_first_given(
    second: Fix,
) -> None:
    first = safe_fix(Edit(1, 1, 1, 2, "X"))

    fixed, done = apply_fixes("abc", [first, second])

    assert fixed == "Xbc"
    assert done == [first]


@pytest.mark.parametrize(
    ("edits", "fixed"),
    [
        pytest.param((Edit(1, 1, 1, 2, "X"), Edit(1, 2, 1, 3, "Y")), "XYc", id="adjacent"),
        pytest.param(
            (Edit(1, 1, 1, 1, "["), Edit(1, 2, 1, 2, ","), Edit(1, 3, 1, 3, "]")),
            "[a,b]c",
            id="three-insertions",
        ),
    ],
)
def test_apply_fixes_applies_a_fix_whose_own_edits_touch_without_overlapping(
    edits: tuple[Edit, ...], fixed: str
) -> None:
    fix = safe_fix(*edits)

    assert apply_fixes("abc", [fix]) == (fixed, [fix])


def test_apply_fixes_skips_a_fix_whose_second_edit_starts_inside_the_first_and_ends_after() -> None:
    fix = safe_fix(Edit(1, 1, 1, 3, "x"), Edit(1, 2, 1, 4, "y"))

    assert apply_fixes("abcd", [fix]) == ("abcd", [])


def test_apply_fixes_breaks_a_tie_of_starts_by_where_the_last_edit_ends() -> None:
    one_edit = safe_fix(Edit(1, 1, 1, 5, "W"))
    # Its first edit ends sooner, but its last one later.
    two_edits = safe_fix(Edit(1, 1, 1, 2, "X"), Edit(1, 6, 1, 7, "Y"))

    fixed, done = apply_fixes("abcdefg", [two_edits, one_edit])

    assert fixed == "Wefg"
    assert done == [one_edit]


# -- codemods ------------------------------------------------------------------


def _call(code: str) -> cst.Call:
    expression = cst.parse_expression(code)
    assert isinstance(expression, cst.Call)
    return expression


def _code_of(node: cst.CSTNode) -> str:
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

    assert _code_of(with_argument(call, keyword_argument("k", cst.Integer("0")))) == after


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
    assert _code_of(fixed) == after


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


def _with_k(call: cst.Call) -> cst.Call:
    return with_argument(call, keyword_argument("k", cst.Integer("0")))


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("f(a,\n  b,\n)", "f(a,\n  b,\n  k=0,\n)"),
        ("f(a,  b,)", "f(a,  b,  k=0,)"),
    ],
)
def test_with_argument_separates_the_new_argument_like_the_last_two_of_two(
    before: str, after: str
) -> None:
    call = cst.parse_expression(before)
    assert isinstance(call, cst.Call)

    assert _code_of(_with_k(call)) == after


@pytest.mark.parametrize("before", ["f(a)", "f(a, b)", "f(a,)", "f(\n    a,\n)"])
def test_with_argument_builds_the_same_tree_as_parsing_its_code(before: str) -> None:
    call = cst.parse_expression(before)
    assert isinstance(call, cst.Call)

    fixed = _with_k(call)

    assert fixed.deep_equals(cst.parse_expression(_code_of(fixed)))


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


def _fixed_by_engine(text: str, new: cst.CSTNode | None = None) -> str | None:
    """``text`` with its first call replaced (by ``new``, or with ``k=0`` added)."""
    module = cst.parse_module(text)
    call = first_call(module)
    replacement = _with_k(call) if new is None else new
    [fix] = fixes_of(module, text, [pending_fix_at(module, call, replacement)])
    return None if fix is None else apply_fixes(text, [fix])[0]


# The call's own lines are indented by its block ("if y:"); the line it starts on is a
# continuation, indented further, by an odd number of spaces more than the block.
_ON_A_CONTINUATION_LINE = (
    "if x:\n    if y:\n        z = (1 +\n             f(\n            a))\n",
    "if x:\n    if y:\n        z = (1 +\n             f(\n            a, k=0))\n",
)
# The call starts its line, two blocks deep; the first line after a line break is
# indented less (by the outer block).
_NESTED = (
    "if x:\n    if y:\n        f(\n            a,\n        )\n",
    "if x:\n    if y:\n        f(\n            a,\n            k=0,\n        )\n",
)


@pytest.mark.parametrize("newline", ["\n", "\r", "\r\n"], ids=["lf", "cr", "crlf"])
@pytest.mark.parametrize(
    ("text", "fixed"), [_ON_A_CONTINUATION_LINE, _NESTED], ids=["continuation", "nested"]
)
def test_fixes_of_finds_the_block_indentation_of_a_multi_line_call_with_any_line_ending(
    text: str, fixed: str, newline: str
) -> None:
    source = text.replace("\n", newline)

    assert _fixed_by_engine(source) == fixed.replace("\n", newline)


def test_fixes_of_indents_a_multi_line_replacement_by_the_block_not_by_the_code_before_it() -> None:
    # The old call's second line is not indented by its block: any indentation fits it.
    text = "if y:\n    z = f(a,\n  b)\n"
    new = cst.parse_expression("g(\n    a,\n)")

    assert _fixed_by_engine(text, new) == "if y:\n    z = g(\n        a,\n    )\n"


@pytest.mark.parametrize("newline", ["\n", "\r"], ids=["lf", "cr"])
def test_block_indent_reads_the_indentation_after_a_line_break_that_starts_the_text(
    newline: str,
) -> None:
    module = cst.parse_module("if x:\n    f(\n        a,\n    )\n".replace("\n", newline))
    call = first_call(module)
    # The call's line follows the line break at offset 0.
    text = "\n    f(\n        a,\n    )".replace("\n", newline)

    assert _block_indent(module, call, text, 5, len(text)) == "    "


def test_fixes_of_without_libcsts_codegen_state_still_fixes_a_one_line_call_in_a_block(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "libcst._nodes.internal", None)

    assert _fixed_by_engine("if y:\n    x = f(a)\n") == "if y:\n    x = f(a, k=0)\n"


def test_code_indents_a_nested_block_by_the_modules_own_indentation() -> None:
    module = cst.parse_module("class C:\n  def f(self):\n    return 1\n")
    [cls] = module.body
    assert isinstance(cls, cst.ClassDef)
    [method] = cls.body.body

    assert _code(module, method, "  ") == "  def f(self):\n    return 1\n"


def test_fixes_of_logs_a_failure_only_for_the_fix_that_failed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    text = "x = f(a)\n"
    module = cst.parse_module(text)
    call = first_call(module)
    invalid = call.deep_clone()
    object.__setattr__(invalid, "args", (object(),))  # generating its code raises
    pending = [
        pending_fix_at(module, call, None),
        pending_fix_at(module, call, invalid),
        pending_fix_at(module, call, _with_k(call)),
    ]
    caplog.set_level(logging.DEBUG, logger="ranklint.fixing.plan")

    fixes = fixes_of(module, text, pending)

    assert fixes[:2] == [None, None]
    assert fixes[2] is not None
    failures = [r.getMessage() for r in caplog.records if r.name == "ranklint.fixing.plan"]
    assert failures == ["RNK103: fix failed"]
