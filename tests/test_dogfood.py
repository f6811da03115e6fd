"""ranklint holds its own source to its rules, and to ruff's."""

from __future__ import annotations

import shutil
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from ranklint import Config, lint_paths
from ranklint.config import load_config
from ranklint.testing import expected_findings
from tests.conftest import REPO_ROOT, run_subprocess


def test_ranklint_reports_nothing_on_its_own_source_tests_and_benchmarks() -> None:
    result = lint_paths(
        [REPO_ROOT / "src", REPO_ROOT / "tests", REPO_ROOT / "bench"],
        # tests/realbugs: re-created real bugs, checked by tests/test_realbugs.py;
        # tests/runtime_cases.py: divergent rank functions for the runtime companion.
        Config(
            select=("ALL",),
            root=REPO_ROOT,
            extend_exclude=("tests/realbugs", "tests/runtime_cases.py"),
        ),
    )

    assert result.errors == []
    assert result.findings == []
    assert result.files_checked > 20


def test_every_rule_on_the_whole_repository_finds_exactly_the_fixture_markers() -> None:
    # The repository's own configuration excludes fixtures/ (sample code with
    # deliberate findings); here every file is checked with every rule, except
    # downloaded benchmark corpora, the re-created real bugs (tests/test_realbugs.py)
    # and the runtime companion's divergent rank functions (tests/runtime_cases.py).
    config = replace(
        load_config(REPO_ROOT / "pyproject.toml"),
        select=("ALL",),
        extend_exclude=(".cache", "tests/realbugs", "tests/runtime_cases.py"),
    )
    result = lint_paths([REPO_ROOT], config, jobs=1)

    assert result.errors == []
    found = sorted(
        (Path(f.path).resolve().relative_to(REPO_ROOT).as_posix(), f.line, f.code)
        for f in result.findings
    )
    expected = sorted(
        (path.relative_to(REPO_ROOT).as_posix(), line, code)
        for path in (REPO_ROOT / "fixtures").rglob("*.py")
        for line, code in expected_findings(path.read_text(encoding="utf-8"))
    )
    assert found == expected


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
