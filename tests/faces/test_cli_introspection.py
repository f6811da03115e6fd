"""--show-files, --show-settings, --verbose, `ranklint clean` and stale cache folders."""

from __future__ import annotations

import logging
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from ranklint.cache import STALE_AFTER_S, prune_settings_folders
from ranklint.config import Config, declared_options, load_config
from tests.conftest import write

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write(tmp_path / "pyproject.toml", "[tool.ranklint]\nextend-select = ['RNK2']\n")
    write(tmp_path / "pkg" / "train.py", "x = 1\n")
    write(tmp_path / "pkg" / "notes.txt", "not python\n")
    return tmp_path


def test_show_files_lists_what_would_be_checked_and_exits_0(run_cli, project: Path) -> None:
    result = run_cli("check", "--show-files", cwd=project)

    assert result.code == 0
    assert result.out.splitlines() == [os.path.join("pkg", "train.py")]


def test_show_files_with_a_missing_path_exits_2(run_cli, project: Path) -> None:
    result = run_cli("check", "--show-files", "nope", cwd=project)

    assert result.code == 2
    assert "nope: no such file or directory" in result.err


def test_show_settings_prints_the_file_the_root_and_every_option(run_cli, project: Path) -> None:
    result = run_cli("check", "--show-settings", "--ignore", "RNK201", "pkg", cwd=project)

    lines = result.out.splitlines()
    table = tomllib.loads(result.out)["tool"]["ranklint"]
    assert result.code == 0
    assert lines[0] == f"# configuration file: {project / 'pyproject.toml'}"
    assert f"# project root of pkg: {project}" in lines
    assert "# command line: --ignore RNK201" in lines
    assert set(table) == {declared.key for declared in declared_options()}
    # The command line's --ignore after the file's extend-select: the codes in effect.
    assert "RNK202" in table["select"]
    assert "RNK201" not in table["select"]
    assert (table["extend-select"], table["ignore"]) == ([], [])
    assert table["respect-gitignore"] is True


def test_show_settings_is_toml_without_internal_reprs_or_nulls(run_cli, project: Path) -> None:
    result = run_cli(
        "check", "--show-settings", "--select", "RNK1", "--confidence", "low", "pkg", cwd=project
    )

    table = tomllib.loads(result.out)["tool"]["ranklint"]
    assert "SelectionLayer" not in result.out
    assert "null" not in result.out
    assert "None" not in result.out
    assert table["confidence"] == "low"
    assert table["select"] == [code for code in table["select"] if code.startswith("RNK1")]


def test_show_settings_without_a_select_leaves_it_out_and_names_the_default_set(
    run_cli, project: Path
) -> None:
    result = run_cli("check", "--show-settings", "pkg", cwd=project)

    table = tomllib.loads(result.out)["tool"]["ranklint"]
    assert "select" not in table
    assert table["extend-select"] == ["RNK2"]
    assert "# select: unset (the default set: RNK001, RNK101," in result.out


def _printed_back(run_cli, project: Path, *flags: str) -> tuple[Config, Config]:
    """The settings in effect, and those of the printed settings read back as a file
    in the same folder."""
    printed = run_cli("check", "--show-settings", *flags, "pkg", cwd=project).out
    (project / "printed.toml").write_text(printed, encoding="utf-8")
    original = load_config(cwd=project / "pkg")
    if "--ignore" in flags or "--extend-select" in flags:
        original = original.with_overrides(
            ignore=flags[flags.index("--ignore") + 1].split(","),
            extend_select=flags[flags.index("--extend-select") + 1].split(","),
        )
    if "--confidence" in flags:
        original = replace(original, confidence_override=flags[flags.index("--confidence") + 1])
    if "--no-respect-gitignore" in flags:
        original = replace(original, respect_gitignore=False)
    return original, load_config(project / "printed.toml")


def _settings(config: Config) -> dict[str, object]:
    """Every option's effect: the selection as codes, the confidence as reported."""
    values = {d.key: getattr(config, d.key.replace("-", "_")) for d in declared_options()}
    for key in ("select", "extend-select", "ignore", "confidence"):
        del values[key]
    values["per-file-ignores"] = dict(values["per-file-ignores"])  # type: ignore[call-overload]
    return {
        **values,
        "codes": config.enabled_codes(),
        "confidence": config.reported_confidence(),
        "root": config.root,
    }


