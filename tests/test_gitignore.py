"""Folders are walked without the files git ignores (`respect-gitignore`, on by default)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ranklint.config import Config
from ranklint.discovery import discover
from tests.conftest import write


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    (tmp_path / ".git" / "info").mkdir(parents=True)
    write(tmp_path / ".git" / "info" / "exclude", "scratch_*.py\n")
    write(tmp_path / ".gitignore", "build_out/\n*_generated.py\n")
    write(tmp_path / "pkg" / ".gitignore", "!keep_generated.py\nlocal.py\n")
    for name in (
        "pkg/train.py",
        "pkg/model_generated.py",
        "pkg/keep_generated.py",
        "pkg/local.py",
        "pkg/sub/local.py",
        "build_out/copy.py",
        "scratch_1.py",
        "top.py",
    ):
        write(tmp_path / name, "x = 1\n")
    return tmp_path


def _found(paths: list[str], config: Config, **kwargs: bool) -> list[str]:
    files = discover(paths, config, **kwargs).files
    root = Path(config.root)
    return sorted(Path(f).resolve().relative_to(root.resolve()).as_posix() for f in files)


def test_walk_skips_what_git_ignores_with_nested_negation_and_info_exclude(
    repository: Path,
) -> None:
    config = Config(root=repository)

    assert _found([str(repository)], config) == [
        "pkg/keep_generated.py",
        "pkg/train.py",
        "top.py",
    ]


def test_walk_of_a_subfolder_applies_the_ignores_of_the_folders_above(repository: Path) -> None:
    assert _found([str(repository / "pkg")], Config(root=repository)) == [
        "pkg/keep_generated.py",
        "pkg/train.py",
    ]


def test_walk_of_a_folder_git_ignores_named_explicitly_applies_only_its_own_ignores(
    repository: Path,
) -> None:
    write(repository / "build_out" / ".gitignore", "skip_me.py\n")
    write(repository / "build_out" / "skip_me.py", "x = 1\n")
    write(repository / "build_out" / "deep" / "model_generated.py", "x = 1\n")

    assert _found([str(repository / "build_out")], Config(root=repository)) == [
        "build_out/copy.py",
        "build_out/deep/model_generated.py",
    ]
    assert "build_out/copy.py" not in _found([str(repository)], Config(root=repository))


def test_respect_gitignore_false_walks_everything(repository: Path) -> None:
    config = replace(Config(root=repository), respect_gitignore=False)

    assert len(_found([str(repository)], config)) == 8


def test_file_named_explicitly_is_checked_even_when_ignored(repository: Path) -> None:
    named = [str(repository / "pkg" / "local.py")]

    assert _found(named, Config(root=repository)) == ["pkg/local.py"]


def test_outside_a_repository_gitignore_files_do_not_apply(tmp_path: Path) -> None:
    write(tmp_path / ".gitignore", "*.py\n")
    write(tmp_path / "a.py", "x = 1\n")

    assert _found([str(tmp_path)], Config(root=tmp_path)) == ["a.py"]


def test_cli_no_respect_gitignore_checks_ignored_files(run_cli, repository: Path) -> None:
    write(
        repository / "build_out" / "bad.py",
        "import torch.distributed as d\nd.init_process_group()\n",
    )

    default = run_cli("check", str(repository), "--no-cache")
    everything = run_cli("check", str(repository), "--no-cache", "--no-respect-gitignore")

    assert default.code == 0
    assert "3 files checked" in default.err
    assert everything.code == 1
    assert "build_out/bad.py:2:1: RNK101" in everything.out


def test_config_key_respect_gitignore_false_is_read_from_pyproject(
    run_cli, repository: Path
) -> None:
    write(repository / "pyproject.toml", "[tool.ranklint]\nrespect-gitignore = false\n")

    result = run_cli("check", ".", "--no-cache", cwd=repository)

    assert "8 files checked" in result.err
