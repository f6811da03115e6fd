"""The library entry points: lint_source, lint_paths and project_root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ranklint import Config
from ranklint.api import lint_paths, lint_source, project_root
from tests.conftest import write

_HELPER = "import torch.distributed as dist\n\n\ndef save():\n    dist.barrier()\n"
_CALLER = (
    "from utils import save\nimport os\n\n"
    "def step():\n    if os.environ['RANK'] == '0':\n        save()\n"
)
_LOCAL = (
    "import os\nimport torch.distributed as dist\n\ndef save():\n    dist.barrier()\n\n\n"
    "def step():\n    if os.environ['RANK'] == '0':\n        save()\n"
)


def test_lint_source_without_a_path_reports_at_string_with_the_default_rules() -> None:
    result = lint_source("from os import *; sep\n")

    assert [(f.path, f.line, f.code) for f in result.findings] == [("<string>", 1, "RNK301")]
    assert result.files_checked == 1


def test_lint_source_of_bytes_decodes_them_per_their_coding_line() -> None:
    text = "# -*- coding: latin-1 -*-\nname = 'caf\xe9'\nfrom os import *; sep\n"
    source = text.encode("latin-1")

    result = lint_source(source, Path("pkg/mod.py"))

    assert [(f.path, f.line, f.code) for f in result.findings] == [("pkg/mod.py", 3, "RNK301")]


def test_lint_source_runs_the_project_phase_on_the_one_file() -> None:
    result = lint_source(_LOCAL, "train.py", Config(select=("RNK102",)))

    assert [(f.path, f.line, f.code) for f in result.findings] == [("train.py", 10, "RNK102")]
    trace = [(step.path, step.line) for step in result.findings[0].trace]
    assert trace == [("train.py", 10), ("train.py", 5)]


def test_lint_source_with_a_config_uses_its_selection() -> None:
    result = lint_source("from os import *; sep\n", "a.py", Config(select=("RNK1",)))

    assert result.findings == []


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    write(tmp_path / "pyproject.toml", "[tool.other]\n")
    write(tmp_path / "utils.py", _HELPER)
    write(tmp_path / "train.py", _CALLER)
    write(tmp_path / "skipped" / "bad.py", "from os import *; sep\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_lint_paths_of_one_file_follows_calls_into_the_rest_of_the_project_when_asked(
    project: Path,
) -> None:
    config = Config(select=("RNK102",))

    alone = lint_paths(["train.py"], config, jobs=1)
    whole = lint_paths(["train.py"], config, jobs=1, whole_project=True)

    assert alone.findings == []
    assert [(f.path, f.line) for f in whole.findings] == [("train.py", 6)]
    trace = [(step.path, step.line) for step in whole.findings[0].trace]
    assert trace == [("train.py", 6), ("utils.py", 5)]
    assert whole.files_checked == 1  # the other files are read, not reported


def test_lint_paths_reports_only_the_given_files_of_a_whole_project_when_asked(
    project: Path,
) -> None:
    result = lint_paths(["utils.py"], Config(), jobs=1, whole_project=True, only_given_files=True)

    assert result.findings == []
    assert result.files_checked == 1


def test_lint_paths_of_a_helper_reports_its_callers_findings_cold(project: Path) -> None:
    result = lint_paths(["utils.py"], Config(select=("RNK102",)), jobs=1, whole_project=True)

    assert [(f.path, f.line) for f in result.findings] == [("train.py", 6)]
    assert result.files_checked == 1


def test_lint_paths_spells_paths_outside_the_working_folder_absolutely(
    project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    os.chdir(elsewhere)

    result = lint_paths([project / "train.py"], Config(select=("RNK102",)), whole_project=True)

    (finding,) = result.findings
    assert finding.path == str(project / "train.py")
    assert [step.path for step in finding.trace] == [
        str(project / "train.py"),
        str(project / "utils.py"),
    ]


def test_lint_paths_with_force_exclude_skips_excluded_files_named_directly(
    project: Path,
) -> None:
    config = Config(exclude=("skipped",))

    named = lint_paths(["skipped/bad.py"], config, jobs=1)
    forced = lint_paths(["skipped/bad.py"], config, jobs=1, force_exclude=True)

    assert [f.code for f in named.findings] == ["RNK301"]
    assert (forced.findings, forced.files_checked) == ([], 0)


def test_lint_paths_with_a_cache_dir_stores_results_there(project: Path) -> None:
    cache = project / "my-cache"

    first = lint_paths(["."], Config(), jobs=1, cache_dir=cache)
    second = lint_paths(["."], Config(), jobs=1, cache_dir=cache)

    assert first.findings == second.findings != []
    assert any(path.is_file() for path in cache.rglob("*") if path.parent != cache)


def test_lint_paths_with_missing_ok_lists_missing_paths_and_checks_the_rest(
    project: Path,
) -> None:
    result = lint_paths(["nope.py", "skipped/bad.py"], Config(), jobs=1, missing_ok=True)

    assert result.missing == ["nope.py"]
    assert result.files_checked == 1


def test_lint_paths_missing_path_raises_naming_every_missing_one(project: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"no such file or directory: nope\.py, gone/"):
        lint_paths(["nope.py", "skipped/bad.py", "gone/"], Config(), jobs=1)


def test_lint_paths_without_a_config_reads_tool_ranklint_like_the_cli(project: Path) -> None:
    write(project / "pyproject.toml", "[tool.ranklint]\nignore = ['RNK301']\n")

    result = lint_paths(["skipped/bad.py"], jobs=1)

    assert result.findings == []


def test_lint_paths_without_a_config_with_a_broken_table_raises_config_error(
    project: Path,
) -> None:
    from ranklint.config import ConfigError

    write(project / "pyproject.toml", "[tool.ranklint]\nselectt = ['RNK1']\n")

    with pytest.raises(ConfigError, match="did you mean 'select'"):
        lint_paths(["skipped/bad.py"], jobs=1)


def test_project_root_is_the_configured_root_for_files_inside_it(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.ranklint]\n")
    write(tmp_path / "sub" / "setup.py", "")
    write(tmp_path / "sub" / "a.py", "")
    config = Config(root=str(tmp_path), source=str(tmp_path / "pyproject.toml"), discovered=True)

    assert project_root([str(tmp_path / "sub" / "a.py")], config) == tmp_path


def test_project_root_without_configuration_is_the_nearest_folder_with_a_marker(
    tmp_path: Path,
) -> None:
    write(tmp_path / "setup.cfg", "")
    write(tmp_path / "pkg" / "setup.py", "")
    write(tmp_path / "pkg" / "mod" / "a.py", "")
    write(tmp_path / "pkg" / "mod" / "b.py", "")
    files = [str(tmp_path / "pkg" / "mod" / "a.py"), str(tmp_path / "pkg" / "mod" / "b.py")]

    assert project_root(files, Config(root=str(tmp_path / "other"))) == tmp_path / "pkg"
    assert project_root(files[:1], Config(root=str(tmp_path / "other"))) == tmp_path / "pkg"


def test_project_root_ignores_a_configuration_of_another_folder(tmp_path: Path) -> None:
    write(tmp_path / "conf" / "pyproject.toml", "[tool.ranklint]\n")
    write(tmp_path / "code" / ".git" / "HEAD", "")
    write(tmp_path / "code" / "a.py", "")
    config = Config(root=str(tmp_path / "conf"), source=str(tmp_path / "conf" / "pyproject.toml"))

    assert project_root([str(tmp_path / "code" / "a.py")], config) == tmp_path / "code"


def test_project_root_without_any_marker_is_none(tmp_path: Path) -> None:
    write(tmp_path / "a.py", "")

    assert project_root([str(tmp_path / "a.py")], Config(root=str(tmp_path / "x"))) is None


def test_lint_paths_without_a_config_uses_the_defaults(project: Path) -> None:
    result = lint_paths(["skipped/bad.py"], jobs=1)

    assert [f.code for f in result.findings] == ["RNK301"]


@pytest.mark.parametrize("jobs", [1, 3, None])
def test_lint_paths_runs_the_files_with_the_jobs_asked_for(
    project: Path, monkeypatch: pytest.MonkeyPatch, jobs: int | None
) -> None:
    import ranklint.api as api

    seen: list[int | None] = []
    real = api.lint_files

    def spy(files, config, *, jobs, cache, known=None):  # type: ignore[no-untyped-def]
        seen.append(jobs)
        return real(files, config, jobs=1, cache=cache, known=known)

    monkeypatch.setattr(api, "lint_files", spy)

    lint_paths(["train.py"], Config(), jobs=jobs)

    assert seen == [jobs]


def test_partial_lint_keeps_cross_function_findings_that_the_one_file_decides() -> None:
    source = (
        "import torch.distributed as dist\n\n\n"
        "def sync():\n    dist.barrier()\n\n\n"
        "def train():\n    if dist.get_rank() == 0:\n        sync()\n"
    )

    partial = lint_source(source, "pkg/train.py", partial=True)
    whole = lint_source(source, "pkg/train.py")

    assert [(f.code, f.line) for f in partial.findings] == [("RNK102", 10)]
    assert [(f.code, f.line, f.message) for f in partial.findings] == [
        (f.code, f.line, f.message) for f in whole.findings
    ]
