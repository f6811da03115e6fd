"""The shipped sample code: ranklint's findings equal the inline ``# expect:`` markers."""

from __future__ import annotations

from pathlib import Path

import pytest

from ranklint import Config, LintResult, lint_paths
from ranklint.testing import actual_findings, expected_findings
from tests.conftest import FIXTURES

FIXTURE_FILES = sorted(FIXTURES.rglob("*.py"))


@pytest.fixture(scope="module")
def whole_run() -> LintResult:
    # One run over all fixtures: findings across files (call chains) need every file.
    return lint_paths([FIXTURES], Config(select=("ALL",)), jobs=1)


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_fixture_findings_equal_inline_expectations(path: Path, whole_run: LintResult) -> None:
    found = [f for f in whole_run.findings if Path(f.path).resolve() == path.resolve()]

    assert whole_run.errors == []
    expected = expected_findings(path.read_text(encoding="utf-8"))
    assert actual_findings(found) == expected


def test_fixtures_hold_findings_of_every_shipped_rule_family() -> None:
    codes = {code for path in FIXTURE_FILES for _, code in expected_findings(path.read_text())}

    assert {"RNK101", "RNK102", "RNK103", "RNK104", "RNK105", "RNK201", "RNK202", "RNK301"} <= codes
