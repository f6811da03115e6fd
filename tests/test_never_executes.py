"""ranklint reads code; it never imports or runs it, and never imports torch."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from tests.conftest import run_subprocess, write


@pytest.fixture
def listener():
    """A local server that records whether anything connected to it."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.5)
    yield server
    server.close()


def make_hostile_tree(root: Path, port: int) -> dict[str, Path]:
    markers = {name: root / f"{name}.marker" for name in ("write", "subprocess", "import")}
    write(root / "writes_a_file.py", f"open({str(markers['write'])!r}, 'w').write('ran')\n")
    write(root / "exits.py", "import sys\nsys.exit(3)\n")
    write(root / "hard_exits.py", "import os\nos._exit(4)\n")
    write(
        root / "connects.py",
        f"import socket\nsocket.create_connection(('127.0.0.1', {port})).sendall(b'ran')\n",
    )
    write(
        root / "spawns.py",
        f"import subprocess\nsubprocess.run(['touch', {str(markers['subprocess'])!r}])\n",
    )
    write(root / "pkg" / "__init__.py", f"open({str(markers['import'])!r}, 'w').close()\n")
    write(root / "pkg" / "mod.py", "from . import *\nimport pkg\nsep\n")
    write(root / "conftest.py", "raise SystemExit('conftest ran')\n")
    # Enough files for the process pool to be used too.
    for index in range(10):
        write(root / f"filler{index}.py", "import sys\nsys.exit(5)\n")
    return markers


def no_connection(server: socket.socket) -> bool:
    try:
        connection, _ = server.accept()
    except TimeoutError:
        return True
    connection.close()
    return False


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_cli_never_runs_the_code_it_checks(tmp_path: Path, listener, jobs: str) -> None:
    markers = make_hostile_tree(tmp_path, listener.getsockname()[1])

    result = run_subprocess(
        sys.executable, "-m", "ranklint", "check", "--format", "concise", "--jobs", jobs, ".",
        cwd=tmp_path,
    )  # fmt: skip

    assert result.returncode == 1  # the wildcard import in pkg/mod.py, nothing else
    assert [line.split()[1] for line in result.stdout.splitlines()] == ["RNK301"]
    assert [name for name, path in markers.items() if path.exists()] == []
    assert no_connection(listener)


def test_flake8_face_never_runs_the_code_it_checks(tmp_path: Path, listener) -> None:
    markers = make_hostile_tree(tmp_path, listener.getsockname()[1])

    result = run_subprocess(
        sys.executable, "-m", "flake8", "--isolated", "--select", "RNK", ".", cwd=tmp_path
    )

    assert result.returncode == 1
    assert [name for name, path in markers.items() if path.exists()] == []
    assert no_connection(listener)


def test_linting_never_imports_torch(tmp_path: Path) -> None:
    write(
        tmp_path / "train.py", "import torch\nimport torch.distributed as dist\ndist.new_group()\n"
    )
    probe = (
        "import sys, ranklint\n"
        "result = ranklint.lint_paths(['train.py'], jobs=1)\n"
        "torch = sorted(m for m in sys.modules if m.split('.')[0] == 'torch')\n"
        "print(len(result.findings), torch)\n"
    )

    result = run_subprocess(sys.executable, "-c", probe, cwd=tmp_path)

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1 []"
