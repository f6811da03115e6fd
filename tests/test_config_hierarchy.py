"""Each file uses the nearest configuration above it within one run (like ruff):
a folder's own `ranklint.toml` or `pyproject.toml` with `[tool.ranklint]`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ranklint import Config, lint_paths
from ranklint.api import config_groups
from ranklint.config import load_config
from tests.conftest import write

# One RNK102 (a barrier under a rank test) and one RNK101 (a group at import time).
BUGS = """
import torch.distributed as dist

GROUP = dist.new_group([0, 1])


def step():
    if dist.get_rank() == 0:
        dist.barrier()
"""


@pytest.fixture
def monorepo(tmp_path: Path) -> Path:
    """A root project, and `trainer/` with a configuration of its own."""
    write(tmp_path / "pyproject.toml", "[tool.ranklint]\nignore = ['RNK101']\n")
    write(tmp_path / "root_job.py", BUGS)
    write(tmp_path / "trainer" / "pyproject.toml", "[tool.ranklint]\nignore = ['RNK102']\n")
    write(tmp_path / "trainer" / "job.py", BUGS)
    write(tmp_path / "trainer" / "deep" / "job.py", BUGS)
    return tmp_path


def _codes(output: str) -> list[tuple[str, str]]:
    """(path, code) of each finding of the text output (its head line; the code frame,
    wrapped message lines and trace below it start with spaces or a line number)."""
    heads = re.finditer(r"^(\S+?):\d+:\d+: (RNK\d{3}) ", output, re.MULTILINE)
    return [(head[1], head[2]) for head in heads]


def test_files_below_a_nested_configuration_use_it_and_the_others_the_root_one(
    monorepo: Path, run_cli
) -> None:
    run = run_cli("check", "--no-cache", ".", cwd=monorepo)

    assert _codes(run.out) == [
        ("root_job.py", "RNK102"),
        ("trainer/deep/job.py", "RNK101"),
        ("trainer/job.py", "RNK101"),
    ]
    assert run.code == 1


def test_command_line_selection_applies_on_top_of_every_configuration(
    monorepo: Path, run_cli
) -> None:
    run = run_cli("check", "--no-cache", "--ignore", "RNK101", ".", cwd=monorepo)

    assert _codes(run.out) == [("root_job.py", "RNK102")]


def test_config_option_overrides_every_configuration_file(monorepo: Path, run_cli) -> None:
    only = write(monorepo / "elsewhere" / "ranklint.toml", "select = ['RNK101']\n")

    run = run_cli("check", "--no-cache", "--config", str(only), ".", cwd=monorepo)

    assert _codes(run.out) == [
        ("root_job.py", "RNK101"),
        ("trainer/deep/job.py", "RNK101"),
        ("trainer/job.py", "RNK101"),
    ]


def test_ranklint_toml_is_a_configuration_and_wins_over_the_folders_pyproject(
    monorepo: Path, run_cli
) -> None:
    write(monorepo / "trainer" / "ranklint.toml", "ignore = ['RNK101']\n")

    run = run_cli("check", "--no-cache", ".", cwd=monorepo)

    assert _codes(run.out) == [
        ("root_job.py", "RNK102"),
        ("trainer/deep/job.py", "RNK102"),
        ("trainer/job.py", "RNK102"),
    ]


def test_nested_configuration_extends_the_root_one(monorepo: Path, run_cli) -> None:
    write(
        monorepo / "trainer" / "pyproject.toml",
        "[tool.ranklint]\nextend = '../pyproject.toml'\nextend-select = ['RNK106']\n",
    )
    write(monorepo / "trainer" / "job.py", BUGS + "\n\ndef total(t):\n    dist.all_reduce(t)\n")

    run = run_cli("check", "--no-cache", "trainer/job.py", cwd=monorepo)

    assert _codes(run.out) == [("trainer/job.py", "RNK102"), ("trainer/job.py", "RNK106")]


def test_nested_exclude_patterns_are_relative_to_their_folder_and_agree_with_show_files(
    monorepo: Path, run_cli
) -> None:
    write(
        monorepo / "trainer" / "pyproject.toml",
        "[tool.ranklint]\nignore = ['RNK102']\nextend-exclude = ['deep/']\n",
    )

    run = run_cli("check", "--no-cache", ".", cwd=monorepo)
    shown = run_cli("check", "--show-files", ".", cwd=monorepo)

    assert _codes(run.out) == [("root_job.py", "RNK102"), ("trainer/job.py", "RNK101")]
    assert shown.out.splitlines() == ["root_job.py", "trainer/job.py"]


def test_a_file_named_on_the_command_line_is_checked_even_if_its_configuration_excludes_it(
    monorepo: Path, run_cli
) -> None:
    write(monorepo / "trainer" / "ranklint.toml", "extend-exclude = ['deep/']\n")

    named = run_cli("check", "--no-cache", "trainer/deep/job.py", cwd=monorepo)
    forced = run_cli("check", "--no-cache", "--force-exclude", "trainer/deep/job.py", cwd=monorepo)

    assert [path for path, _ in _codes(named.out)] == ["trainer/deep/job.py"] * 2
    assert forced.out == ""


def test_nested_configuration_applies_without_one_at_the_root(tmp_path: Path, run_cli) -> None:
    write(tmp_path / "job.py", BUGS)
    write(tmp_path / "trainer" / "ranklint.toml", "select = ['RNK101']\n")
    write(tmp_path / "trainer" / "job.py", BUGS)

    run = run_cli("check", "--no-cache", ".", cwd=tmp_path)

    assert _codes(run.out) == [
        ("job.py", "RNK101"),
        ("job.py", "RNK102"),
        ("trainer/job.py", "RNK101"),
    ]


def test_per_file_ignores_of_a_nested_configuration_are_relative_to_its_folder(
    monorepo: Path, run_cli
) -> None:
    write(
        monorepo / "trainer" / "ranklint.toml",
        "per-file-ignores = { 'deep/*' = ['RNK1'] }\n",
    )

    run = run_cli("check", "--no-cache", ".", cwd=monorepo)

    assert [path for path, _ in _codes(run.out)] == ["root_job.py"] + ["trainer/job.py"] * 2


def test_lint_paths_with_a_config_in_code_applies_it_to_every_file(
    monorepo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(monorepo)

    result = lint_paths(["."], Config(select=("RNK101",), root=monorepo))

    assert sorted(f.path for f in result.findings) == [
        "root_job.py",
        "trainer/deep/job.py",
        "trainer/job.py",
    ]


def test_lint_paths_without_a_config_discovers_the_nested_ones(
    monorepo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(monorepo)

    result = lint_paths(["."])

    assert sorted((f.path, f.code) for f in result.findings) == [
        ("root_job.py", "RNK102"),
        ("trainer/deep/job.py", "RNK101"),
        ("trainer/job.py", "RNK101"),
    ]


def test_config_groups_shares_one_config_per_folder_file_and_keeps_the_order(
    monorepo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(monorepo)
    config = load_config(cwd=monorepo)
    files = ["root_job.py", "trainer/job.py", "trainer/deep/job.py"]

    groups = config_groups(files, config)

    assert [files for _, files in groups] == [
        ["root_job.py"],
        ["trainer/job.py", "trainer/deep/job.py"],
    ]
    assert groups[0][0] is config
    assert groups[1][0].source == (monorepo / "trainer" / "pyproject.toml").absolute()


def test_broken_nested_configuration_is_a_clear_error(monorepo: Path, run_cli) -> None:
    write(monorepo / "trainer" / "ranklint.toml", "selekt = ['RNK101']\n")

    run = run_cli("check", "--no-cache", ".", cwd=monorepo)

    assert run.code == 2
    assert run.err == (
        f"ranklint: error: {(monorepo / 'trainer' / 'ranklint.toml').absolute()}: unknown key "
        "'selekt' (did you mean 'select'?)\n"
    )


def test_show_settings_of_a_file_names_the_configuration_that_covers_it(
    monorepo: Path, run_cli
) -> None:
    run = run_cli("check", "--show-settings", "trainer/deep/job.py", cwd=monorepo)

    expected = (monorepo / "trainer" / "pyproject.toml").absolute()
    assert run.out.splitlines()[0] == f"# configuration file: {expected}"
    assert 'ignore = ["RNK102"]' in run.out.splitlines()


def test_call_chains_are_followed_into_a_folder_with_its_own_configuration(
    tmp_path: Path, run_cli
) -> None:
    write(tmp_path / "pyproject.toml", "[tool.ranklint]\nconfidence = 'medium'\n")
    write(
        tmp_path / "train.py",
        "from trainer.ckpt import save\n\n\ndef step(rank):\n    if rank == 0:\n        save()\n",
    )
    write(tmp_path / "trainer" / "ranklint.toml", "ignore = ['RNK102']\n")
    write(tmp_path / "trainer" / "__init__.py", "")
    write(
        tmp_path / "trainer" / "ckpt.py",
        "import torch.distributed as dist\n\n\ndef save():\n    dist.barrier()\n",
    )

    runs = [run_cli("check", "--no-cache", path, cwd=tmp_path) for path in ("train.py", ".")]

    for run in runs:
        assert run.out.startswith("train.py:6:9: RNK102 `save()` (which reaches `barrier`")
        assert "trainer/ckpt.py:5:5" in run.out


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The paths of each folder walk `lint_paths` makes (to discover files)."""
    import ranklint.api as api

    made: list[list[str]] = []
    real = api.discover

    def counting(paths, config, **kwargs):  # type: ignore[no-untyped-def]
        made.append(list(paths))
        return real(paths, config, **kwargs)

    monkeypatch.setattr(api, "discover", counting)
    return made


def test_project_of_a_walked_root_folder_is_walked_again_only_with_several_configurations(
    monorepo: Path, monkeypatch: pytest.MonkeyPatch, walks: list[list[str]]
) -> None:
    monkeypatch.chdir(monorepo)

    lint_paths(["."], whole_project=True)

    # With two configurations, the root's project is walked for files of trainer/
    # to follow calls into: ".", then "." and trainer/ as the projects of each.
    assert walks == [["."], ["."], ["trainer"]]


def test_project_of_a_walked_root_folder_with_one_configuration_is_not_walked_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, walks: list[list[str]]
) -> None:
    write(tmp_path / "pyproject.toml", "[tool.ranklint]\n")
    write(tmp_path / "job.py", BUGS)
    monkeypatch.chdir(tmp_path)

    result = lint_paths(["."], whole_project=True)

    assert walks == [["."]]
    assert [f.code for f in result.findings] == ["RNK101", "RNK102"]
