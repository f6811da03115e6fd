"""The shipped sample code: ranklint's findings equal the inline ``# expect:`` markers."""

from __future__ import annotations

from pathlib import Path

import pytest

from ranklint import Config, lint_paths
from ranklint.testing import actual_findings, expected_findings
from tests.conftest import FIXTURES

FIXTURE_FILES = sorted(FIXTURES.rglob("*.py"))


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_fixture_findings_equal_inline_expectations(path: Path) -> None:
    result = lint_paths([path], Config(select=("ALL",)), jobs=1)

    assert result.errors == []
    expected = expected_findings(path.read_text(encoding="utf-8"))
    assert actual_findings(result.findings) == expected


def test_fixtures_hold_findings_of_every_shipped_rule_family() -> None:
    codes = {code for path in FIXTURE_FILES for _, code in expected_findings(path.read_text())}

    assert {"RNK101", "RNK301"} <= codes
