"""`ranklint check --fix / --diff / --unsafe-fixes / --show-fixes / --exit-non-zero-on-fix`
through the real CLI, and the fix field of the machine-readable formats."""

from __future__ import annotations

import io
import json
import textwrap
from pathlib import Path

import pytest

from ranklint.config import Config
from ranklint.faces.fixing import plan_fixes, write_fixes
from ranklint.findings import Applicability, Edit, Fix
from tests.conftest import write
from tests.fix_cases import finding_with

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


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--fix", "--diff"), "--diff prints the fixes instead of writing them"),
        (("--fix", "--add-noqa"), "--add-noqa does not combine with --fix or --diff"),
    ],
)
def test_conflicting_fix_options_are_a_usage_error(
    project: Path, run_cli, flags: tuple[str, ...], message: str
) -> None:
    run = run_cli("check", *flags, "train.py", cwd=project)

    assert run.code == 2
    assert message in run.err
    assert (project / "train.py").read_text() == _source(SOURCE)


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
