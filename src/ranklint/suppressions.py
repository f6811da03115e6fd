"""Suppression comments: ``# noqa``, ``# noqa: RNK101``, ``# ranklint: ignore[RNK101]``,
and the file-level ``# ranklint: skip-file``.

A code in a comment suppresses every code it is a prefix of, in any case:
``# noqa: RNK1`` suppresses RNK102 and RNK111, ``# noqa: rnk301`` RNK301. That
is what flake8 does with ``# noqa: RNK1`` (it compares codes by prefix), so a
comment means the same under ``ranklint check`` and under the flake8 plugin
(which applies ranklint's own suppressions before flake8 applies its own).
"""

from __future__ import annotations

import io
import logging
import re
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass, field

logger = logging.getLogger(__name__)

_CODE_LIST = r"[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*"
# ``noqa`` must end the comment or be followed by ":" or a space (``# noqa-ish`` is not one).
NOQA = re.compile(rf"#\s*noqa(?::\s*(?P<codes>{_CODE_LIST}))?(?=$|[\s:])", re.IGNORECASE)
IGNORE = re.compile(rf"#\s*ranklint:\s*ignore(?:\[\s*(?P<codes>{_CODE_LIST})\s*\])?", re.IGNORECASE)
_SKIP_FILE = re.compile(r"#\s*ranklint:\s*skip-file\b", re.IGNORECASE)
SPLIT = re.compile(r"[\s,]+")


@dataclass(frozen=True)
class Suppressions:
    """Which codes are suppressed on which (1-based) lines of one file."""

    skip_file: bool = False
    # line -> suppressed codes; None means every code.
    by_line: dict[int, frozenset[str] | None] = field(default_factory=dict)

    def suppresses(self, code: str, lines: Iterable[int]) -> bool:
        return self.suppressing(code, lines) is not None

    def suppressing(self, code: str, lines: Iterable[int]) -> tuple[int, frozenset[str]] | None:
        """The first of ``lines`` whose comment suppresses ``code``, with the entries of
        the comment that do (``code`` or its prefixes; empty for a bare ``# noqa``)."""
        for line in lines:
            if line in self.by_line:
                codes = self.by_line[line]
                if codes is None:
                    return line, frozenset()
                matching = frozenset(entry for entry in codes if code.startswith(entry))
                if matching:
                    return line, matching
        return None


NO_SUPPRESSIONS = Suppressions()


def parse_suppressions(source: str) -> Suppressions:
    """Find suppression comments in ``source``.

    Comments are found with the tokenizer, so ``# noqa`` inside a string is
    not a suppression. Files without the words are not tokenized at all.
    """
    lowered = source.lower()
    if "noqa" not in lowered and "ranklint" not in lowered:
        return NO_SUPPRESSIONS
    skip_file = False
    by_line: dict[int, frozenset[str] | None] = {}
    for line, text in _comments(source):
        if _SKIP_FILE.search(text):
            skip_file = True
        for pattern in (NOQA, IGNORE):
            match = pattern.search(text)
            if match is None:
                continue
            codes = match.group("codes")
            if codes is None:
                by_line[line] = None
            elif by_line.get(line, frozenset()) is not None:
                new = frozenset(code.upper() for code in SPLIT.split(codes.strip()) if code)
                by_line[line] = by_line.get(line, frozenset()) | new
    return Suppressions(skip_file, by_line)


def _comments(source: str) -> list[tuple[int, str]]:
    try:
        return [
            (token.start[0], token.string)
            # Universal newlines: a lone `\r` ends a line, as it does for the
            # parser (and for positions, `positions.NEWLINE`).
            for token in tokenize.generate_tokens(io.StringIO(source, newline=None).readline)
            if token.type == tokenize.COMMENT
        ]
    except (tokenize.TokenError, SyntaxError) as exc:
        # The tokenizer of an older Python can reject syntax that libcst
        # parsed (e.g. PEP 701 f-strings); fall back to a per-line scan.
        logger.debug("tokenize failed (%s); scanning lines for comments", exc)
        return [
            (number, line[line.index("#") :])
            for number, line in enumerate(source.splitlines(), start=1)
            if "#" in line
        ]