def test_show_settings_read_back_as_a_config_file_gives_the_same_settings(
    run_cli, project: Path
) -> None:
    write(
        project / "pyproject.toml",
        """
        [tool.ranklint]
        select = ["RNK1", "RNK2"]
        ignore = ["RNK106"]
        per-file-ignores = { "tests/**" = ["RNK101"], 'odd "name"\\.py' = ["RNK3"] }
        extend-exclude = ["données/", "a b/"]
        allow-periodic-sync = false
        confidence = "medium"
        """,
    )

    original, back = _printed_back(run_cli, project)

    assert back.select == original.select == ("RNK1", "RNK2")
    assert back.per_file_ignores == original.per_file_ignores
    assert _settings(back) == _settings(original)


def test_show_settings_with_command_line_options_reads_back_to_the_same_effect(
    run_cli, project: Path
) -> None:
    flags = ("--extend-select", "RNK6", "--ignore", "RNK201,RNK602", "--confidence", "low")

    original, back = _printed_back(run_cli, project, *flags, "--no-respect-gitignore")

    assert "RNK601" in back.enabled_codes()
    assert "RNK201" not in back.enabled_codes()
    assert back.respect_gitignore is False
    assert _settings(back) == _settings(original)


def test_verbose_logs_configuration_root_and_cache(run_cli, project: Path, caplog) -> None:
    with caplog.at_level(logging.DEBUG, logger="ranklint.faces.cli"):
        run_cli("check", "-v", "pkg", "--cache-dir", str(project / "c"), cwd=project)

    messages = [r.getMessage() for r in caplog.records if r.name == "ranklint.faces.cli"]
    assert f"configuration: {project / 'pyproject.toml'}" in messages
    assert f"project root: {project}" in messages
    assert f"cache: {project / 'c'}" in messages


def test_clean_removes_the_projects_cache(run_cli, project: Path, monkeypatch) -> None:
    monkeypatch.delenv("RANKLINT_CACHE_DIR", raising=False)
    run_cli("check", "pkg", cwd=project)
    assert (project / ".ranklint_cache").is_dir()

    result = run_cli("clean", cwd=project)
    again = run_cli("clean", cwd=project)

    assert result.code == 0
    assert not (project / ".ranklint_cache").exists()
    assert again.out == f"no cache at {project / '.ranklint_cache'}\n"


def test_clean_refuses_a_folder_ranklint_did_not_make(run_cli, tmp_path: Path) -> None:
    precious = write(tmp_path / "data" / "weights.bin", "keep me")

    result = run_cli("clean", "--cache-dir", str(tmp_path / "data"))

    assert result.code == 2
    assert "is not a ranklint cache" in result.err
    assert precious.exists()


def test_new_settings_folder_prunes_old_format_and_unused_ones(run_cli, project: Path) -> None:
    cache = project / "c"
    run_cli("check", "pkg", "--cache-dir", str(cache), cwd=project)
    (current,) = [p for p in cache.iterdir() if p.is_dir()]
    old_format = cache / "1-abc"
    unused = cache / f"{current.name.partition('-')[0]}-0123"
    recent = cache / f"{current.name.partition('-')[0]}-4567"
    for folder in (old_format, unused, recent):
        folder.mkdir()
    past = time.time() - STALE_AFTER_S - 60
    os.utime(unused, (past, past))

    run_cli("check", "pkg", "--cache-dir", str(cache), "--select", "RNK101", cwd=project)

    names = {p.name for p in cache.iterdir() if p.is_dir()}
    assert current.name in names
    assert recent.name in names
    assert old_format.name not in names
    assert unused.name not in names
    assert len(names) == 3


def test_prune_leaves_a_folder_that_is_not_a_ranklint_cache(tmp_path: Path) -> None:
    (tmp_path / "1-abc").mkdir()

    assert prune_settings_folders(tmp_path, tmp_path / "4-x") == []
    assert (tmp_path / "1-abc").is_dir()
