"""A real editor as the client: headless Neovim runs ``ranklint server`` on a file
(tests/faces/editors/neovim_init.lua) and writes the diagnostics it shows."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls")

NVIM = shutil.which("nvim")
INIT = Path(__file__).parent / "editors" / "neovim_init.lua"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        NVIM is None, reason="nvim is not installed (apt-get install -y neovim; .ci/run does)"
    ),
]

HELPERS = """\
import torch.distributed as dist


def log_metrics(x):
    dist.barrier()
    return x
"""

TRAIN = """\
import torch.distributed as dist

from pkg.helpers import log_metrics


def step(x):
    if dist.get_rank() == 0:
        log_metrics(x)
    dist.broadcast(x)
    return x
"""


def test_neovim_shows_the_servers_diagnostics_with_the_cross_file_finding(
    tmp_path: Path,
) -> None:
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\n\n[tool.ranklint]\n')
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "helpers.py").write_text(HELPERS)
    train = root / "pkg" / "train.py"
    train.write_text(TRAIN)
    out = tmp_path / "diagnostics.txt"
    home = tmp_path / "home"
    env = {
        **os.environ,
        "RANKLINT_SERVER_CMD": json.dumps([sys.executable, "-m", "ranklint", "server"]),
        "RANKLINT_NVIM_OUT": str(out),
        "RANKLINT_NVIM_ROOT": str(root),
        # Neovim's own files (its LSP log) go to the test's folder.
        **{
            f"XDG_{kind}_HOME": str(home / kind.lower())
            for kind in ("CONFIG", "DATA", "STATE", "CACHE")
        },
    }
    assert NVIM is not None
    done = subprocess.run(
        [NVIM, "--headless", "--clean", "-n", str(train), "-c", f"luafile {INIT}"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    shown = out.read_text().splitlines()
    assert shown == [
        "train.py:8:9: ERROR RNK102 [ranklint] `log_metrics()` (which reaches `barrier`: "
        f"log_metrics() -> dist.barrier() at {root / 'pkg' / 'helpers.py'}:5) is reached only "
        "when `dist.get_rank() == 0`; ranks that skip it hang in their next collective; "
        "call it on every rank, outside the rank-dependent branch",
        "train.py:9:5: WARN RNK103 [ranklint] " + shown[1].split("[ranklint] ", 1)[1],
    ]
