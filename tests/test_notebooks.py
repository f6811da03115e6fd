"""A notebook named on the command line is skipped with a note, never parsed as Python."""

from __future__ import annotations

from pathlib import Path

from ranklint.config import Config
from ranklint.discovery import NOTEBOOK_NOTE, discover
from tests.conftest import write

# Valid Python too (a dict display): it must still not be checked as Python.
NOTEBOOK = '{"cells": [], "metadata": {}, "nbformat": 4}\n'


def test_discover_skips_a_named_notebook_with_the_reason(tmp_path: Path) -> None:
    notebook = write(tmp_path / "nb.ipynb", NOTEBOOK)

    found = discover([str(notebook)], Config(root=tmp_path))

    assert found.files == []
    assert found.skipped == [(str(notebook), NOTEBOOK_NOTE)]


def test_cli_warns_about_a_named_notebook_and_checks_the_rest(run_cli, tmp_path: Path) -> None:
    notebook = write(tmp_path / "nb.ipynb", NOTEBOOK)
    script = write(tmp_path / "a.py", "x = 1\n")

    result = run_cli("check", str(notebook), str(script), "--no-cache")

    assert result.code == 0
    assert f"warning: {notebook}: skipped: Jupyter notebooks are not checked" in result.err
    assert "All checks passed (1 file checked)" in result.err
    assert "no Python files" not in result.err
