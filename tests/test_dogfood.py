"""ranklint holds its own source to its rules, and to ruff's."""

from __future__ import annotations

import shutil
import sys

import pytest

from ranklint import Config, lint_paths
from tests.conftest import REPO_ROOT, run_subprocess


def test_ranklint_reports_nothing_on_its_own_source_and_tests() -> None:
    result = lint_paths(
        [REPO_ROOT / "src", REPO_ROOT / "tests"], Config(select=("ALL",), root=REPO_ROOT)
    )

    assert result.errors == []
    assert result.findings == []
    assert result.files_checked > 20


def _ruff() -> str:
    path = shutil.which("ruff", path=str(__import__("pathlib").Path(sys.executable).parent))
    if path is None:
        pytest.skip("ruff is not installed in this environment (install the test extras)")
    return path


@pytest.mark.parametrize(
    "args", [("check", "."), ("format", "--check", ".")], ids=["lint", "format"]
)
def test_ruff_passes_on_the_repository(args: tuple[str, ...]) -> None:
    result = run_subprocess(_ruff(), *args, cwd=REPO_ROOT)

    assert result.returncode == 0, result.stdout + result.stderr
