"""Properties of applying every safe fix, on the fixtures and on generated programs:
the result parses, the fixed findings are gone (and no other of their codes
appears), and fixing again changes nothing."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ranklint import Config, lint_source
from ranklint.findings import Finding
from ranklint.fixing.apply import fix_text
from ranklint.source import SourceError, decode_source, parse_source
from tests.conftest import FIXTURES, FUZZ_TIMEOUT

hypothesmith = pytest.importorskip("hypothesmith", reason="hypothesmith is a test extra")

ALL = Config(select=("ALL",))
PATH = "generated.py"

# Module-level snippets with findings that have safe fixes (RNK103 on the default
# group, RNK106 in the import forms, RNK002 in both comment styles).
FIXABLE_SNIPPETS = (
    "import torch.distributed as dist\n\n\ndef share(objs):\n"
    "    dist.broadcast_object_list(objs)\n",
    "import torch.distributed as dist\n\n\ndef total(t):\n"
    "    dist.all_reduce(\n        t,\n    )\n",
    "from torch.distributed import ReduceOp, reduce\nreduce(t, 0)\n",
    "import torch\ntorch.distributed.gather_object(o, out, group=None)\n",
    "x = 1  # noqa: RNK103, E501\n",
    "y = 2  # ranklint: ignore[RNK106]  # why\n",
)


def _relint(path: str):
    def relint(text: str) -> list[Finding]:
        return lint_source(text, path, ALL).findings

    return relint


def _check_fixing(source: str, path: str) -> None:
    findings = lint_source(source, path, ALL).findings
    relint = _relint(path)

    fixed_text, fixed = fix_text(source, findings, relint, unsafe=False)

    if not fixed:
        assert fixed_text == source
        return
    parse_source(fixed_text)  # raises if a fix broke the syntax
    remaining = Counter(finding.code for finding in relint(fixed_text))
    before = Counter(finding.code for finding in findings)
    done = Counter(finding.code for finding in fixed)
    for code in done:
        assert remaining[code] == before[code] - done[code], code
    again, more = fix_text(fixed_text, relint(fixed_text), relint, unsafe=False)
    assert more == []
    assert again == fixed_text


FIXTURE_FILES = sorted(FIXTURES.rglob("*.py"))


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_safe_fixes_on_a_fixture_parse_remove_the_fixed_findings_and_are_idempotent(
    path: Path,
) -> None:
    _check_fixing(decode_source(path.read_bytes()), str(path))


def test_fixtures_offer_safe_fixes_to_check() -> None:
    offered = [
        finding
        for path in FIXTURE_FILES
        for finding in lint_source(path.read_bytes(), str(path), ALL).findings
        if finding.fixable(unsafe=False)
    ]

    assert {finding.code for finding in offered} >= {"RNK106"}


@st.composite
def programs_with_fixes(draw: st.DrawFn) -> str:
    """A generated program with fixable snippets spliced before and after it."""
    base = draw(hypothesmith.from_grammar())
    parts = [base if base.endswith("\n") or not base else base + "\n"]
    for snippet in draw(st.lists(st.sampled_from(FIXABLE_SNIPPETS), min_size=1, max_size=4)):
        position = draw(st.sampled_from(("before", "after")))
        parts.insert(0 if position == "before" else len(parts), snippet)
    return "".join(parts)


@pytest.mark.timeout(FUZZ_TIMEOUT)
@settings(max_examples=max(10, settings().max_examples // 6))
@given(programs_with_fixes())
def test_safe_fixes_on_generated_programs_parse_remove_the_fixed_findings_and_are_idempotent(
    source: str,
) -> None:
    try:
        parse_source(source)
    except SourceError:
        return  # the spliced program does not parse; nothing to fix
    _check_fixing(source, PATH)


def test_snippets_alone_are_all_fixed() -> None:
    source = "".join(FIXABLE_SNIPPETS)
    findings = lint_source(source, PATH, ALL).findings

    fixed_text, fixed = fix_text(source, findings, _relint(PATH), unsafe=False)

    assert Counter(f.code for f in fixed) == Counter({"RNK106": 2, "RNK103": 2, "RNK002": 2})
    assert "dist.broadcast_object_list(objs, src=0)" in fixed_text
    assert "torch.distributed.gather_object(o, out, group=None, dst=0)" in fixed_text
    assert "reduce(t, 0, op=ReduceOp.SUM)" in fixed_text
    assert "        op=dist.ReduceOp.SUM,\n" in fixed_text
    assert "x = 1  # noqa: E501\n" in fixed_text
    assert "y = 2  # why\n" in fixed_text
