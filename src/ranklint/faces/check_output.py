"""What ``ranklint check`` prints: the findings in the chosen format, the errors, the
summary, and the exit code."""

from __future__ import annotations

import argparse
import logging
import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TextIO

from ranklint.api import LintResult
from ranklint.decoding import SourceError, decode_source
from ranklint.faces.code_frames import format_full
from ranklint.faces.exits import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK
from ranklint.faces.formatters import (
    format_github,
    format_gitlab,
    format_json,
    format_json_lines,
    format_junit,
    format_sarif,
    format_statistics,
    format_text,
)
from ranklint.faces.run_summary import fix_hint, hidden, summary_line

logger = logging.getLogger(__name__)

# The text formats: `full` (the default: code frames, as ruff's) and `concise` (one line
# a finding); `text` is `full` under the name `--format` always had.
TEXT_STYLES = {"full": "full", "text": "full", "concise": "concise"}
OTHER_FORMATS = ("json", "json-lines", "sarif", "github", "gitlab", "junit")
FORMAT_CHOICES = (*TEXT_STYLES, *OTHER_FORMATS)
# The width that long messages wrap at when standard output is not a terminal.
DEFAULT_WIDTH = 100


def normalise_format(args: argparse.Namespace) -> None:
    """``args.format`` becomes ``text`` for every text style, kept in ``args.text_style``."""
    args.text_style = TEXT_STYLES.get(args.format)
    if args.text_style is not None:
        args.format = "text"


def terminal_width() -> int:
    """The terminal's width (``COLUMNS`` first), else :data:`DEFAULT_WIDTH`."""
    return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns


def file_lines(
    sources: Mapping[str, str | None] | None = None,
) -> Callable[[str], Sequence[str] | None]:
    """The lines of a file by its path, read once (``sources``: texts already in
    memory, such as standard input, None for one that could not be decoded); None
    for standard input and for a file that cannot be read or decoded."""
    known: dict[str, Sequence[str] | None] = {
        path: None if text is None else _split(text) for path, text in (sources or {}).items()
    }

    def lines_of(path: str) -> Sequence[str] | None:
        if path not in known:
            known[path] = None if path == "-" else _read(path)
        return known[path]

    return lines_of


def _read(path: str) -> Sequence[str] | None:
    try:
        return _split(decode_source(Path(path).read_bytes()))
    except (OSError, SourceError) as exc:
        logger.debug("no code frame for %s: %s", path, exc)
        return None


def _split(text: str) -> list[str]:
    """Lines as the parser numbers them: ``\\n``, ``\\r\\n`` and ``\\r`` end a line
    (not the form feeds and separators that :meth:`str.splitlines` also splits at)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def use_color(args: argparse.Namespace, out: TextIO) -> bool:
    """``--color``: ``auto`` colours a terminal unless NO_COLOR is set or TERM is dumb."""
    choice = getattr(args, "color", "never")
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(out, "isatty", None)
    return bool(isatty and isatty())


def write_findings(
    args: argparse.Namespace,
    result: LintResult,
    out: TextIO,
    sources: Mapping[str, str | None] | None = None,
) -> None:
    """The findings in ``args.format``; ``sources``: texts of files not to read from
    disk (standard input), for the code frames."""
    if args.format == "json":
        out.write(format_json(result.findings))
    elif args.format == "sarif":
        from ranklint.rules import all_rules

        out.write(format_sarif(result.findings, all_rules()))
    elif args.format == "github":
        out.write(format_github(result.findings))
    elif args.format == "json-lines":
        out.write(format_json_lines(result.findings))
    elif args.format == "gitlab":
        out.write(format_gitlab(result.findings))
    elif args.format == "junit":
        out.write(format_junit(result.findings, result.files_checked))
    elif args.statistics:
        out.write(format_statistics(result.findings))
    elif getattr(args, "text_style", "full") == "concise":
        out.write(
            format_text(result.findings, color=use_color(args, out), evidence=args.show_evidence)
        )
    else:
        out.write(
            format_full(
                result.findings,
                file_lines(sources),
                width=terminal_width(),
                color=use_color(args, out),
                evidence=args.show_evidence,
            )
        )
    out.flush()


def report_and_exit_code(
    args: argparse.Namespace, result: LintResult, err: TextIO, *, fixed: int = 0
) -> int:
    """Report the errors and the summary; the exit code (``fixed``: findings fixed,
    for ``--exit-non-zero-on-fix``)."""
    for path in result.missing:
        err.write(f"ranklint: error: {path}: no such file or directory\n")
    for error in result.errors:
        err.write(f"ranklint: error: {error.describe()}\n")
        if args.verbose and error.details:
            err.write(error.details)
    if args.format == "text":
        err.write(summary_line(result) + "\n")
        for note in (fix_hint(result, unsafe=getattr(args, "unsafe_fixes", False)), hidden(result)):
            if note:
                err.write(note + "\n")
    if result.errors or result.missing:
        return EXIT_ERROR
    if result.findings and not args.exit_zero:
        return EXIT_FINDINGS
    if fixed and getattr(args, "exit_non_zero_on_fix", False):
        return EXIT_FINDINGS
    return EXIT_OK
