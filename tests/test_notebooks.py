"""Jupyter notebooks checked natively: found in folder walks, findings placed as cell
and line, fixes and ``--add-noqa`` written back into the notebook's JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ranklint.config import Config
from ranklint.discovery import discover
from tests.conftest import write

STEP = ["def step(t):\n", "    if dist.get_rank() == 0:\n", "        dist.all_reduce(t)\n"]


def _notebook(path: Path, *sources: list[str]) -> Path:
    """An nbformat 4 notebook with a markdown cell first, then one code cell per source."""
    cells: list[dict[str, Any]] = [{"cell_type": "markdown", "metadata": {}, "source": ["# T"]}]
    for number, source in enumerate(sources, start=1):
        output = {"output_type": "stream", "name": "stdout", "text": ["ok\n"]}
        cell = {"cell_type": "code", "execution_count": number, "metadata": {}}
        cells.append({**cell, "outputs": [output], "source": source})
    data = {
        "cells": cells,
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _training_notebook(path: Path) -> Path:
    return _notebook(path, ["%matplotlib inline\n", "import torch.distributed as dist"], STEP)


def test_folder_walk_finds_notebooks_next_to_python_files(tmp_path: Path) -> None:
    (tmp_path / "nb").mkdir()
    notebook = _training_notebook(tmp_path / "nb" / "train.ipynb")
    script = write(tmp_path / "a.py", "x = 1\n")

    found = discover([str(tmp_path)], Config(root=tmp_path))

    assert sorted(found.files) == sorted([str(script), str(notebook)])
    assert found.skipped == []


def test_extend_exclude_pattern_leaves_notebooks_out_of_a_walk(tmp_path: Path) -> None:
    _training_notebook(tmp_path / "train.ipynb")
    script = write(tmp_path / "a.py", "x = 1\n")

    found = discover([str(tmp_path)], Config(root=tmp_path, extend_exclude=("*.ipynb",)))

    assert found.files == [str(script)]


def test_cli_places_a_notebook_finding_at_its_cell_and_line(run_cli, tmp_path: Path) -> None:
    notebook = _training_notebook(tmp_path / "train.ipynb")

    result = run_cli("check", str(notebook), "--no-cache", "--output-format", "concise")

    assert result.code == 1
    assert result.out.startswith(f"{notebook}:cell 2:3:9: RNK102 `all_reduce` is reached only")


def test_full_format_frames_the_lines_of_the_findings_cell(run_cli, tmp_path: Path) -> None:
    notebook = _training_notebook(tmp_path / "train.ipynb")

    result = run_cli("check", str(notebook), "--no-cache")

    assert "1 | def step(t):" in result.out
    assert "3 |         dist.all_reduce(t)" in result.out
    assert "%matplotlib" not in result.out


def test_json_output_keeps_the_cell_and_counts_rows_within_it(run_cli, tmp_path: Path) -> None:
    notebook = _training_notebook(tmp_path / "train.ipynb")

    result = run_cli("check", str(notebook), "--no-cache", "--output-format", "json")
    (finding,) = json.loads(result.out)

    assert (finding["cell"], finding["location"], finding["end_location"]["row"]) == (
        2,
        {"row": 3, "column": 9},
        3,
    )


def test_add_noqa_writes_the_comment_into_the_cell_and_keeps_magics_and_outputs(
    run_cli, tmp_path: Path
) -> None:
    notebook = _training_notebook(tmp_path / "train.ipynb")
    before = json.loads(notebook.read_text(encoding="utf-8"))

    run_cli("check", str(notebook), "--no-cache", "--add-noqa")
    after = json.loads(notebook.read_text(encoding="utf-8"))

    assert after["cells"][2]["source"][2] == "        dist.all_reduce(t)  # noqa: RNK102\n"
    assert after["cells"][1] == before["cells"][1]  # the magic, as it was
    assert after["cells"][2]["outputs"] == before["cells"][2]["outputs"]
    assert run_cli("check", str(notebook), "--no-cache").code == 0


def test_fix_edits_the_notebook_json_and_keeps_its_layout(run_cli, tmp_path: Path) -> None:
    source = ["import torch.distributed as dist\n", "dist.all_reduce(t)\n"]
    notebook = _notebook(tmp_path / "nb.ipynb", ["%pip install torch"], source)
    before = notebook.read_text(encoding="utf-8")

    result = run_cli("check", str(notebook), "--no-cache", "--select", "RNK106", "--fix")
    after = notebook.read_text(encoding="utf-8")

    assert result.code == 0
    fixed = "dist.all_reduce(t, op=dist.ReduceOp.SUM)\\n"
    assert after == before.replace("dist.all_reduce(t)\\n", fixed)


def test_notebook_that_is_not_json_is_a_parse_error_not_a_crash(run_cli, tmp_path: Path) -> None:
    notebook = write(tmp_path / "bad.ipynb", "{not json\n")

    result = run_cli("check", str(notebook), "--no-cache", "--output-format", "concise")

    assert result.code == 1
    assert f"{notebook}:1:1: RNK001 not a Jupyter notebook (invalid JSON" in result.out
    assert "Traceback" not in result.err
