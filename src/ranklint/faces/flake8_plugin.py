"""flake8 face: ``flake8 --select RNK``. Reuses the engine on the lines flake8 reads."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator, Sequence
from pathlib import Path

from ranklint import __version__
from ranklint.api import lint_source
from ranklint.config import Config, load_config


def _config() -> Config:
    # Per-file ignores and excludes are flake8's business under flake8; the
    # rule selection from [tool.ranklint] still applies.
    return _config_in(Path.cwd())


@functools.cache
def _config_in(cwd: Path) -> Config:
    # One load per working directory: flake8 run in-process from another
    # directory (an editor, a test) finds that directory's configuration.
    return load_config(cwd=cwd)


class RanklintFlake8Plugin:
    """flake8 builds one per file; columns are 0-based, as flake8 expects.

    The work happens in ``__init__``: flake8 reports exceptions raised there
    (a bad ``[tool.ranklint]``, an internal error) as one clean "critical
    error" line naming the plugin and file, not as a traceback.
    """

    name = "ranklint"
    version = __version__

    def __init__(self, tree: ast.AST, filename: str, lines: Sequence[str]) -> None:
        result = lint_source("".join(lines), filename, _config(), partial=True)
        if result.errors:
            raise RuntimeError("; ".join(error.describe() for error in result.errors))
        self._findings = result.findings

    def run(self) -> Iterator[tuple[int, int, str, type[RanklintFlake8Plugin]]]:
        for finding in self._findings:
            yield finding.line, finding.col - 1, f"{finding.code} {finding.message}", type(self)
