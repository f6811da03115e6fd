"""``ranklint check --add-noqa``: suppress every current finding where it is.

Each finding gets ``# noqa: CODE`` on its line (the line it is reported at is
always one its suppression is honoured on), merged into a ``# noqa: ...`` list
already there. A line that cannot end in a comment (inside a multi-line
string, or continued with a backslash) is skipped for the next line of the
finding's span that can; a finding with no such line is left and counted.

A file is written only if it still holds what was linted, and only if the
edited source still compiles; it is replaced atomically with its encoding, BOM
and line endings kept.
"""

from __future__ import annotations

import ast
import io
import logging
import re
import tokenize
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ranklint.faces.files import replace_file
from ranklint.findings import Finding
from ranklint.source import editable_text

logger = logging.getLogger(__name__)

_NOQA_LIST = re.compile(r"(#\s*noqa:\s*)([A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*)", re.IGNORECASE)


@dataclass
class NoqaReport:
    """What ``--add-noqa`` did."""

    added: int = 0
    files: list[str] = field(default_factory=list)
    #: findings whose span has no line that can end in a comment.
    unplaced: list[Finding] = field(default_factory=list)
    #: files left alone, with why (changed on disk, or the edit would not compile).
    refused: list[tuple[str, str]] = field(default_factory=list)


def _comment_lines(text: str) -> set[int]:
    """The lines whose end is outside any string and not a backslash continuation."""
    safe: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT):
                safe.add(token.start[0])
    except (tokenize.TokenError, SyntaxError):
        logger.debug("tokenize stopped early", exc_info=True)
    return safe


def _with_code(line: str, code: str) -> str:
    """``line`` (without its ending) suppressing ``code`` too."""
    match = _NOQA_LIST.search(line)
    if match is not None:
        codes = [c for c in re.split(r"[\s,]+", match.group(2)) if c]
        if code in codes:
            return line
        merged = ", ".join([*codes, code])
        return line[: match.start(2)] + merged + line[match.end(2) :]
    return f"{line.rstrip()}  # noqa: {code}"


def _split_ending(line: str) -> tuple[str, str]:
    body = line.rstrip("\r\n")
    return body, line[len(body) :]


def noqa_line(text: str, finding: Finding) -> tuple[int, str] | None:
    """Where ``--add-noqa`` would suppress ``finding`` in ``text``: the (1-based) line
    and its new content (without its ending); ``None`` when no line of its span can
    end in a comment, or when the line suppresses its code already."""
    lines = text.splitlines(keepends=True)
    safe = _comment_lines(text)
    target = next(
        (n for n in range(finding.line, finding.end_line + 1) if n in safe and n <= len(lines)),
        None,
    )
    if target is None:
        return None
    body, _ = _split_ending(lines[target - 1])
    edited = _with_code(body, finding.code)
    return None if edited == body else (target, edited)


def add_noqa(findings: Sequence[Finding]) -> NoqaReport:
    """Add the suppressions for ``findings`` to their files."""
    report = NoqaReport()
    by_path: dict[str, list[Finding]] = {}
    for finding in findings:
        by_path.setdefault(finding.path, []).append(finding)
    for path, found in sorted(by_path.items()):
        _edit_file(path, found, report)
    return report


def _edit_file(path: str, findings: Iterable[Finding], report: NoqaReport) -> None:
    file = Path(path)
    try:
        raw = file.read_bytes()
        text, encode = editable_text(path, raw)
    except (OSError, SyntaxError, ValueError, LookupError) as exc:
        report.refused.append((path, f"cannot read it: {exc}"))
        return
    lines = text.splitlines(keepends=True)
    safe = _comment_lines(text)
    added = 0
    for finding in sorted(findings, key=lambda f: (f.line, f.code)):
        target = next(
            (n for n in range(finding.line, finding.end_line + 1) if n in safe and n <= len(lines)),
            None,
        )
        if target is None:
            report.unplaced.append(finding)
            continue
        body, ending = _split_ending(lines[target - 1])
        edited = _with_code(body, finding.code)
        if edited != body:
            lines[target - 1] = edited + ending
            added += 1
    if not added:
        return
    new_text = "".join(lines)
    try:
        compile(
            new_text,
            path,
            "exec",
            # Equivalent mutants: this module's only future import, annotations, does not
            # change how source parses into an AST.
            dont_inherit=True,  # pragma: no mutate (inheriting changes no AST)
            flags=ast.PyCF_ONLY_AST,
        )
    except (SyntaxError, ValueError) as exc:
        report.refused.append((path, f"the edited file would not compile: {exc}"))
        return
    try:
        if file.read_bytes() != raw:
            report.refused.append((path, "it changed on disk since it was checked"))
            return
        # "utf-8-sig" writes the BOM back; line endings were kept line by line.
        replace_file(file, encode(new_text))
    except OSError as exc:
        report.refused.append((path, f"cannot write it: {exc.strerror}"))
        return
    report.added += added
    report.files.append(path)
