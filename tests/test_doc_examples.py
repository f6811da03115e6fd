"""The code blocks of every generated rule doc do what the doc says.

The "Example" block of ``docs/rules/RNKxxx.md`` yields its rule; the "Use
instead" block yields nothing at all under the default rule set (plus the rule
itself where it is opt-in), so that copying the advice never trades one finding
for another.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ranklint import Config, lint_source
from ranklint.rules import Rule, all_rules

DOCS = Path(__file__).resolve().parent.parent / "docs" / "rules"


def _block(rule: type[Rule], heading: str) -> str:
    text = (DOCS / f"{rule.code}.md").read_text(encoding="utf-8")
    match = re.search(rf"^## {heading}\n\n```python\n(.*?)^```$", text, re.S | re.M)
    assert match is not None, f"{rule.code}.md has no `{heading}` code block"
    return match.group(1)


def _config(rule: type[Rule]) -> Config:
    return Config(extend_select=(rule.code,))


@pytest.mark.parametrize("rule", all_rules(), ids=lambda rule: rule.code)
def test_doc_example_block_yields_its_rule_when_linted(rule: type[Rule]) -> None:
    source = _block(rule, "Example")

    result = lint_source(source, rule.example_path, _config(rule))

    assert rule.code in {finding.code for finding in result.findings}


@pytest.mark.parametrize("rule", all_rules(), ids=lambda rule: rule.code)
def test_doc_use_instead_block_yields_no_finding_of_any_default_rule(rule: type[Rule]) -> None:
    source = _block(rule, "Use instead")

    result = lint_source(source, rule.example_path, _config(rule))

    assert result.errors == []
    assert [(f.code, f.line, f.message) for f in result.findings] == []
