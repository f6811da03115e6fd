"""Jupyter notebooks as Python: code cells joined in order, IPython lines left out.

A leaf: JSON and text only. :func:`read_notebook` turns a notebook's bytes into
the Python the rules read (every code cell, in order, each ending in a
newline) and a :class:`Notebook` that maps a line of that text back to its
cell, and writes an edited text back into the notebook's JSON.

IPython syntax is not Python: a line magic (``%time f()``), a shell line
(``!pip install x``, ``files = !ls``), a help line (``model?``) and a cell
magic's cell (``%%bash``) are replaced, line for line, by ``pass`` (at the
line's indentation), so every other line keeps its number and the rules never
see them. ``%%time``-like cell magics whose body is Python keep that body.
Writing back restores each replaced line, so fixes and ``--add-noqa`` change
only what they edit; the notebook's other fields (outputs, metadata, the
execution counts) and its JSON layout (indent, key order, a trailing
newline) are kept.
"""

from __future__ import annotations

import difflib
import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any

logger = logging.getLogger(__name__)

NOTEBOOK_SUFFIX = ".ipynb"
#: What replaces an IPython line in the Python text (at its indentation).
PLACEHOLDER = "pass  # ipython"
#: Cell magics whose body is Python: the body is checked, the magic line replaced.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug", "pypy", "python"})
_SHELL_ASSIGNMENT = re.compile(r"^\s*[\w.,\s\[\]()*]+=\s*[!%]")
_HELP = re.compile(r"^\s*[\w.\[\]()]*\?{1,2}\s*$|^\s*\?{1,2}[\w.]+\s*$")


class NotebookError(ValueError):
    """The bytes are not a notebook ranklint can read."""


def is_notebook(path: str) -> bool:
    """Whether ``path`` names a Jupyter notebook (by its suffix)."""
    return path.lower().endswith(NOTEBOOK_SUFFIX)


@dataclass
class _Cell:
    index: int  # the cell's position among all the notebook's cells (0-based)
    number: int  # its position among the code cells (1-based), as shown to users
    first_line: int  # the 1-based line of the Python text where it starts
    lines: list[str]  # the Python lines, each ending in a newline
    replaced: list[tuple[int, str]] = field(default_factory=list)  # (line in cell, original)
    source_was_list: bool = True
    ends_with_newline: bool = False


@dataclass
class Notebook:
    """A notebook read as Python: its text and the way back to its cells."""

    data: dict[str, Any]
    text: str
    cells: list[_Cell]
    indent: int | None
    trailing_newline: bool
    ensure_ascii: bool

    def cell_at(self, line: int) -> _Cell | None:
        """The code cell that holds a 1-based line of :attr:`text` (``None`` past them)."""
        for cell in self.cells:
            if cell.first_line <= line < cell.first_line + len(cell.lines):
                return cell
        return None

    def place(self, line: int) -> tuple[int, int] | None:
        """``(code cell number, line in that cell)`` of a 1-based line of :attr:`text`."""
        cell = self.cell_at(line)
        return None if cell is None else (cell.number, line - cell.first_line + 1)

    def write(self, text: str) -> bytes:
        """The notebook's bytes with the code cells taken from an edited ``text``.

        The edited lines are aligned with the old ones (:mod:`difflib`): a kept
        or replaced line stays in its cell, an inserted line joins the cell of
        the line it was inserted before (the last cell at the end).
        """
        old = [line for cell in self.cells for line in cell.lines]
        owner = [position for position, cell in enumerate(self.cells) for _ in cell.lines]
        new = text.splitlines(keepends=True)
        per_cell: list[list[str]] = [[] for _ in self.cells]
        # No junk heuristic, so frequent lines (`pass`, blank ones) align too. (Not
        # mutated: with it, a run of junk lines is replaced one for one, which puts
        # each line in the same cell.)
        matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)  # pragma: no mutate
        for _tag, i1, i2, j1, j2 in matcher.get_opcodes():
            for offset, line in enumerate(new[j1:j2]):
                if i1 + offset < i2:
                    per_cell[owner[i1 + offset]].append(line)
                elif i2 > i1:  # more new lines than old: the last old line's cell
                    per_cell[owner[i2 - 1]].append(line)
                else:  # an insertion: the cell of the line after it
                    per_cell[owner[i1] if i1 < len(owner) else len(self.cells) - 1].append(line)
        cells = self.data["cells"]
        # Equal lengths by construction (pragma: strict changes nothing).
        for cell, lines in zip(self.cells, per_cell, strict=True):  # pragma: no mutate
            cells[cell.index]["source"] = _cell_source(cell, _restore(cell, lines))
        dumped = json.dumps(self.data, indent=self.indent, ensure_ascii=self.ensure_ascii)
        ending = "\n" if self.trailing_newline else ""
        return (dumped + ending).encode("utf-8")  # pragma: no mutate  (codec names ignore case)


