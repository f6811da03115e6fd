"""Where a finding is, as a user reads it: ``path:line:col``, or in a Jupyter
notebook ``path:cell N:line:col`` (the code cell's number, the line in that cell).

Findings keep the line of the Python the rules read (a notebook's code cells
joined, :mod:`ranklint.notebook`); the output formats ask here for the cell.
Each notebook is read once per content (keyed by its size and change time).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

from ranklint.notebook import Notebook, NotebookError, is_notebook, read_notebook

logger = logging.getLogger(__name__)

_READ: dict[str, tuple[tuple[int, int], Notebook | None]] = {}


@dataclass(frozen=True)
class Place:
    """A line as shown: ``cell`` is the code cell's number (``None`` outside notebooks)."""

    cell: int | None
    line: int


def notebook_of(path: str) -> Notebook | None:
    """The notebook at ``path`` (``None`` for other files and unreadable ones)."""
    if not is_notebook(path):
        return None
    try:
        stat = os.stat(path)
    except OSError:
        return None
    key = (stat.st_size, stat.st_mtime_ns)
    known = _READ.get(path)
    if known is not None and known[0] == key:
        return known[1]
    try:
        with open(path, "rb") as handle:
            notebook: Notebook | None = read_notebook(handle.read())
    except (OSError, NotebookError) as error:
        logger.debug("no cells for %s: %s", path, error)
        notebook = None
    _READ[path] = (key, notebook)
    return notebook


def place(path: str, line: int) -> Place:
    """``line`` of ``path``'s Python as shown: in its cell for a notebook."""
    notebook = notebook_of(path)
    if notebook is None:
        return Place(None, line)
    where = notebook.place(line)
    return Place(None, line) if where is None else Place(*where)


def location(path: str, line: int, col: int) -> str:
    """``path:line:col``, or ``path:cell N:line:col`` in a notebook."""
    where = place(path, line)
    if where.cell is None:
        return f"{path}:{line}:{col}"
    return f"{path}:cell {where.cell}:{where.line}:{col}"


def cell_lines(path: str, line: int) -> tuple[list[str], int] | None:
    """The Python lines of the notebook cell holding ``line``, and the line number
    of the cell's first line in the joined text (``None`` outside notebooks)."""
    notebook = notebook_of(path)
    if notebook is None:
        return None
    cell = notebook.cell_at(line)
    if cell is None:
        return None
    return "".join(cell.lines).splitlines(), cell.first_line
