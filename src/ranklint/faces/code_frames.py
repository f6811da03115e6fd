"""The ``full`` text format: each finding's line, wrapped to the terminal, with a code
frame under it (as ruff's ``full`` format). Formatters only format: the source lines
come from the caller (``lines_of``), which reads them."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from ranklint.findings import Finding, Severity
from ranklint.places import cell_lines, location

# ANSI colours (--color): the path bold, the code and the marker by severity, the gutter blue.
_BOLD, _DIM, _BLUE, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[34m", "\x1b[0m"
_CODE_COLOUR = {Severity.ERROR: "\x1b[31m", Severity.WARNING: "\x1b[33m", Severity.INFO: "\x1b[36m"}

# Lines of source shown before and after the finding's line (ruff shows two).
CONTEXT_LINES = 2
# Narrower terminals still get a few words a line.
_NARROWEST = 40
# A word: a backtick span (spaces and all) or a run of other non-space characters,
# so that `rank == 0` is never split across lines.
_WORD = re.compile(r"(?:`[^`\n]*`|[^\s`]|`)+")
# Characters that would move the cursor or start an escape when printed.
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")

# The lines of a file (no line ends), or None where it cannot be read.
LinesOf = Callable[[str], Sequence[str] | None]


def wrap(head: str, message: str, width: int, indent: str) -> list[str]:
    """``head`` followed by ``message``, broken between words to fit ``width``; the
    continuation lines start with ``indent``. ``head`` is never broken and keeps the
    first word with it; a longer word than a line holds keeps a line of its own."""
    lines = [head]
    for index, word in enumerate(_WORD.findall(message)):
        # The first word stays on the head's line, so that the head never stands alone.
        if index == 0 or len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += f" {word}"
        else:
            lines.append(f"{indent}{word}")
    return lines


def source_frame(finding: Finding, lines: Sequence[str], *, color: bool) -> list[str]:
    """The lines around ``finding`` with line numbers, and ``^`` under its span (on its
    first line); [] when the file no longer has that line."""
    if not 1 <= finding.line <= len(lines):
        return []
    first = max(1, finding.line - CONTEXT_LINES)
    last = min(len(lines), finding.line + CONTEXT_LINES)
    # Blank lines at the edges of the context say nothing (ruff trims them too).
    while first < finding.line and not lines[first - 1].strip():
        first += 1
    while last > finding.line and not lines[last - 1].strip():
        last -= 1
    width = len(str(last))
    gutter, reset = (_BLUE, _RESET) if color else ("", "")
    empty = f"{gutter}{'':>{width}} |{reset}"
    frame = [empty]
    for number in range(first, last + 1):
        text = _CONTROL.sub("?", lines[number - 1]).rstrip()
        sep = " " if text else ""
        frame.append(f"{gutter}{number:>{width}} |{reset}{sep}{text}")
        if number == finding.line:
            frame.append(f"{empty} {_marker(finding, text, color=color)}")
    frame.append(empty)
    return frame


def _marker(finding: Finding, text: str, *, color: bool) -> str:
    """Spaces (tabs where the line has tabs, so that it lines up) and ``^`` under the span."""
    start = min(finding.col - 1, len(text))
    end = finding.end_col - 1 if finding.end_line == finding.line else len(text)
    carets = "^" * max(1, min(end, len(text)) - start)
    pad = "".join("\t" if char == "\t" else " " for char in text[:start])
    if color:
        return f"{pad}{_CODE_COLOUR[finding.severity]}{carets}{_RESET}"
    return f"{pad}{carets}"


def _framed(finding: Finding, lines_of: LinesOf) -> tuple[Finding, Sequence[str] | None]:
    """The finding and the lines its frame shows: in a notebook, its cell's lines,
    with the finding's lines counted from the cell's first; else its file's."""
    cell = cell_lines(finding.path, finding.line)
    if cell is None:
        return finding, lines_of(finding.path)
    lines, first = cell
    shift = first - 1
    moved = replace(finding, line=finding.line - shift, end_line=finding.end_line - shift)
    return moved, lines


def format_full(
    findings: Sequence[Finding],
    lines_of: LinesOf,
    *,
    width: int,
    color: bool = False,
    evidence: bool = False,
) -> str:
    """Each finding: its line (``path:line:col: CODE message``, the message wrapped at
    ``width``), its code frame when its file can be read, the fix it offers, its trace
    and, with ``evidence``, its confidence and evidence; a blank line after each."""
    width = max(width, _NARROWEST)
    blocks = []
    for f in findings:
        where = location(f.path, f.line, f.col)
        head = f"{where}: {f.code}"
        lines = wrap(head, f.message, width, "  ")
        if color:
            path, _, position = where.partition(":")
            painted = f"{_BOLD}{path}{_RESET}:{position}: "
            painted += f"{_CODE_COLOUR[f.severity]}{f.code}{_RESET}"
            lines[0] = painted + lines[0][len(head) :]
        framed, source = _framed(f, lines_of)
        if source is not None:
            lines += source_frame(framed, source, color=color)
        if f.fix is not None:
            unsafe = "" if f.fixable(unsafe=False) else " (unsafe: with `--unsafe-fixes`)"
            lines += wrap("help:", f"{f.fix.message}{unsafe}", width, "  ")
        for step in f.trace:
            where = f"    {location(step.path, step.line, step.col)}:"
            step_lines = wrap(where, step.message, width, "      ")
            if color:
                step_lines[0] = f"    {_DIM}{where.strip()}{_RESET}" + step_lines[0][len(where) :]
            lines += step_lines
        if evidence and f.evidence is not None:
            lines.append(f"    confidence: {f.confidence.value}")
            for aspect, link in f.evidence.links():
                head_text = f"    {aspect}: {link.kind} ({link.confidence.value}):"
                lines += wrap(head_text, link.detail, width, "      ")
        blocks.append("".join(line + "\n" for line in lines))
    return "\n".join(blocks) + ("\n" if blocks else "")
