"""The README's pre-commit snippet works as written, in a real `pre-commit run`."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, run_subprocess, write
from tests.test_precommit_hook import GIT_ENV

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def _snippet() -> str:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(  repos:.*?)```", readme, re.S)
    assert block is not None, "the README has no pre-commit snippet"
    return "\n".join(line[2:] for line in block.group(1).splitlines()) + "\n"


def test_readme_precommit_snippet_fails_a_commit_with_a_finding(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    pytest.importorskip("pre_commit", reason="pre-commit is a test extra")
    write(tmp_path / ".pre-commit-config.yaml", _snippet())
    write(tmp_path / "train.py", "import torch.distributed as dist\ndist.init_process_group()\n")
    write(tmp_path / "clean.py", "x = 1\n")
    run_subprocess("git", "init", "-q", ".", cwd=tmp_path, env=GIT_ENV)
    run_subprocess("git", "add", "-A", cwd=tmp_path, env=GIT_ENV)
    env = {**GIT_ENV, "PRE_COMMIT_HOME": str(tmp_path / ".home"), "PRE_COMMIT_COLOR": "never"}

    failing = run_subprocess(
        sys.executable, "-m", "pre_commit", "run", "--all-files", cwd=tmp_path, env=env
    )
    write(
        tmp_path / "train.py",
        "import torch.distributed as dist\n\ndef main():\n    dist.init_process_group()\n",
    )
    passing = run_subprocess(
        sys.executable, "-m", "pre_commit", "run", "--all-files", cwd=tmp_path, env=env
    )

    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "train.py:2:1: RNK101" in failing.stdout
    assert passing.returncode == 0, passing.stdout + passing.stderr
