"""The rule reference in docs/ is generated from rule metadata and must be current."""

from __future__ import annotations

from ranklint.docs import generate, render_rule
from ranklint.rules import all_rules
from tests.conftest import REPO_ROOT


def test_committed_rule_docs_match_the_generator() -> None:
    expected = generate(REPO_ROOT / "docs")

    stale = [
        str(path.relative_to(REPO_ROOT))
        for path, text in expected.items()
        if not path.is_file() or path.read_text(encoding="utf-8") != text
    ]
    extra = sorted(
        str(path.relative_to(REPO_ROOT))
        for path in (REPO_ROOT / "docs" / "rules").glob("*.md")
        if path not in expected
    )

    assert stale == [], "run `python -m ranklint.docs docs/` and commit the result"
    assert extra == [], "docs/rules holds files the generator does not write"


def test_rendered_docs_have_every_section_and_no_test_markers() -> None:
    for rule in all_rules():
        text = render_rule(rule)

        for section in (
            "## What it does",
            "## Why it matters on a cluster",
            "## Example",
            "## Use instead",
            "## Known limits",
        ):
            assert section in text, (rule.code, section)
        assert "# expect:" not in text


def test_readme_rule_table_lists_every_rule_with_its_name_and_default() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in readme.splitlines()
        if line.startswith("| RNK")
    ]

    listed = [(code, name, "(off by default)" in text) for code, name, text in rows]
    expected = [(rule.code, rule.name, not rule.default_enabled) for rule in all_rules()]

    assert listed == expected


def test_every_rule_doc_lists_the_options_the_rule_reads() -> None:
    hot = render_rule(next(rule for rule in all_rules() if rule.code == "RNK201"))
    wildcard = render_rule(next(rule for rule in all_rules() if rule.code == "RNK301"))

    assert "## Options" in hot
    assert "`hot-functions`" in hot
    assert "`extend-hot-functions`" in hot
    assert "This rule reads no options" in wildcard
