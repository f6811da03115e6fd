"""`ranklint check --fix / --diff / --unsafe-fixes / --show-fixes / --exit-non-zero-on-fix`
through the real CLI, and the fix field of the machine-readable formats; `FixedSource.diff`,
the rounds of `fix_text`, and the files `plan_fixes` and `write_fixes` leave alone."""

from __future__ import annotations

import errno
import io
import json
import os
import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from ranklint.config import Config
from ranklint.findings import Applicability, Edit, Finding, Fix, Severity
from ranklint.fixing.apply import FixedSource, FixReport, fix_text, plan_fixes, write_fixes
from tests.conftest import write
from tests.fix_cases import finding_with, safe_fix

# RNK103 on the default group (a safe fix) and RNK110 (an unsafe one), in one file.
SOURCE = """
import torch.distributed as dist


def share(objs):
    dist.broadcast_object_list(objs)


def chain(state, cp_group):
    for i in range(dist.get_world_size(cp_group)):
        dist.broadcast(state, src=i, group=cp_group)
"""
SAFE_FIXED = SOURCE.replace("list(objs)", "list(objs, src=0)")
ALL_FIXED = SAFE_FIXED.replace("src=i,", "group_src=i,")


def _source(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write(tmp_path / "pyproject.toml", '[tool.ranklint]\nextend-select = ["RNK110"]  # opt-in\n')
    write(tmp_path / "train.py", SOURCE)
    return tmp_path


def test_fix_applies_safe_fixes_reports_what_remains_and_exits_1(project: Path, run_cli) -> None:
    run = run_cli("check", "--fix", "train.py", cwd=project)

    assert (project / "train.py").read_text() == _source(SAFE_FIXED)
    assert run.code == 1
    assert "ranklint: fixed 1 finding in 1 file\n" in run.err
    assert run.out.count("RNK110") == 1
    assert "RNK103" not in run.out
    assert "[*] 1 more with `--unsafe-fixes`." in run.err


def test_fix_with_unsafe_fixes_applies_both_and_exits_0(project: Path, run_cli) -> None:
    run = run_cli("check", "--fix", "--unsafe-fixes", "train.py", cwd=project)

    assert (project / "train.py").read_text() == _source(ALL_FIXED)
    assert run.code == 0
    assert "ranklint: fixed 2 findings in 1 file\n" in run.err
    assert "All checks passed" in run.err


def test_second_fix_changes_nothing(project: Path, run_cli) -> None:
    run_cli("check", "--fix", "--unsafe-fixes", "train.py", cwd=project)

    run = run_cli("check", "--fix", "--unsafe-fixes", "train.py", cwd=project)

    assert (project / "train.py").read_text() == _source(ALL_FIXED)
    assert "fixed" not in run.err
    assert run.code == 0


def test_exit_non_zero_on_fix_exits_1_even_when_nothing_remains(project: Path, run_cli) -> None:
    run = run_cli(
        "check", "--fix", "--unsafe-fixes", "--exit-non-zero-on-fix", "train.py", cwd=project
    )

    assert run.code == 1
    assert "All checks passed" in run.err


def test_show_fixes_lists_every_fixed_finding_with_the_fix_message(project: Path, run_cli) -> None:
    run = run_cli("check", "--fix", "--show-fixes", "train.py", cwd=project)

    assert (
        "fixed train.py:5:5: RNK103 Write out the implicit root: `src=0` (global rank 0)\n"
        in run.err
    )


def test_diff_prints_a_unified_diff_writes_nothing_and_exits_1(project: Path, run_cli) -> None:
    run = run_cli("check", "--diff", "train.py", cwd=project)

    assert (project / "train.py").read_text() == _source(SOURCE)
    assert run.code == 1
    assert run.out.startswith("--- train.py\n+++ train.py\n@@ ")
    assert "-    dist.broadcast_object_list(objs)\n" in run.out
    assert "+    dist.broadcast_object_list(objs, src=0)\n" in run.out
    assert "group_src" not in run.out
    assert "ranklint: would fix 1 finding in 1 file\n" in run.err


def test_diff_without_anything_to_fix_exits_0(tmp_path: Path, run_cli) -> None:
    write(tmp_path / "clean.py", "import torch.distributed as dist\n")

    run = run_cli("check", "--diff", "clean.py", cwd=tmp_path)

    assert run.code == 0
    assert run.out == ""


def test_text_output_counts_fixable_findings(project: Path, run_cli) -> None:
    run = run_cli("check", "train.py", cwd=project)

    assert "[*] 1 fixable with `ranklint check --fix`; 1 more with `--unsafe-fixes`.\n" in run.err


@pytest.mark.parametrize("flags", [("--fix", "--add-noqa"), ("--diff", "--add-noqa")])
def test_add_noqa_with_fix_or_diff_is_a_usage_error(
    project: Path, run_cli, flags: tuple[str, ...]
) -> None:
    run = run_cli("check", *flags, "train.py", cwd=project)

    assert run.code == 2
    assert "--add-noqa does not combine with --fix or --diff" in run.err
    assert (project / "train.py").read_text() == _source(SOURCE)


def _copy(project: Path, folder: Path) -> Path:
    folder.mkdir()
    for name in ("pyproject.toml", "train.py"):
        (folder / name).write_bytes((project / name).read_bytes())
    return folder


@pytest.mark.parametrize("unsafe", [(), ("--unsafe-fixes",)])
def test_fix_with_diff_writes_nothing_and_its_diff_patches_a_copy_into_what_fix_writes(
    project: Path, tmp_path: Path, run_cli, unsafe: tuple[str, ...]
) -> None:
    before = (project / "train.py").read_bytes()
    patched = _copy(project, tmp_path / "patched")
    fixed = _copy(project, tmp_path / "fixed")

    run = run_cli("check", "--fix", "--diff", *unsafe, "train.py", cwd=project)
    run_cli("check", "--fix", *unsafe, "train.py", cwd=fixed)
    applied = subprocess.run(
        ["patch", "-p0", "--batch"], input=run.out, cwd=patched, capture_output=True, text=True
    )

    assert (project / "train.py").read_bytes() == before
    assert run.code == 1
    assert applied.returncode == 0, applied.stderr
    assert (patched / "train.py").read_bytes() == (fixed / "train.py").read_bytes() != before
    assert not list(project.glob(".train.py.*"))  # no temporary file left either


def test_fix_with_diff_is_the_same_as_diff(project: Path, run_cli) -> None:
    both = run_cli("check", "--fix", "--diff", "train.py", cwd=project)
    diff_only = run_cli("check", "--diff", "train.py", cwd=project)

    assert (both.code, both.out, both.err) == (diff_only.code, diff_only.out, diff_only.err)
    assert "ranklint: would fix 1 finding in 1 file\n" in both.err


def test_fix_with_diff_and_nothing_to_fix_prints_nothing_and_exits_0(
    tmp_path: Path, run_cli
) -> None:
    write(tmp_path / "clean.py", "import torch.distributed as dist\n")

    run = run_cli("check", "--fix", "--diff", "clean.py", cwd=tmp_path)

    assert (run.code, run.out) == (0, "")
    assert (tmp_path / "clean.py").read_text() == "import torch.distributed as dist\n"


def test_fix_with_diff_of_a_file_without_a_final_newline_patches_it_exactly(
    tmp_path: Path, run_cli
) -> None:
    text = _source(SOURCE).replace("\n", "\r\n").rstrip("\r\n")
    (tmp_path / "train.py").write_bytes(text.encode())
    patched = tmp_path / "patched"
    patched.mkdir()
    (patched / "train.py").write_bytes(text.encode())

    unsafe = ("--unsafe-fixes", "--extend-select", "RNK110")  # RNK110's fix: the last line
    run = run_cli("check", "--fix", "--diff", *unsafe, "train.py", cwd=tmp_path)
    applied = subprocess.run(
        ["patch", "-p0", "--batch"], input=run.out, cwd=patched, capture_output=True, text=True
    )
    run_cli("check", "--fix", *unsafe, "train.py", cwd=tmp_path)

    assert "\\ No newline at end of file\n" in run.out
    assert applied.returncode == 0, applied.stderr
    assert (patched / "train.py").read_bytes() == (tmp_path / "train.py").read_bytes()
    assert (tmp_path / "train.py").read_bytes() != text.encode()


def test_fix_keeps_crlf_line_endings_and_the_bom(tmp_path: Path, run_cli) -> None:
    text = _source(SOURCE).replace("\n", "\r\n")
    (tmp_path / "train.py").write_bytes(b"\xef\xbb\xbf" + text.encode())

    run_cli("check", "--fix", "train.py", cwd=tmp_path)

    expected = _source(SAFE_FIXED).replace("\n", "\r\n")
    assert (tmp_path / "train.py").read_bytes() == b"\xef\xbb\xbf" + expected.encode()


def test_fix_keeps_a_declared_legacy_encoding(tmp_path: Path, run_cli) -> None:
    text = "# -*- coding: latin-1 -*-\n# café\n" + _source(SOURCE)
    (tmp_path / "train.py").write_bytes(text.encode("latin-1"))

    run_cli("check", "--fix", "train.py", cwd=tmp_path)

    expected = "# -*- coding: latin-1 -*-\n# café\n" + _source(SAFE_FIXED)
    assert (tmp_path / "train.py").read_bytes() == expected.encode("latin-1")


def test_fix_of_stdin_prints_the_fixed_source_and_the_rest_on_stderr(
    run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(_source(SOURCE).encode()))
    monkeypatch.setattr("sys.stdin", stdin)

    run = run_cli(
        "check", "--fix", "--extend-select", "RNK110", "-", "--stdin-filename", "train.py"
    )

    assert run.out == _source(SAFE_FIXED)
    assert "train.py:10:35: RNK110" in run.err
    assert run.code == 1


def test_diff_of_stdin_prints_the_diff(run_cli, monkeypatch: pytest.MonkeyPatch) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(_source(SOURCE).encode()))
    monkeypatch.setattr("sys.stdin", stdin)

    run = run_cli(
        "check",
        "--diff",
        "--unsafe-fixes",
        "--extend-select",
        "RNK110",
        "-",
        "--stdin-filename",
        "train.py",
    )

    assert "+        dist.broadcast(state, group_src=i, group=cp_group)\n" in run.out
    assert run.code == 1


