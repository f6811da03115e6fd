"""Where a finding is shown: ``path:line:col``, or a notebook's cell (ranklint.places)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ranklint import places
from ranklint.places import Place, cell_lines, location, notebook_of, place


def _notebook(path: Path, *sources: str) -> Path:
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "source": s} for s in sources]
    data = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return path


def test_python_file_keeps_its_line_and_has_no_cell(tmp_path: Path) -> None:
    script = tmp_path / "a.py"
    script.write_text("x = 1\n", encoding="utf-8")

    assert place(str(script), 7) == Place(None, 7)
    assert location(str(script), 7, 3) == f"{script}:7:3"
    assert cell_lines(str(script), 1) is None


def test_notebook_line_is_shown_as_its_cell_and_line_in_it(tmp_path: Path) -> None:
    notebook = str(_notebook(tmp_path / "nb.ipynb", "a = 1\nb = 2\n", "c = 3  \n"))

    assert place(notebook, 3) == Place(2, 1)
    assert location(notebook, 2, 5) == f"{notebook}:cell 1:2:5"
    assert cell_lines(notebook, 3) == (["c = 3  "], 3)
    assert cell_lines(notebook, 1) == (["a = 1", "b = 2"], 1)


def test_notebook_line_past_its_cells_keeps_the_line(tmp_path: Path) -> None:
    notebook = str(_notebook(tmp_path / "nb.ipynb", "a = 1\n"))

    assert place(notebook, 9) == Place(None, 9)
    assert cell_lines(notebook, 9) is None


def test_unreadable_or_missing_notebook_has_no_cells(tmp_path: Path) -> None:
    bad = tmp_path / "bad.ipynb"
    bad.write_text("{nope", encoding="utf-8")

    assert notebook_of(str(bad)) is None
    assert notebook_of(str(tmp_path / "gone.ipynb")) is None
    assert place(str(bad), 1) == Place(None, 1)


def test_notebook_is_read_once_and_again_after_it_changes(tmp_path: Path) -> None:
    path = _notebook(tmp_path / "nb.ipynb", "a = 1\n")
    first = notebook_of(str(path))

    assert notebook_of(str(path)) is first
    _notebook(path, "a = 1\n", "b = 22\n")
    os.utime(path, ns=(1, 1))
    second = notebook_of(str(path))

    assert second is not first
    assert second is not None
    assert second.text == "a = 1\nb = 22\n"
    assert places._READ[str(path)][1] is second
