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