def test_json_output_carries_the_fix_edits(project: Path, run_cli) -> None:
    run = run_cli("check", "--format", "json", "train.py", cwd=project)

    records = {record["code"]: record for record in json.loads(run.out)}
    assert records["RNK103"]["fix"] == {
        "applicability": "safe",
        "message": "Write out the implicit root: `src=0` (global rank 0)",
        "edits": [
            {
                "content": ", src=0",
                "location": {"row": 5, "column": 36},
                "end_location": {"row": 5, "column": 36},
            }
        ],
    }
    assert records["RNK110"]["fix"]["applicability"] == "unsafe"


def test_sarif_output_carries_the_fix_as_a_replacement(project: Path, run_cli) -> None:
    run = run_cli("check", "--format", "sarif", "train.py", cwd=project)

    results = json.loads(run.out)["runs"][0]["results"]
    fixes = next(r["fixes"] for r in results if r["ruleId"] == "RNK103")
    assert fixes == [
        {
            "description": {
                "text": "Write out the implicit root: `src=0` (global rank 0) (safe fix)"
            },
            "artifactChanges": [
                {
                    "artifactLocation": {"uri": "train.py"},
                    "replacements": [
                        {
                            "deletedRegion": {
                                "startLine": 5,
                                "startColumn": 36,
                                "endLine": 5,
                                "endColumn": 36,
                            },
                            "insertedContent": {"text": ", src=0"},
                        }
                    ],
                }
            ],
        }
    ]


