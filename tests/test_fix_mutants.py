"""The edge cases of fixing that the broader fix tests leave open: the smallest edit
of a longer shared end, fixes that do not fit and the ones after them, the
indentation of blocks with any line ending, the rounds of ``fix_text``, and the
files that ``plan_fixes`` and ``write_fixes`` leave alone."""

from __future__ import annotations

import errno
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path

import libcst as cst
import pytest

from ranklint.config import Config
from ranklint.engine.fixing import _block_indent, _code, fixes_of
from ranklint.faces.fixing import FixedSource, FixReport, fix_text, plan_fixes, write_fixes
from ranklint.findings import Applicability, Edit, Finding, Fix, Severity
from ranklint.fixes import Lines, apply_fixes, smallest_edit
from ranklint.rules.codemods import keyword_argument, with_argument
from tests.conftest import write
from tests.fix_cases import finding_with, first_call, pending_fix_at, safe_fix

# -- smallest_edit -------------------------------------------------------------


def test_smallest_edit_starts_at_the_first_character_when_only_that_one_differs() -> None:
    lines = Lines("abc")

    edit = smallest_edit(lines, 0, 3, "xbc")

    assert edit == Edit(1, 1, 1, 2, "x")


def test_smallest_edit_leaves_out_a_shared_end_of_several_characters() -> None:
    lines = Lines("xab")

    edit = smallest_edit(lines, 0, 3, "yab")

    assert edit == Edit(1, 1, 1, 2, "y")


# -- apply_fixes ---------------------------------------------------------------


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


# -- the engine's edits --------------------------------------------------------


def _with_k(call: cst.Call) -> cst.Call:
    return with_argument(call, keyword_argument("k", cst.Integer("0")))


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
    caplog.set_level(logging.DEBUG, logger="ranklint.engine.fixing")

    fixes = fixes_of(module, text, pending)

    assert fixes[:2] == [None, None]
    assert fixes[2] is not None
    failures = [r.getMessage() for r in caplog.records if r.name == "ranklint.engine.fixing"]
    assert failures == ["RNK103: fix failed"]


# -- codemods ------------------------------------------------------------------


