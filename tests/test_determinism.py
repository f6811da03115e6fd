"""The same input gives byte-identical output: serially, in parallel, and run to run."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, run_subprocess, write


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("determinism")
    shutil.copytree(FIXTURES, root / "fixtures")
    for index in range(16):
        body = "import torch.distributed as dist\n" + "x = 1\n" * index
        body += "dist.new_group()\nfrom os import *; sep\n" if index % 2 else "def f():\n    pass\n"
        write(root / f"pkg{index % 3}" / f"mod{index}.py", body)
    write(root / "broken.py", "def f(:\n")
    return root


@pytest.mark.parametrize("output_format", ["text", "json", "sarif", "github"])
def test_output_is_byte_identical_serially_in_parallel_cached_and_across_runs(
    tree: Path, output_format: str, tmp_path: Path
) -> None:
    def run(jobs: str, *cache: str) -> bytes:
        result = run_subprocess(
            sys.executable, "-m", "ranklint", "check", "--format", output_format,
            "--jobs", jobs, *cache, ".", cwd=tree,
        )  # fmt: skip
        assert result.returncode == 1, result.stderr
        return result.stdout.encode()

    serial = run("1", "--no-cache")
    parallel = run("2", "--no-cache")
    parallel_again = run("2", "--no-cache")
    cold_cache = run("2", "--cache-dir", str(tmp_path / "cache"))
    warm_cache = run("2", "--cache-dir", str(tmp_path / "cache"))

    assert serial == parallel == parallel_again == cold_cache == warm_cache
    assert len(serial) > 1000
