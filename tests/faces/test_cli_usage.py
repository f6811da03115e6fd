"""CLI behaviour from the adoption issue: abbreviations, missing paths, empty runs,
--output-file, --statistics, the rule listing commands and the project root."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ranklint.api import project_root
from ranklint.config import load_config
from tests.conftest import write

BUGGY = "import torch.distributed as dist\ndist.init_process_group('gloo')\n"


def test_abbreviated_option_is_a_usage_error_not_another_option(run_cli, tmp_path: Path) -> None:
    write(tmp_path / "a.py", BUGGY)

    result = run_cli("check", "--exit", str(tmp_path))

    assert result.code == 2
    assert "unrecognized arguments: --exit" in result.err


def test_missing_path_exits_2_without_claiming_all_checks_passed(run_cli, tmp_path: Path) -> None:
    result = run_cli("check", str(tmp_path / "nope.py"))

    assert result.code == 2
    assert "nope.py: no such file or directory" in result.err
    assert "All checks passed" not in result.err
    assert "the run was incomplete" in result.err


def test_folder_without_python_files_warns_and_exits_0(run_cli, tmp_path: Path) -> None:
    write(tmp_path / "notes.txt", "not python\n")

    result = run_cli("check", str(tmp_path))

    assert result.code == 0
    assert f"warning: no Python files to check in {tmp_path}" in result.err


def test_output_file_receives_the_findings_and_stdout_stays_empty(run_cli, tmp_path: Path) -> None:
    write(tmp_path / "a.py", BUGGY)
    target = tmp_path / "out" / "findings.json"
    target.parent.mkdir()
    target.write_text("old content", encoding="utf-8")

    result = run_cli("check", str(tmp_path / "a.py"), "--format", "json", "-o", str(target))

    assert result.code == 1
    assert result.out == ""
    assert [f["code"] for f in json.loads(target.read_text(encoding="utf-8"))] == ["RNK101"]
    assert sorted(p.name for p in target.parent.iterdir()) == ["findings.json"]


def test_output_file_in_a_missing_folder_is_an_error_and_writes_nothing(
    run_cli, tmp_path: Path
) -> None:
    write(tmp_path / "a.py", BUGGY)

    result = run_cli("check", str(tmp_path / "a.py"), "-o", str(tmp_path / "no" / "f.txt"))

    assert result.code == 2
    assert "cannot write" in result.err
    assert not (tmp_path / "no").exists()


@pytest.mark.parametrize("format_", ["json", "sarif", "github"])
def test_statistics_with_a_machine_format_is_a_usage_error(
    run_cli, tmp_path: Path, format_: str
) -> None:
    write(tmp_path / "a.py", BUGGY)

    result = run_cli("check", str(tmp_path), "--statistics", "--format", format_)

    assert result.code == 2
    assert f"does not combine with --format {format_}" in result.err
    assert result.out == ""


def test_rules_json_lists_every_rule_with_its_default(run_cli) -> None:
    result = run_cli("rules", "--format", "json")

    records = json.loads(result.out)
    by_code = {record["code"]: record for record in records}
    assert result.code == 0
    assert by_code["RNK101"]["name"] == "import-time-process-group"
    assert by_code["RNK101"]["default"] is True
    assert set(records[0]) == {"code", "name", "severity", "default", "summary"}


def test_rule_by_kebab_case_name_prints_the_same_page_as_by_code(run_cli) -> None:
    by_name = run_cli("rule", "import-time-process-group")
    by_code = run_cli("rule", "rnk101")

    assert by_name.code == 0
    assert by_name.out == by_code.out
    assert by_name.out.startswith("# RNK101 import-time-process-group")


def test_rule_all_prints_every_page_and_rule_without_argument_is_an_error(run_cli) -> None:
    everything = run_cli("rule", "--all")
    nothing = run_cli("rule")
    both = run_cli("rule", "RNK101", "--all")

    assert everything.code == 0
    assert "# RNK101 " in everything.out
    assert "# RNK604 " in everything.out
    assert nothing.code == both.code == 2
    assert "give one rule code or name, or --all" in nothing.err


def test_top_level_help_lists_the_check_options(run_cli) -> None:
    result = run_cli("--help")

    assert result.code == 0
    assert "options of `ranklint check`:" in result.out
    assert "--select" in result.out
    assert "--output-file" in result.out


def test_project_root_ignores_the_folder_of_a_config_given_on_the_command_line(
    tmp_path: Path,
) -> None:
    config_file = write(tmp_path / "home" / "ranklint.toml", "extend-select = ['RNK2']\n")
    write(tmp_path / "home" / "unrelated" / "big.py", "x = 1\n")
    project = tmp_path / "home" / "proj"
    write(project / "pyproject.toml", "[project]\nname = 'proj'\n")
    trainer = write(project / "train.py", BUGGY)

    root = project_root([str(trainer)], load_config(config_file))

    assert root == project


def test_project_root_is_a_discovered_config_folder(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.ranklint]\nextend-select = ['RNK2']\n")
    trainer = write(tmp_path / "pkg" / "sub" / "train.py", BUGGY)

    config = load_config(cwd=tmp_path / "pkg")

    assert config.discovered
    assert project_root([str(trainer)], config) == tmp_path


def test_cli_with_outside_config_indexes_only_the_project(run_cli, tmp_path: Path) -> None:
    config_file = write(tmp_path / "home" / "ranklint.toml", "select = ['RNK102']\n")
    # A helper outside the project that, if indexed, would make the call divergent.
    write(
        tmp_path / "home" / "helpers.py",
        "import torch.distributed as d\ndef sync():\n    d.barrier()\n",
    )
    project = tmp_path / "home" / "proj"
    write(project / "pyproject.toml", "[project]\nname = 'proj'\n")
    write(
        project / "train.py",
        "from helpers import sync\ndef step(rank):\n    if rank == 0:\n        sync()\n",
    )

    result = run_cli("check", str(project / "train.py"), "--config", str(config_file), "--no-cache")

    assert result.code == 0, result.out
    assert not (tmp_path / "home" / ".ranklint_cache").exists()


def test_output_file_keeps_an_existing_files_mode_and_a_new_one_gets_the_umasks(
    run_cli, tmp_path: Path
) -> None:
    import os

    write(tmp_path / "a.py", BUGGY)
    kept = write(tmp_path / "kept.txt", "old\n")
    kept.chmod(0o640)
    umask = os.umask(0)
    os.umask(umask)

    run_cli("check", str(tmp_path / "a.py"), "-o", str(kept))
    run_cli("check", str(tmp_path / "a.py"), "-o", str(tmp_path / "new.txt"))

    assert kept.stat().st_mode & 0o777 == 0o640
    assert (tmp_path / "new.txt").stat().st_mode & 0o777 == 0o666 & ~umask
