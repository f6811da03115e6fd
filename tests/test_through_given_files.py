"""Findings elsewhere whose call chain passes through the given files are reported too."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import write

CALLER = "from helpers import save\n\n\ndef step(rank):\n    if rank == 0:\n        save()\n"
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
    assert result.out.splitlines()[0].startswith("train.py:6:9: RNK102 `save()`")
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
