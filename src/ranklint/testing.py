"""Helpers for checking findings against inline ``# expect: RNK101`` markers.

Used by the test suite for rule examples and fixtures, and usable by anyone who
writes sample files for ranklint: each marker names the codes expected on its
line; a comparison is exact both ways.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterable

from ranklint.findings import Finding

_EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>RNK\d{3}(?:\s*,\s*RNK\d{3})*)")


def expected_findings(source: str) -> list[tuple[int, str]]:
    """Sorted ``(line, code)`` pairs named by ``# expect:`` comments in ``source``.

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
                for code in re.split(r"\s*,\s*", match.group("codes")):
                    expected.append((token.start[0], code))
    except (tokenize.TokenError, SyntaxError):
        pass
    return sorted(expected)


def actual_findings(findings: Iterable[Finding]) -> list[tuple[int, str]]:
    """Sorted ``(line, code)`` pairs of ``findings``, comparable with :func:`expected_findings`."""
    return sorted((finding.line, finding.code) for finding in findings)