def _restore(cell: _Cell, lines: list[str]) -> list[str]:
    """``lines`` with each placeholder line given back its IPython original, in order."""
    originals = [original for _, original in cell.replaced]
    restored = []
    for line in lines:
        if originals and line.strip() == PLACEHOLDER:
            restored.append(originals.pop(0))
        else:
            restored.append(line)
    return restored


def _cell_source(cell: _Cell, lines: list[str]) -> list[str] | str:
    """The JSON ``source`` field for ``lines``, in the shape the notebook had."""
    if lines and not cell.ends_with_newline:
        lines[-1] = lines[-1].removesuffix("\n")
    return lines if cell.source_was_list else "".join(lines)


def read_notebook(data: bytes) -> Notebook:
    """Read a notebook's bytes; raises :class:`NotebookError` when they are not one."""
    try:
        raw = data.decode("utf-8-sig")  # pragma: no mutate  (codec names ignore case)
        parsed = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise NotebookError(f"not a Jupyter notebook (invalid JSON: {error})") from None
    if not isinstance(parsed, dict) or not isinstance(parsed.get("cells"), list):
        raise NotebookError("not a Jupyter notebook (no list of cells)")
    language = _other_language(parsed)
    if language is not None:
        raise NotebookError(f"a {language} notebook, not Python")
    cells: list[_Cell] = []
    line = 1
    for index, cell in enumerate(parsed["cells"]):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source")
        text = "".join(source) if isinstance(source, list) else source
        text = text if isinstance(text, str) else ""
        lines = text.splitlines(keepends=True)
        ends = text.endswith("\n")
        if lines and not ends:
            lines[-1] += "\n"
        replaced: list[tuple[int, str]] = []
        python = _python_lines(lines, replaced)
        is_list = isinstance(source, list)
        cells.append(_Cell(index, len(cells) + 1, line, python, replaced, is_list, ends))
        line += len(python)
    return Notebook(
        data=parsed,
        text="".join(line for cell in cells for line in cell.lines),
        cells=cells,
        indent=_indent(raw),
        trailing_newline=raw.endswith("\n"),
        ensure_ascii=raw.isascii() and "\\u" in raw,
    )


def _other_language(notebook: dict[str, Any]) -> str | None:
    """The notebook's language when its metadata names one that is not Python."""
    metadata = notebook.get("metadata")
    if not isinstance(metadata, dict):
        return None
    info = metadata.get("language_info")
    if not isinstance(info, dict):
        info = metadata.get("kernelspec")
    if not isinstance(info, dict):
        return None
    name = str(info.get("language") or info.get("name") or "python").lower()  # pragma: no mutate
    return None if name.startswith("python") else name


def _indent(raw: str) -> int | None:
    """The notebook's JSON indent (nbformat writes 1), ``None`` when on one line."""
    match = re.search(r"\n( +)\"", raw)
    return len(match.group(1)) if match else None


def _python_lines(lines: list[str], replaced: list[tuple[int, str]]) -> list[str]:
    """The cell's lines with IPython lines replaced; records what it replaced."""
    # A cell magic is the cell's first line; unless its body is Python, so is the cell.
    whole_cell = bool(lines) and lines[0].startswith("%%")
    whole_cell = whole_cell and _magic_name(lines[0]) not in PYTHON_CELL_MAGICS
    result = []
    continued = False  # pragma: no mutate  (None is as false)
    for number, line in enumerate(lines):
        ipython = whole_cell or continued or _is_ipython(line)
        continued = ipython and line.rstrip("\r\n").endswith("\\")
        if ipython:
            # A whole cell's lines stand at the top level, whatever their indentation.
            indent = "" if whole_cell else line[: len(line) - len(line.lstrip())]
            replaced.append((number, line))
            result.append(f"{indent}{PLACEHOLDER}\n")
        else:
            result.append(line)
    return result


def _magic_name(line: str) -> str:
    """``bash`` for ``%%bash -s x``."""
    words = line[2:].split()
    return words[0] if words else ""  # pragma: no mutate  (no name is no Python magic either)


def _is_ipython(line: str) -> bool:
    if line.lstrip().startswith(("%", "!")):
        return True
    return bool(_SHELL_ASSIGNMENT.match(line) or _HELP.match(line))
