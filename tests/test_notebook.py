"""Jupyter notebooks read as Python and written back (ranklint.notebook)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ranklint.notebook import PLACEHOLDER, NotebookError, is_notebook, read_notebook


def _notebook(*cells: Any, indent: int = 1, language: str = "python") -> bytes:
    """nbformat 4 bytes with the given cells: a string or a list of lines is a code
    cell's source, a ``("markdown", text)`` tuple another kind of cell."""
    built = []
    for cell in cells:
        kind, source = cell if isinstance(cell, tuple) else ("code", cell)
        entry: dict[str, Any] = {"cell_type": kind, "metadata": {}, "source": source}
        if kind == "code":
            entry.update(execution_count=3, outputs=[{"output_type": "stream", "text": ["hi\n"]}])
        built.append(entry)
    data = {
        "cells": built,
        "metadata": {"language_info": {"name": language}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return (json.dumps(data, indent=indent, ensure_ascii=False) + "\n").encode()


def _lines(source: str) -> list[str]:
    """A cell source as nbformat stores it: a list of lines, the last without newline."""
    return source.splitlines(keepends=True)


def test_code_cells_are_joined_in_order_and_markdown_is_left_out() -> None:
    data = _notebook(_lines("import torch\nx = 1"), ("markdown", ["# Title"]), _lines("y = x"))

    notebook = read_notebook(data)

    assert notebook.text == "import torch\nx = 1\ny = x\n"
    assert [notebook.place(line) for line in (1, 2, 3)] == [(1, 1), (1, 2), (2, 1)]


@pytest.mark.parametrize(
    "line",
    ["%matplotlib inline", "!pip install torch", "files = !ls", "model?", "??model", "%time f()"],
)
def test_ipython_line_is_replaced_by_pass_and_keeps_the_line_count(line: str) -> None:
    notebook = read_notebook(_notebook(_lines(f"a = 1\n{line}\nb = 2")))

    assert notebook.text == f"a = 1\n{PLACEHOLDER}\nb = 2\n"


def test_indented_magic_keeps_its_indentation_so_the_block_still_parses() -> None:
    notebook = read_notebook(_notebook(_lines("for i in range(2):\n    !echo $i")))

    assert notebook.text == f"for i in range(2):\n    {PLACEHOLDER}\n"
    compile(notebook.text, "nb", "exec")


def test_cell_magic_that_is_not_python_blanks_the_whole_cell() -> None:
    notebook = read_notebook(_notebook(_lines("%%bash\necho hi\nls -l"), _lines("x = 1")))

    assert notebook.text == f"{PLACEHOLDER}\n{PLACEHOLDER}\n{PLACEHOLDER}\nx = 1\n"
    assert notebook.place(4) == (2, 1)


def test_time_cell_magic_keeps_its_python_body() -> None:
    notebook = read_notebook(_notebook(_lines("%%time\nx = f()")))

    assert notebook.text == f"{PLACEHOLDER}\nx = f()\n"


def test_magic_continued_with_a_backslash_replaces_every_continued_line() -> None:
    notebook = read_notebook(_notebook(_lines("!pip install \\\n    torch\nx = 1")))

    assert notebook.text == f"{PLACEHOLDER}\n    {PLACEHOLDER}\nx = 1\n"


def test_python_that_looks_like_ipython_is_kept() -> None:
    source = "a = b % c\nok = x != y\nd = {'q': '?'}\ns = 'a?'"

    notebook = read_notebook(_notebook(_lines(source)))

    assert notebook.text == source + "\n"


def test_write_of_unchanged_text_gives_back_the_same_bytes() -> None:
    data = _notebook(_lines("%matplotlib inline\nimport torch"), ("markdown", "x"), "y = 1\n")

    notebook = read_notebook(data)

    assert notebook.write(notebook.text) == data


def test_write_puts_an_edit_in_its_cell_and_restores_the_magics_and_outputs() -> None:
    data = _notebook(_lines("%matplotlib inline\nx = f()"), _lines("dist.broadcast(t)"))
    notebook = read_notebook(data)

    edited = notebook.text.replace("dist.broadcast(t)", "dist.broadcast(t, src=0)")
    written = json.loads(notebook.write(edited))

    assert written["cells"][0]["source"] == ["%matplotlib inline\n", "x = f()"]
    assert written["cells"][1]["source"] == ["dist.broadcast(t, src=0)"]
    assert written["cells"][1]["outputs"] == [{"output_type": "stream", "text": ["hi\n"]}]
    assert written["cells"][1]["execution_count"] == 3


def test_write_gives_a_line_inserted_before_a_line_to_that_lines_cell() -> None:
    notebook = read_notebook(_notebook(_lines("import os"), _lines("x = 1\ny = 2")))

    edited = notebook.text.replace("y = 2\n", "# noqa added\ny = 2\n")
    written = json.loads(notebook.write(edited))

    assert written["cells"][0]["source"] == ["import os"]
    assert written["cells"][1]["source"] == ["x = 1\n", "# noqa added\n", "y = 2"]


def test_write_keeps_a_source_stored_as_one_string_as_a_string() -> None:
    notebook = read_notebook(_notebook("x = 1\n"))

    written = json.loads(notebook.write("x = 2\n"))

    assert written["cells"][0]["source"] == "x = 2\n"


def test_write_keeps_the_indent_of_the_json() -> None:
    data = _notebook(_lines("x = 1"), indent=2)

    assert read_notebook(data).write("x = 1\n") == data


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"{not json", "invalid JSON"),
        (b'{"cells": 3}', "no list of cells"),
        (_notebook("x <- 1", language="R"), "a r notebook, not Python"),
    ],
)
def test_bytes_that_are_not_a_python_notebook_raise_notebook_error(
    data: bytes, message: str
) -> None:
    with pytest.raises(NotebookError, match=message):
        read_notebook(data)


