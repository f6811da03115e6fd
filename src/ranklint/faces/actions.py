"""What ``ranklint check`` does to files besides reporting: ``--fix``, ``--diff``,
``--add-noqa`` and the baseline options. Each writes its messages to ``err``."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import TextIO

from ranklint.api import LintResult
from ranklint.config import Config
from ranklint.faces.exits import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK
from ranklint.faces.files import replace_file


def fix(args: argparse.Namespace, result: LintResult, config: Config, err: TextIO) -> int:
    """Apply the fixes; the number of findings fixed, or -1 after an error was reported."""
    from ranklint.fixing.apply import plan_fixes, write_fixes

    report = plan_fixes(result.findings, config, unsafe=args.unsafe_fixes)
    write_fixes(report)
    _refused(report.refused, "not fixed", err)
    if args.show_fixes:
        for source in report.sources:
            for finding in source.fixed:
                message = finding.fix.message if finding.fix is not None else ""
                err.write(
                    f"fixed {finding.path}:{finding.line}:{finding.col}: {finding.code} {message}\n"
                )
    if report.fixed:
        err.write(f"ranklint: fixed {_in_files(report.fixed, len(report.sources))}\n")
    return -1 if report.refused else report.fixed


def diff(
    args: argparse.Namespace, result: LintResult, config: Config, out: TextIO, err: TextIO
) -> int:
    """``--diff``: print what --fix would change; exit 1 when it would change something."""
    from ranklint.fixing.apply import plan_fixes

    report = plan_fixes(result.findings, config, unsafe=args.unsafe_fixes)
    for source in report.sources:
        out.write(source.diff())
    out.flush()
    _refused(report.refused, "not fixed", err)
    err.write(f"ranklint: would fix {_in_files(report.fixed, len(report.sources))}\n")
    if report.refused or result.errors or result.missing:
        return EXIT_ERROR
    return EXIT_FINDINGS if report.sources else EXIT_OK


def add_noqa(result: LintResult, err: TextIO) -> int:
    from ranklint.faces.noqa import add_noqa

    report = add_noqa(result.findings)
    added = _plural(report.added, "noqa comment")
    err.write(f"ranklint: added {added} to {_plural(len(report.files), 'file')}\n")
    for finding in report.unplaced:
        err.write(
            f"ranklint: warning: {finding.path}:{finding.line}: {finding.code} not suppressed: "
            "no line of it can end in a comment (a string or a backslash continuation)\n"
        )
    _refused(report.refused, "not edited", err)
    failed = report.refused or result.errors or result.missing
    return EXIT_ERROR if failed else EXIT_OK


def apply_baseline(args: argparse.Namespace, result: LintResult, err: TextIO) -> LintResult | None:
    """Write, or filter through, the baseline; ``None`` after an error was reported."""
    from ranklint.faces import baseline

    file = Path(args.baseline)
    folder = file.absolute().parent
    try:
        if args.write_baseline:
            replace_file(file, baseline.render(result.findings, folder).encode("utf-8"))
            err.write(f"ranklint: recorded {_plural(len(result.findings), 'finding')} in {file}\n")
            return result
        recorded = baseline.load(file)
        comparison = baseline.compare(result.findings, recorded, folder)
        if comparison.known:
            err.write(
                f"ranklint: {_plural(comparison.known, 'finding')} recorded in {file} not shown\n"
            )
        stale = sum(comparison.stale.values())
        moved = sum(comparison.moved.values())
        if (stale or moved) and args.baseline_prune:
            text = baseline.pruned(recorded, comparison.stale, comparison.moved)
            replace_file(file, text.encode("utf-8"))
            done = [f"pruned {_plural(stale, 'stale record')}"] if stale else []
            if moved:
                done.append(f"moved {_plural(moved, 'record')} to the new paths of their files")
            err.write(f"ranklint: {'; '.join(done)}\n")
        elif stale:
            err.write(
                f"ranklint: warning: {_plural(stale, 'record')} of {file} no "
                "longer match a finding (fixed, or the code changed); --baseline-prune "
                "drops them\n"
            )
        if moved and not args.baseline_prune:
            err.write(
                f"ranklint: {_plural(moved, 'finding')} matched records of files that moved; "
                "--baseline-prune records their new paths\n"
            )
    except baseline.BaselineError as exc:
        err.write(f"ranklint: error: {exc}\n")
        return None
    except OSError as exc:
        err.write(f"ranklint: error: cannot write {file}: {exc.strerror}\n")
        return None
    return dataclasses.replace(result, findings=comparison.new)


def _plural(count: int, noun: str) -> str:
    """``1 file``, ``2 files``."""
    return f"{count} {noun}{'s' if count != 1 else ''}"


def _in_files(findings: int, files: int) -> str:
    return f"{_plural(findings, 'finding')} in {_plural(files, 'file')}"


def _refused(refused: list[tuple[str, str]], what: str, err: TextIO) -> None:
    """One error line per file left alone, with why."""
    for path, reason in refused:
        err.write(f"ranklint: error: {path}: {what}: {reason}\n")
