"""The one entry point of every face: :func:`lint_source` and :func:`lint_paths`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ranklint.config import Config
from ranklint.discovery import discover
from ranklint.engine import FileResult, Linter, lint_files
from ranklint.findings import Finding, InternalError


@dataclass
class LintResult:
    """Everything a run found, in deterministic order."""

    findings: list[Finding] = field(default_factory=list)
    errors: list[InternalError] = field(default_factory=list)
    files_checked: int = 0
    # Paths given by the user that do not exist.
    missing: list[str] = field(default_factory=list)

    @classmethod
    def merge(cls, results: Sequence[FileResult], missing: Sequence[str] = ()) -> LintResult:
        findings = sorted((f for r in results for f in r.findings), key=Finding.sort_key)
        errors = [e for r in results for e in r.errors]
        return cls(findings, errors, len(results), list(missing))


def lint_source(
    source: str | bytes, path: str | Path = "<string>", config: Config | None = None
) -> LintResult:
    """Lint one file's contents. ``bytes`` are decoded per PEP 263."""
    linter = Linter(config if config is not None else Config())
    results = [linter.lint_source(source, str(path))]
    linter.project_phase(results, {str(path): source})
    return LintResult.merge(results)


def lint_paths(
    paths: Sequence[str | Path],
    config: Config | None = None,
    *,
    jobs: int | None = None,
    force_exclude: bool = False,
) -> LintResult:
    """Discover and lint files under ``paths``; ``jobs`` processes (default: CPU count)."""
    config = config if config is not None else Config()
    found = discover([str(p) for p in paths], config, force_exclude=force_exclude)
    results = lint_files(found.files, config, jobs=jobs)
    Linter(config).project_phase(results)
    return LintResult.merge(results, found.missing)
