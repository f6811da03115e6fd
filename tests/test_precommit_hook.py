"""The pre-commit hook, run through real ``pre-commit try-repo`` against this checkout."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT, run_subprocess, write

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

GIT_ENV = {
    "GIT_AUTHOR_NAME": "ranklint tests",
    "GIT_AUTHOR_EMAIL": "tests@example.invalid",
    "GIT_COMMITTER_NAME": "ranklint tests",
    "GIT_COMMITTER_EMAIL": "tests@example.invalid",
}


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    if not (REPO_ROOT / ".git").exists():
        pytest.skip("the ranklint checkout is not a git repository; try-repo needs one")
    pytest.importorskip("pre_commit", reason="pre-commit is a test extra")
    return tmp_path_factory.mktemp("pre-commit-home")


def try_repo(repo: Path, home: Path, *args: str):
    return run_subprocess(
        sys.executable,
        "-m",
        "pre_commit",
        "try-repo",
        str(REPO_ROOT),
        "ranklint",
        *args,
        cwd=repo,
        timeout=840,
        env={**GIT_ENV, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"},
    )


def make_repo(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        write(root / name, text)
    run_subprocess("git", "init", "-q", ".", cwd=root, env=GIT_ENV)
    run_subprocess("git", "add", "-A", cwd=root, env=GIT_ENV)
    return root


def test_hook_fails_on_a_finding_then_passes_once_fixed(
    tmp_path: Path, pre_commit_home: Path
) -> None:
    repo = make_repo(
        tmp_path,
        {"train.py": "import torch.distributed as dist\ndist.init_process_group('nccl')\n"},
    )

    failing = try_repo(repo, pre_commit_home, "--files", "train.py")
    write(
        repo / "train.py",
        "import torch.distributed as dist\n\n\ndef main():\n    dist.init_process_group('nccl')\n",
    )
    passing = try_repo(repo, pre_commit_home, "--files", "train.py")

    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "train.py:2:1: RNK101" in failing.stdout
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "Passed" in passing.stdout


def test_hook_succeeds_when_no_python_files_are_passed(
    tmp_path: Path, pre_commit_home: Path
) -> None:
    repo = make_repo(tmp_path, {"README.md": "# nothing to lint\n"})

    result = try_repo(repo, pre_commit_home, "--all-files")

    assert result.returncode == 0, result.stdout + result.stderr
    assert "no files to check" in result.stdout


def test_hook_catches_a_helper_change_through_an_unchanged_call_site(
    tmp_path: Path, pre_commit_home: Path
) -> None:
    repo = make_repo(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'p'\n",
            "train.py": "import os\nfrom helpers import save\n\ndef step():\n"
            "    if os.environ['RANK'] == '0':\n        save()\n",
            "helpers.py": "def save():\n    pass\n",
        },
    )
    warm = try_repo(repo, pre_commit_home, "--all-files")
    write(
        repo / "helpers.py",
        "import torch.distributed as dist\n\n\ndef save():\n    dist.barrier()\n",
    )

    changed = try_repo(repo, pre_commit_home, "--files", "helpers.py")

    assert warm.returncode == 0, warm.stdout + warm.stderr
    assert changed.returncode == 1, changed.stdout + changed.stderr
    assert "train.py:6:9: RNK102 `save()` (which reaches `barrier`" in changed.stdout
    assert "helpers.py:5:5: `dist.barrier()` here" in changed.stdout
