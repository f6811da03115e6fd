"""flake8 face: ``flake8 --select RNK``. Reuses the engine on the lines flake8 reads."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator, Sequence

from ranklint import __version__
from ranklint.api import lint_source
from ranklint.config import Config, load_config


@functools.cache
def _config() -> Config:
    # Per-file ignores and excludes are flake8's business under flake8; the
    # rule selection from [tool.ranklint] still applies.
    return load_config()


class RanklintFlake8Plugin:
    """flake8 calls ``run`` once per file. Columns are 0-based, as flake8 expects."""

    name = "ranklint"
    version = __version__

    def __init__(self, tree: ast.AST, filename: str, lines: Sequence[str]) -> None:
        self._filename = filename
        self._lines = lines

    def run(self) -> Iterator[tuple[int, int, str, type[RanklintFlake8Plugin]]]:
        result = lint_source("".join(self._lines), self._filename, _config())
        if result.errors:
            raise RuntimeError("; ".join(error.describe() for error in result.errors))
        for finding in result.findings:
            yield finding.line, finding.col - 1, f"{finding.code} {finding.message}", type(self)
