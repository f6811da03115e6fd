"""Findings elsewhere whose call chain passes through the given files are reported too."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write

CALLER = (
    "import torch.distributed as dist\nfrom helpers import save\n\n\n"
    "def step():\n    if dist.get_rank() == 0:\n        save()\n"
)
BARRIER = "import torch.distributed as dist\n\n\ndef save():\n    dist.barrier()\n"


@pytest.fixture
def project(tmp_path: Path, run_cli) -> Path:
    write(tmp_path / "pyproject.toml", "[project]\nname = 'p'\n")
    write(tmp_path / "train.py", CALLER)
    write(tmp_path / "helpers.py", "def save():\n    pass\n")
    assert run_cli("check", ".", "--cache-dir", "c", cwd=tmp_path).code == 0  # warm the cache
    write(tmp_path / "helpers.py", BARRIER)
    return tmp_path


def test_changed_helper_reports_the_finding_at_the_unchanged_call_site(
    run_cli, project: Path
) -> None:
    result = run_cli("check", "helpers.py", "--cache-dir", "c", cwd=project)

    assert result.code == 1
    assert result.out.splitlines()[0].startswith("train.py:7:9: RNK102 `save()`")
    assert "    helpers.py:5:5: `dist.barrier()` here" in result.out


def test_only_given_files_reports_only_findings_located_in_them(run_cli, project: Path) -> None:
    result = run_cli("check", "helpers.py", "--cache-dir", "c", "--only-given-files", cwd=project)

    assert (result.code, result.out) == (0, "")


def test_unrelated_findings_elsewhere_are_not_reported(run_cli, project: Path) -> None:
    write(project / "other.py", "import torch.distributed as dist\ndist.init_process_group()\n")
    run_cli("check", ".", "--cache-dir", "c", cwd=project)

    result = run_cli("check", "helpers.py", "--cache-dir", "c", cwd=project)

    assert "other.py" not in result.out
    assert result.out.count("RNK") == 1


# -- without a configuration file, and cold: one root, callers found by their text --

GUARDED_CALLER = (
    "from pkg.helpers import save\nfrom pkg.ranks import is_main\n\n\n"
    "def step():\n    if is_main():\n        save()\n"
)
MIDDLE = "from pkg.helpers import save\n\n\ndef checkpoint():\n    save()\n"
DEEP_CALLER = (
    "import torch.distributed as dist\nfrom pkg.io import checkpoint\n\n\n"
    "def end(rank):\n    if dist.get_rank() == 0:\n        checkpoint()\n"
)
RANKS = "import torch.distributed as dist\n\n\ndef is_main():\n    return dist.get_rank() == 0\n"
UNRELATED = "def save():\n    pass\n\n\ndef other():\n    save()\n"


@pytest.fixture
def package(tmp_path: Path) -> Path:
    write(tmp_path / "setup.py", "")  # a project marker, no [tool.ranklint] anywhere
    write(tmp_path / "pkg" / "__init__.py", "")
    write(tmp_path / "pkg" / "helpers.py", "def save():\n    pass\n")
    write(tmp_path / "pkg" / "ranks.py", RANKS)
    write(tmp_path / "pkg" / "train.py", GUARDED_CALLER)
    write(tmp_path / "pkg" / "io.py", MIDDLE)
    write(tmp_path / "scripts" / "end.py", DEEP_CALLER)
    write(tmp_path / "scripts" / "unrelated.py", UNRELATED)
    return tmp_path


def _callers_of_helpers(run) -> list[str]:
    return sorted(line.split(" ")[0] for line in run.out.splitlines() if not line.startswith(" "))


@pytest.fixture
def linted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths of the files this process parses and lints."""
    from ranklint import engine as engine_module

    seen: list[str] = []
    real = engine_module.FileLinter.lint_source

    def recording(self, source: str | bytes, path: str):  # type: ignore[no-untyped-def]
        seen.append(path)
        return real(self, source, path)

    monkeypatch.setattr(engine_module.FileLinter, "lint_source", recording)
    return seen


def test_one_file_run_with_a_warm_cache_and_no_configuration_uses_the_projects_cache(
    run_cli, package: Path, linted: list[str]
) -> None:
    assert run_cli("check", ".", cwd=package).code == 0  # warms the project's cache
    write(package / "pkg" / "helpers.py", BARRIER)
    linted.clear()

    run = run_cli("check", "pkg/helpers.py", "--output-format", "concise", cwd=package)

    assert _callers_of_helpers(run) == ["pkg/train.py:7:9:", "scripts/end.py:7:9:"]
    assert [Path(path).name for path in linted] == ["helpers.py"]  # the rest from the cache


def test_cold_one_file_run_finds_callers_through_a_middle_file_and_a_rank_helper(
    run_cli, package: Path
) -> None:
    write(package / "pkg" / "helpers.py", BARRIER)

    run = run_cli("check", "pkg/helpers.py", "--no-cache", "--format", "concise", cwd=package)

    assert run.code == 1
    assert _callers_of_helpers(run) == ["pkg/train.py:7:9:", "scripts/end.py:7:9:"]
    assert "    pkg/io.py:5:5: calls `save()`" in run.out


def test_cold_one_file_run_parses_only_files_that_mention_the_helper_or_its_callers(
    package: Path, linted: list[str]
) -> None:
    from ranklint import Config, lint_paths

    write(package / "pkg" / "helpers.py", BARRIER)
    write(package / "pkg" / "quiet.py", "def nothing():\n    return 1\n")

    lint_paths(
        [package / "pkg" / "helpers.py"],
        Config(root=package, confidence="low"),
        jobs=1,
        whole_project=True,
    )

    parsed = sorted(Path(path).resolve().relative_to(package).as_posix() for path in linted)
    assert "pkg/quiet.py" not in parsed
    assert "scripts/unrelated.py" not in parsed  # names `save`, but not `helpers` nor `pkg`
    assert {"pkg/helpers.py", "pkg/train.py", "pkg/io.py", "scripts/end.py"} <= set(parsed)
