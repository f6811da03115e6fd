"""Helpers for checking findings against inline ``# expect: RNK101`` markers.

Used by the test suite for rule examples and fixtures, and usable by anyone who
writes sample files for ranklint: each marker names the codes expected on its
line; a comparison is exact both ways. A code may name the confidence of its
finding, ``# expect: RNK102 (medium)``: such a finding is reported only at that
confidence or a lower one (``--confidence medium``); a code without one is a
finding of the default run (``high``).
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterable

from ranklint.findings import Confidence, Finding

_CODE = r"RNK\d{3}(?:\s*\((?:high|medium|low)\))?"
_EXPECT = re.compile(rf"#\s*expect:\s*(?P<codes>{_CODE}(?:\s*,\s*{_CODE})*)")
_TIER = re.compile(r"(?P<code>RNK\d{3})\s*(?:\((?P<tier>\w+)\))?")


def expected_findings(
    source: str, confidence: Confidence = Confidence.HIGH
) -> list[tuple[int, str]]:
    """Sorted ``(line, code)`` pairs named by ``# expect:`` comments in ``source``,
    of the findings a run at ``confidence`` reports (the default run's by default).

    Works on files that do not parse: comments seen before a tokenizer error
    still count.
    """
    expected: list[tuple[int, str]] = []
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    try:
        for token in tokens:
            if token.type != tokenize.COMMENT:
                continue
            match = _EXPECT.search(token.string)
            if match:
                for entry in re.split(r"\s*,\s*", match.group("codes")):
                    marked = _TIER.fullmatch(entry)
                    assert marked is not None  # the entry matched _CODE
                    tier = Confidence(marked.group("tier") or Confidence.HIGH.value)
                    if confidence.admits(tier):
                        expected.append((token.start[0], marked.group("code")))
    except (tokenize.TokenError, SyntaxError):
        pass
    return sorted(expected)


def actual_findings(findings: Iterable[Finding]) -> list[tuple[int, str]]:
    """Sorted ``(line, code)`` pairs of ``findings``, comparable with :func:`expected_findings`."""
    return sorted((finding.line, finding.code) for finding in findings)