def test_is_notebook_by_suffix_in_any_case() -> None:
    assert [is_notebook(p) for p in ("a/b.ipynb", "B.IPYNB", "a.py")] == [True, True, False]


def test_code_cell_without_source_or_with_an_empty_one_adds_no_lines() -> None:
    data = json.loads(_notebook([], "x = 1\n"))
    del data["cells"][0]["source"]

    notebook = read_notebook(json.dumps(data).encode())

    assert notebook.text == "x = 1\n"
    assert notebook.place(1) == (2, 1)


def test_line_past_the_code_cells_has_no_place() -> None:
    notebook = read_notebook(_notebook("x = 1\n"))

    assert (notebook.place(1), notebook.place(2)) == ((1, 1), None)


def test_line_on_the_first_line_of_a_later_cell_is_placed_in_that_cell() -> None:
    notebook = read_notebook(_notebook(_lines("a = 1\nb = 2"), _lines("c = 3")))

    assert [notebook.place(line) for line in (2, 3)] == [(1, 2), (2, 1)]


@pytest.mark.parametrize(
    ("metadata", "language"),
    [
        ({"kernelspec": {"language": "julia", "name": "julia-1.9"}}, "julia"),
        ({"language_info": {"name": "R"}, "kernelspec": {"name": "python3"}}, "r"),
        ({"language_info": "python", "kernelspec": {"language": "R"}}, "r"),
    ],
)
def test_notebook_whose_metadata_names_another_language_is_refused(
    metadata: dict[str, Any], language: str
) -> None:
    data = json.loads(_notebook("x = 1\n"))
    data["metadata"] = metadata

    with pytest.raises(NotebookError, match=f"^a {language} notebook, not Python$"):
        read_notebook(json.dumps(data).encode())


