"""flake8 face: ``flake8 --select RNK``. Reuses the engine on the lines flake8 reads."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ranklint import __version__
from ranklint.api import lint_source
from ranklint.config import Config, load_config


def _config(filename: str) -> Config:
    # The file's nearest configuration, as `ranklint check` uses. Every key
    # applies (the selection, per-file-ignores, the analysis settings) except
    # those that choose files (exclude, extend-exclude, respect-gitignore):
    # flake8 decides which files it reads.
    folder = Path(filename).absolute().parent
    return _config_in(folder if folder.is_dir() else Path.cwd())


@functools.cache
def _config_in(folder: Path) -> Config:
    # One load per folder: flake8 run in-process from another directory (an
    # editor, a test) finds the files' own configuration.
    return load_config(cwd=folder)


def _covers_rnk(code: str) -> bool:
    """Whether a flake8 selector (``RNK``, ``R``, ``RNK1``, ``ALL``) can select RNK codes."""
    code = code.strip().upper()
    return code == "ALL" or "RNK".startswith(code) or code.startswith("RNK")


class RanklintFlake8Plugin:
    """flake8 builds one per file; columns are 0-based, as flake8 expects.

    The work happens in ``__init__``: flake8 reports exceptions raised there
    (a bad ``[tool.ranklint]``, an internal error) as one clean "critical
    error" line naming the plugin and file, not as a traceback.
    """

    name = "ranklint"
    version = __version__
    # Whether flake8's selection can report RNK codes (set by parse_options).
    selected = True

    @classmethod
    def parse_options(cls, options: Any) -> None:
        """flake8's options: with a selection that leaves RNK out, do nothing at all,
        so that a broken ``[tool.ranklint]`` does not fail ``flake8 --select E``."""
        chosen = [*(options.select or ()), *(getattr(options, "extend_select", None) or ())]
        cls.selected = options.select is None or any(_covers_rnk(code) for code in chosen)

    def __init__(self, tree: ast.AST, filename: str, lines: Sequence[str]) -> None:
        if not type(self).selected:
            self._findings = []
            return
        result = lint_source("".join(lines), filename, _config(filename), partial=True)
        if result.errors:
            raise RuntimeError("; ".join(error.describe() for error in result.errors))
        self._findings = result.findings

    def run(self) -> Iterator[tuple[int, int, str, type[RanklintFlake8Plugin]]]:
        for finding in self._findings:
            yield finding.line, finding.col - 1, f"{finding.code} {finding.message}", type(self)
