"""--format json-lines, gitlab (Code Quality) and junit."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

import pytest

from ranklint.faces.formatters import format_gitlab, format_json_lines, format_junit
from ranklint.findings import Finding, Severity, TraceStep
from tests.conftest import write

BUGGY = (
    "import torch.distributed as dist\n"
    "dist.init_process_group('gloo')\n"
    "def f(t):\n"
    "    if dist.get_rank() == 0:\n"
    "        dist.all_reduce(t)\n"
)


def _finding(line: int, code: str = "RNK102", message: str = "m", **kw: object) -> Finding:
    return Finding(code, "n", Severity.ERROR, message, "a.py", line, 1, line, 5, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("format_", ["json-lines", "gitlab", "junit"])
def test_cli_new_format_writes_findings_and_exits_1(run_cli, tmp_path: Path, format_: str) -> None:
    write(tmp_path / "a.py", BUGGY)

    result = run_cli("check", str(tmp_path / "a.py"), "--format", format_, "--no-cache")

    assert result.code == 1
    assert "RNK101" in result.out
    assert "RNK102" in result.out
    assert result.err == ""


def test_json_lines_holds_the_json_records_one_per_line(run_cli, tmp_path: Path) -> None:
    write(tmp_path / "a.py", BUGGY)

    lines = run_cli("check", str(tmp_path), "--format", "json-lines", "--no-cache").out
    whole = run_cli("check", str(tmp_path), "--format", "json", "--no-cache").out

    assert [json.loads(line) for line in lines.splitlines()] == json.loads(whole)
    assert format_json_lines([]) == ""


def test_gitlab_fingerprints_ignore_the_line_and_tell_duplicates_apart() -> None:
    first = json.loads(format_gitlab([_finding(3), _finding(9), _finding(9, message="other")]))
    moved = json.loads(format_gitlab([_finding(13), _finding(19), _finding(19, message="other")]))

    assert [r["fingerprint"] for r in first] == [r["fingerprint"] for r in moved]
    assert len({r["fingerprint"] for r in first}) == 3
    assert first[0] == {
        "description": "RNK102 m",
        "check_name": "RNK102",
        "fingerprint": first[0]["fingerprint"],
        "severity": "major",
        "location": {"path": "a.py", "lines": {"begin": 3, "end": 3}},
    }


@pytest.mark.parametrize(
    ("severity", "expected"),
    [(Severity.ERROR, "major"), (Severity.WARNING, "minor"), (Severity.INFO, "info")],
)
def test_gitlab_severity_maps_each_level(severity: Severity, expected: str) -> None:
    finding = Finding("RNK201", "n", severity, "m", "a.py", 1, 1, 1, 2)

    assert json.loads(format_gitlab([finding]))[0]["severity"] == expected


def test_junit_groups_findings_by_file_with_one_failure_each_and_the_trace() -> None:
    trace = (TraceStep("b.py", 4, 2, "barrier"),)
    findings = [_finding(3, trace=trace), _finding(5, "RNK104", "root")]
    other = Finding("RNK101", "n", Severity.ERROR, "import", "c.py", 1, 1, 1, 2)

    root = ElementTree.fromstring(format_junit([*findings, other], 7))

    assert (root.get("tests"), root.get("failures"), root.get("files")) == ("3", "3", "7")
    suites = root.findall("testsuite")
    assert [(s.get("name"), s.get("tests")) for s in suites] == [("a.py", "2"), ("c.py", "1")]
    case = suites[0].find("testcase")
    assert case is not None
    assert case.get("name") == "RNK102 a.py:3:1"
    failure = case.find("failure")
    assert failure is not None
    assert (failure.get("type"), failure.get("message")) == ("RNK102", "m")
    assert failure.text == "a.py:3:1: RNK102 m\n    b.py:4:2: barrier"


def test_junit_without_findings_is_an_empty_passing_report() -> None:
    root = ElementTree.fromstring(format_junit([], 2))

    assert (root.get("tests"), root.get("failures"), root.findall("testsuite")) == ("0", "0", [])
