"""--show-files, --show-settings, --verbose, `ranklint clean` and stale cache folders."""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path

import pytest

from ranklint.cache import STALE_AFTER_S, prune_settings_folders
from tests.conftest import write


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
    values = dict(line.split(" = ", 1) for line in lines if not line.startswith("#"))
    assert result.code == 0
    assert lines[0] == f"# configuration file: {project / 'pyproject.toml'}"
    assert f"# project root of pkg: {project}" in lines
    assert json.loads(values["extend-select"]) == ["RNK2"]
    assert json.loads(values["respect-gitignore"]) is True
    assert any(line.startswith("# command line:") and "RNK201" in line for line in lines)


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
