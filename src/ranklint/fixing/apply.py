"""``ranklint check --fix`` / ``--diff``: apply the findings' fixes to their files.

Fixes are applied in rounds: the ones of a round never overlap; after each
round the file is linted again and the fixes of what is still found are
applied, until nothing changes (or :data:`MAX_ROUNDS`). A fixed source is kept
only if it parses; a file is written only if it still holds what was linted,
atomically, with its encoding, BOM and line endings.
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ranklint.config import Config
from ranklint.faces.files import replace_file
from ranklint.findings import Finding
from ranklint.fixing.edits import apply_fixes

logger = logging.getLogger(__name__)

# Enough for fixes that wait for an overlapping one (several codes in one
# comment); a fix that keeps producing new fixes stops here.
MAX_ROUNDS = 10


@dataclass
class FixedSource:
    """One file's text before and after its fixes, and the findings fixed."""

    path: str
    before: str
    after: str
    fixed: list[Finding]
    # How to write ``after`` back: the bytes read, and what turns a text into bytes
    # (its encoding, or a notebook's JSON).
    raw: bytes = b""
    encode: Callable[[str], bytes] = field(default=lambda text: text.encode("utf-8"))

    def diff(self) -> str:
        """A unified diff from ``before`` to ``after`` that ``patch -p0`` applies: lines
        split at ``\\n`` only (as ``patch`` reads them), and a last line without a line
        end marked ``\\ No newline at end of file``."""
        lines = difflib.unified_diff(
            _patch_lines(self.before),
            _patch_lines(self.after),
            fromfile=self.path,
            tofile=self.path,
        )
        return "".join(
            line if line.endswith("\n") else f"{line}\n\\ No newline at end of file\n"
            for line in lines
        )


def _patch_lines(text: str) -> list[str]:
    """``text``'s lines with their ends, split at ``\\n`` (a ``\\r\\n`` end stays whole;
    form feeds and other separators that :meth:`str.splitlines` splits at do not split)."""
    parts = text.split("\n")
    return [f"{part}\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


@dataclass
class FixReport:
    """What a fixing run did or would do."""

    sources: list[FixedSource] = field(default_factory=list)
    # Files left alone, with why (unreadable, changed on disk, the fixed text would not parse).
    refused: list[tuple[str, str]] = field(default_factory=list)

    @property
    def fixed(self) -> int:
        return sum(len(source.fixed) for source in self.sources)


def fix_text(
    text: str,
    findings: Sequence[Finding],
    relint: Callable[[str], Sequence[Finding]],
    *,
    unsafe: bool,
) -> tuple[str, list[Finding]]:
    """``text`` with the applicable fixes of ``findings`` applied, round by round
    (``relint`` gives the findings of a fixed text); and the findings fixed."""
    fixed: list[Finding] = []
    for _ in range(MAX_ROUNDS):
        fixable = [finding for finding in findings if finding.fixable(unsafe=unsafe)]
        if not fixable:
            break
        new_text, done = apply_fixes(text, [finding.fix for finding in fixable if finding.fix])
        if new_text == text:
            break
        edits = {fix.edits for fix in done}
        fixed += [f for f in fixable if f.fix is not None and f.fix.edits in edits]
        text = new_text
        findings = relint(text)
    return text, fixed


def plan_fixes(findings: Sequence[Finding], config: Config, *, unsafe: bool) -> FixReport:
    """The fixed text of every file with an applicable fix; nothing is written."""
    from ranklint.engine import Linter
    from ranklint.source import SourceError, editable_text, parse_source

    linter = Linter(config)
    by_path: dict[str, list[Finding]] = {}
    for finding in findings:
        by_path.setdefault(finding.path, []).append(finding)
    report = FixReport()
    for path, found in sorted(by_path.items()):
        if not any(finding.fixable(unsafe=unsafe) for finding in found):
            continue
        try:
            raw = Path(path).read_bytes()
            before, encode = editable_text(path, raw)
        except (OSError, SyntaxError, ValueError, LookupError) as exc:
            report.refused.append((path, f"cannot read it: {exc}"))
            continue

        def relint(text: str, path: str = path) -> list[Finding]:
            # Only findings the run reports are fixed, round after round.
            return [f for f in linter.lint_source(text, path).findings if config.reports(f)]

        after, fixed = fix_text(before, found, relint, unsafe=unsafe)
        if after == before:
            continue
        try:
            parse_source(after)
        except SourceError as exc:
            # A bug in a fix; the file is left as it is.
            report.refused.append((path, f"the fixed source would not parse: {exc.message}"))
            continue
        report.sources.append(FixedSource(path, before, after, fixed, raw, encode))
    return report


def write_fixes(report: FixReport) -> None:
    """Write each fixed source over its file, unless the file changed since it was read."""
    written = []
    for source in report.sources:
        file = Path(source.path)
        try:
            if file.read_bytes() != source.raw:
                report.refused.append((source.path, "it changed on disk since it was checked"))
                continue
            # "utf-8-sig" writes the BOM back; line endings are the text's own.
            replace_file(file, source.encode(source.after))
        except OSError as exc:
            report.refused.append((source.path, f"cannot write it: {exc.strerror}"))
            continue
        written.append(source)
    report.sources = written
