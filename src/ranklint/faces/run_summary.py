"""The lines a text run ends with: the summary, the fix hint, the hidden findings."""

from __future__ import annotations

from ranklint.api import LintResult
from ranklint.findings import Severity


def fix_hint(result: LintResult, *, unsafe: bool) -> str:
    """How many findings ``--fix`` would fix (and ``--unsafe-fixes`` more); "" for none."""
    fixable = sum(finding.fixable(unsafe=unsafe) for finding in result.findings)
    hidden = sum(finding.fix is not None for finding in result.findings) - fixable
    parts = []
    if fixable:
        parts.append(f"{fixable} fixable with `ranklint check --fix`")
    if hidden:
        parts.append(f"{hidden} more with `--unsafe-fixes`")
    return f"[*] {'; '.join(parts)}." if parts else ""


def summary_line(result: LintResult) -> str:
    """The last line of a text run: how many findings of which severity, in how many files."""
    files = f"{result.files_checked} file{'s' if result.files_checked != 1 else ''} checked"
    if not result.findings and (result.errors or result.missing):
        return f"No findings, but the run was incomplete ({files}); see the errors above."
    if not result.findings:
        return f"All checks passed ({files})."
    by_severity = {s: sum(f.severity is s for f in result.findings) for s in Severity}
    detail = ", ".join(f"{n} {s.value}{'s' if n != 1 else ''}" for s, n in by_severity.items() if n)
    affected = len({f.path for f in result.findings})
    total = len(result.findings)
    return (
        f"Found {total} finding{'s' if total != 1 else ''} ({detail}) in {affected} "
        f"file{'s' if affected != 1 else ''} ({files})."
    )


def hidden(result: LintResult) -> str:
    """How many findings of lower confidence the run left out; "" for none."""
    count = result.below_confidence
    if not count:
        return ""
    return (
        f"{count} finding{'s' if count != 1 else ''} of lower confidence not shown "
        f"(`--confidence medium` or `low` shows them)."
    )
