"""Every rule's own valid and invalid examples are tests (and the docs' examples)."""

from __future__ import annotations

import re

import pytest

from ranklint import Config, lint_source
from ranklint.findings import Confidence
from ranklint.rules import Rule, all_rules
from ranklint.testing import actual_findings, expected_findings


def _cases(kind: str) -> list[pytest.param]:
    cases = []
    for rule in all_rules():
        valid, invalid = rule.examples()
        for index, example in enumerate(valid if kind == "valid" else invalid):
            cases.append(pytest.param(rule, example, id=f"{rule.code}-{kind}-{index}"))
    return cases


@pytest.mark.parametrize(("rule", "example"), _cases("valid"))
def test_valid_example_yields_no_finding_of_its_rule_at_any_confidence(
    rule: type[Rule], example: str
) -> None:
    config = Config(select=(rule.code, *rule.example_select), confidence="low")
    result = lint_source(example, rule.example_path, config)

    assert result.errors == []
    assert [f for f in result.findings if f.code == rule.code] == []


@pytest.mark.parametrize("confidence", [Confidence.HIGH, Confidence.LOW], ids=lambda c: c.value)
@pytest.mark.parametrize(("rule", "example"), _cases("invalid"))
def test_invalid_example_yields_exactly_the_marked_findings_of_each_tier(
    rule: type[Rule], example: str, confidence: Confidence
) -> None:
    """Unmarked codes are findings of the default run; `(medium)` ones appear below it."""
    config = Config(select=(rule.code, *rule.example_select), confidence=confidence.value)
    result = lint_source(example, rule.example_path, config)

    assert result.errors == []
    marked = [item for item in expected_findings(example, Confidence.LOW) if item[1] == rule.code]
    assert marked, "an invalid example must mark at least one expected finding"
    expected = [item for item in expected_findings(example, confidence) if item[1] == rule.code]
    assert actual_findings(result.findings) == expected


def test_the_first_invalid_example_of_each_rule_is_a_default_finding() -> None:
    """The docs show what the default run reports for it."""
    for rule in all_rules():
        first = rule.examples()[1][0]
        high = [item for item in expected_findings(first) if item[1] == rule.code]
        assert high, rule.code


def test_rule_codes_and_names_are_unique_and_well_formed() -> None:
    rules = all_rules()

    codes = [rule.code for rule in rules]
    names = [rule.name for rule in rules]

    assert len(set(codes)) == len(codes)
    assert len(set(names)) == len(names)
    assert all(re.fullmatch(r"RNK\d{3}", code) for code in codes)
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name) for name in names)


@pytest.mark.parametrize("rule", all_rules(), ids=lambda rule: rule.code)
def test_rule_metadata_is_complete(rule: type[Rule]) -> None:
    valid, invalid = rule.examples()

    assert rule.summary
    assert not rule.summary.endswith(".")
    assert rule.what.strip()
    assert rule.why.strip()
    assert rule.limits.strip()
    assert valid
    assert invalid


def test_registering_a_rule_with_a_taken_code_fails() -> None:
    from ranklint.findings import Severity

    with pytest.raises(TypeError, match="clashes with"):

        class Duplicate(Rule):  # pragma: no cover - the class body is the test
            code = "RNK101"
            name = "another-name"
            severity = Severity.INFO
            summary = "x"
            what = why = limits = "x"
            valid = invalid = ("pass",)


def test_a_visit_method_for_an_unknown_node_type_is_rejected() -> None:
    with pytest.raises(TypeError, match="is not a libcst node"):

        class Typo(Rule):  # pragma: no cover - the class body is the test
            def visit_Cal(self, node: object) -> None: ...