def test_a_fix_that_would_break_the_syntax_is_refused_and_the_file_kept(tmp_path: Path) -> None:
    path = write(tmp_path / "a.py", "x = f(1)\n")
    broken = Fix(Applicability.SAFE, "bad", (Edit(1, 9, 1, 9, "(("),))

    report = plan_fixes([finding_with(path, broken)], Config(), unsafe=False)

    assert report.sources == []
    assert report.refused[0][0] == str(path)
    assert "would not parse" in report.refused[0][1]


def test_a_file_changed_on_disk_since_it_was_read_is_not_written(tmp_path: Path) -> None:
    path = write(tmp_path / "a.py", "x = f(1)\n")
    fix = Fix(Applicability.SAFE, "add", (Edit(1, 8, 1, 8, ", 2"),))
    report = plan_fixes([finding_with(path, fix)], Config(), unsafe=False)
    path.write_text("y = 2\n")

    write_fixes(report)

    assert path.read_text() == "y = 2\n"
    assert report.sources == []
    assert report.refused == [(str(path), "it changed on disk since it was checked")]


def test_an_unsafe_fix_is_planned_only_with_unsafe(tmp_path: Path) -> None:
    path = write(tmp_path / "a.py", "x = f(1)\n")
    fix = Fix(Applicability.UNSAFE, "add", (Edit(1, 8, 1, 8, ", 2"),))

    without = plan_fixes([finding_with(path, fix)], Config(), unsafe=False)
    with_unsafe = plan_fixes([finding_with(path, fix)], Config(), unsafe=True)

    assert without.sources == []
    assert [source.after for source in with_unsafe.sources] == ["x = f(1, 2)\n"]


# -- FixedSource.diff ----------------------------------------------------------


def test_diff_keeps_unchanged_lines_as_context() -> None:
    source = FixedSource("p.py", "a\nb\nc\n", "a\nB\nc\n", [])

    assert source.diff() == "--- p.py\n+++ p.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"


def test_diff_marks_a_last_line_without_a_newline_as_patch_expects() -> None:
    source = FixedSource("p.py", "a\nb", "a\nc", [])

    assert source.diff() == (
        "--- p.py\n+++ p.py\n@@ -1,2 +1,2 @@\n a\n"
        "-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"
    )


def test_diff_splits_lines_at_newlines_only_not_at_form_feeds() -> None:
    source = FixedSource("p.py", "a\x0c\nb\n", "a\x0c\nc\n", [])

    assert source.diff() == "--- p.py\n+++ p.py\n@@ -1,2 +1,2 @@\n a\x0c\n-b\n+c\n"


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