def _code_of(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


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


# -- FixedSource.diff ----------------------------------------------------------


def test_diff_keeps_unchanged_lines_as_context() -> None:
    source = FixedSource("p.py", "a\nb\nc\n", "a\nB\nc\n", [])

    assert source.diff() == "--- p.py\n+++ p.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"


def test_diff_ends_every_line_with_a_newline_when_the_text_has_no_final_one() -> None:
    source = FixedSource("p.py", "a\nb", "a\nc", [])

    assert source.diff() == "--- p.py\n+++ p.py\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"


# -- fix_text ------------------------------------------------------------------


def _pairs(text: str) -> list[Finding]:
    """A toy linter of one-line texts: each "aa" is a finding, fixed by making it "b"."""
    return [
        Finding(
            "RNK999",
            "pair",
            Severity.WARNING,
            "pair",
            "t.py",
            1,
            i + 1,
            1,
            i + 3,
            fix=safe_fix(Edit(1, i + 1, 1, i + 3, "b")),
        )
        for i in range(len(text) - 1)
        if text[i : i + 2] == "aa"
    ]


def test_fix_text_fixes_in_later_rounds_what_the_relinted_text_still_has() -> None:
    # The three overlapping pairs of "aaaa": the first is fixed, then the one
    # that remains in "baa".
    fixed, done = fix_text("aaaa", _pairs("aaaa"), _pairs, unsafe=False)

    assert fixed == "bb"
    assert done == [_pairs("aaaa")[0], *_pairs("baa")]


def test_fix_text_does_not_count_a_fix_left_for_a_round_that_no_longer_needs_it() -> None:
    first, overlapping = _pairs("aaa")

    fixed, done = fix_text("aaa", [first, overlapping], _pairs, unsafe=False)

    assert fixed == "ba"
    assert done == [first]


def test_fix_text_with_fixes_that_change_nothing_returns_the_text_and_no_fixed_finding() -> None:
    same = Finding(
        "RNK999",
        "n",
        Severity.WARNING,
        "m",
        "t.py",
        1,
        1,
        1,
        2,
        fix=safe_fix(Edit(1, 1, 1, 2, "x")),
    )

    assert fix_text("x = 1\n", [same], _pairs, unsafe=False) == ("x = 1\n", [])


# -- plan_fixes and write_fixes -------------------------------------------------


_ADD = Edit(1, 8, 1, 8, ", 2")


def _unreadable(folder: Path) -> tuple[Finding, bool]:
    return finding_with(folder / "a.py", safe_fix(_ADD)), True


def _only_unsafe(folder: Path) -> tuple[Finding, bool]:
    path = write(folder / "a.py", "x = f(1)\n")
    return finding_with(path, Fix(Applicability.UNSAFE, "add", (_ADD,))), False


def _no_change(folder: Path) -> tuple[Finding, bool]:
    path = write(folder / "a.py", "x = f(1)\n")
    return finding_with(path, safe_fix(Edit(1, 1, 1, 2, "x"))), False


def _breaks_the_syntax(folder: Path) -> tuple[Finding, bool]:
    path = write(folder / "a.py", "x = f(1)\n")
    return finding_with(path, safe_fix(Edit(1, 9, 1, 9, "(("))), True


# Each makes a.py, a file plan_fixes leaves alone: its finding, and whether it is refused.
_LEFT_ALONE = [_unreadable, _only_unsafe, _no_change, _breaks_the_syntax]


@pytest.mark.parametrize("left_alone", _LEFT_ALONE, ids=lambda make: make.__name__.strip("_"))
def test_plan_fixes_still_plans_the_files_after_one_it_leaves_alone(
    tmp_path: Path, left_alone: Callable[[Path], tuple[Finding, bool]]
) -> None:
    skipped, refused = left_alone(tmp_path)
    good = write(tmp_path / "b.py", "x = f(1)\n")

    report = plan_fixes([skipped, finding_with(good, safe_fix(_ADD))], Config(), unsafe=False)

    assert [(source.path, source.after) for source in report.sources] == [
        (str(good), "x = f(1, 2)\n")
    ]
    assert [path for path, _ in report.refused] == ([skipped.path] if refused else [])


def test_plan_fixes_refuses_an_unreadable_file_with_why(tmp_path: Path) -> None:
    missing = tmp_path / "a.py"

    report = plan_fixes([finding_with(missing, safe_fix(_ADD))], Config(), unsafe=False)

    assert report.sources == []
    [(path, why)] = report.refused
    assert path == str(missing)
    assert why.startswith("cannot read it: ")
    assert os.strerror(errno.ENOENT) in why


def test_plan_fixes_relints_the_fixed_file_and_fixes_what_its_rules_find_there(
    tmp_path: Path,
) -> None:
    # The hand-made fix puts a broadcast on the default group; RNK103 then writes
    # its root out (on the subgroup it offered only an unsafe fix).
    text = (
        "import torch.distributed as dist\n\n\n"
        "def share(objs, tp_group):\n"
        "    dist.broadcast_object_list(objs, group=tp_group)\n"
    )
    path = write(tmp_path / "a.py", text)
    default = finding_with(path, safe_fix(Edit(5, 36, 5, 52, "")), message="hand")

    report = plan_fixes([default], Config(), unsafe=False)

    [source] = report.sources
    assert source.after == text.replace("(objs, group=tp_group)", "(objs, src=0)")
    assert source.fixed[0] == default
    assert [(f.code, f.path) for f in source.fixed[1:]] == [("RNK103", str(path))]


def _planned(folder: Path, name: str) -> tuple[Path, FixReport]:
    path = write(folder / name, "x = f(1)\n")
    return path, plan_fixes([finding_with(path, safe_fix(_ADD))], Config(), unsafe=False)


def test_write_fixes_still_writes_the_files_after_one_changed_on_disk(tmp_path: Path) -> None:
    changed, first = _planned(tmp_path, "a.py")
    kept, second = _planned(tmp_path, "b.py")
    report = FixReport(sources=first.sources + second.sources)
    changed.write_text("y = 2\n")

    write_fixes(report)

    assert changed.read_text() == "y = 2\n"
    assert kept.read_text() == "x = f(1, 2)\n"
    assert [source.path for source in report.sources] == [str(kept)]


def test_write_fixes_refuses_a_file_it_cannot_write_with_why_and_writes_the_others(
    tmp_path: Path,
) -> None:
    deleted, first = _planned(tmp_path, "a.py")
    kept, second = _planned(tmp_path, "b.py")
    report = FixReport(sources=first.sources + second.sources)
    deleted.unlink()

    write_fixes(report)

    assert report.refused == [(str(deleted), f"cannot write it: {os.strerror(errno.ENOENT)}")]
    assert not deleted.exists()
    assert kept.read_text() == "x = f(1, 2)\n"
    assert [source.path for source in report.sources] == [str(kept)]


def test_apply_fixes_breaks_a_tie_of_starts_by_where_the_last_edit_ends() -> None:
    one_edit = safe_fix(Edit(1, 1, 1, 5, "W"))
    # Its first edit ends sooner, but its last one later.
    two_edits = safe_fix(Edit(1, 1, 1, 2, "X"), Edit(1, 6, 1, 7, "Y"))

    fixed, done = apply_fixes("abcdefg", [two_edits, one_edit])

    assert fixed == "Wefg"
    assert done == [one_edit]