@pytest.mark.parametrize(
    "metadata",
    [
        {},
        [],
        {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
        {"language_info": {"name": "Python"}},
        {"language_info": {"version": "3.11"}},
        {"language_info": 3, "kernelspec": 4},
    ],
)
def test_notebook_whose_metadata_names_python_or_nothing_is_read(metadata: object) -> None:
    data = json.loads(_notebook("x = 1\n"))
    data["metadata"] = metadata

    assert read_notebook(json.dumps(data).encode()).text == "x = 1\n"


def test_error_for_a_json_object_without_cells_names_what_is_missing() -> None:
    with pytest.raises(NotebookError, match=r"^not a Jupyter notebook \(no list of cells\)$"):
        read_notebook(b'{"nbformat": 4}')


def test_cell_magic_with_options_keeps_a_python_body_and_blanks_a_shell_one() -> None:
    python = read_notebook(_notebook(_lines("%%capture --no-stdout out\nx = f()")))
    shell = read_notebook(_notebook(_lines("%%bash\n  echo indented\nls")))

    assert python.text == f"{PLACEHOLDER}\nx = f()\n"
    assert shell.text == f"{PLACEHOLDER}\n{PLACEHOLDER}\n{PLACEHOLDER}\n"
    compile(shell.text, "nb", "exec")


def test_bare_cell_magic_marker_blanks_the_cell() -> None:
    assert read_notebook(_notebook(_lines("%%\nls"))).text == f"{PLACEHOLDER}\n{PLACEHOLDER}\n"


def test_backslash_followed_by_spaces_does_not_continue_a_magic() -> None:
    notebook = read_notebook(_notebook(_lines("!echo a \\  \nx = 1")))

    assert notebook.text == f"{PLACEHOLDER}\nx = 1\n"


def test_write_restores_a_magic_on_a_later_line_and_leaves_earlier_lines() -> None:
    data = _notebook(_lines("x = 1\n!ls\ny = 2"))
    notebook = read_notebook(data)

    written = json.loads(notebook.write(notebook.text.replace("y = 2", "y = 3")))

    assert written["cells"][0]["source"] == ["x = 1\n", "!ls\n", "y = 3"]


def test_write_gives_a_line_replaced_by_two_to_the_replaced_lines_cell() -> None:
    notebook = read_notebook(_notebook(_lines("a = 1\nb = 2"), _lines("c = 3")))

    written = json.loads(notebook.write(notebook.text.replace("b = 2\n", "b = 20\nb2 = 21\n")))

    assert written["cells"][0]["source"] == ["a = 1\n", "b = 20\n", "b2 = 21"]
    assert written["cells"][1]["source"] == ["c = 3"]


def test_write_gives_a_line_added_at_the_end_to_the_last_cell() -> None:
    notebook = read_notebook(_notebook(_lines("a = 1"), _lines("c = 3")))

    written = json.loads(notebook.write(notebook.text + "d = 4\n"))

    assert written["cells"][0]["source"] == ["a = 1"]
    assert written["cells"][1]["source"] == ["c = 3\n", "d = 4"]


def test_write_aligns_frequent_lines_so_an_insertion_joins_the_right_cell() -> None:
    filler = "pass\n" * 250
    notebook = read_notebook(_notebook(filler, "x = 1\n"))

    written = json.loads(notebook.write(notebook.text.replace("x = 1\n", "y = 0\nx = 1\n")))

    assert written["cells"][0]["source"] == filler
    assert written["cells"][1]["source"] == "y = 0\nx = 1\n"


def test_write_drops_a_deleted_line_from_its_cell() -> None:
    notebook = read_notebook(_notebook(_lines("a = 1\nb = 2")))

    written = json.loads(notebook.write("a = 1\n"))

    assert written["cells"][0]["source"] == ["a = 1"]


def test_write_joins_a_cell_stored_as_one_string_without_separators() -> None:
    notebook = read_notebook(_notebook("a = 1\nb = 2\n"))

    written = json.loads(notebook.write("a = 1\nb = 3\n"))

    assert written["cells"][0]["source"] == "a = 1\nb = 3\n"


def test_write_keeps_a_notebook_on_one_line_without_a_final_newline() -> None:
    data = json.dumps(json.loads(_notebook("x = 1\n"))).encode()

    assert read_notebook(data).write("x = 1\n") == data


@pytest.mark.parametrize("escaped", [True, False])
def test_write_keeps_non_ascii_text_raw_or_escaped_as_the_notebook_had_it(escaped: bool) -> None:
    data = json.loads(_notebook("s = 'é'\n"))
    raw = (json.dumps(data, indent=1, ensure_ascii=escaped) + "\n").encode()

    assert read_notebook(raw).write("s = 'é'\n") == raw


def test_write_gives_a_cells_first_line_replaced_by_two_to_that_cell() -> None:
    notebook = read_notebook(_notebook(_lines("a = 1"), _lines("c = 3\nd = 4")))

    written = json.loads(notebook.write(notebook.text.replace("c = 3\n", "c = 30\nc2 = 31\n")))

    assert written["cells"][0]["source"] == ["a = 1"]
    assert written["cells"][1]["source"] == ["c = 30\n", "c2 = 31\n", "d = 4"]


def test_write_gives_a_line_inserted_in_the_first_cell_to_the_first_cell() -> None:
    notebook = read_notebook(_notebook(_lines("a = 1\nb = 2"), _lines("c = 3")))

    written = json.loads(notebook.write(notebook.text.replace("b = 2\n", "a2 = 0\nb = 2\n")))

    assert written["cells"][0]["source"] == ["a = 1\n", "a2 = 0\n", "b = 2"]
    assert written["cells"][1]["source"] == ["c = 3"]


def test_write_of_an_ascii_notebook_keeps_an_added_non_ascii_character_raw() -> None:
    notebook = read_notebook(_notebook("s = 'a'\n"))

    assert "s = 'é'" in notebook.write("s = 'é'\n").decode("utf-8")


def test_magic_ending_in_a_backslash_and_more_text_does_not_continue() -> None:
    notebook = read_notebook(_notebook(_lines("!echo a\\X\nx = 1")))

    assert notebook.text == f"{PLACEHOLDER}\nx = 1\n"
