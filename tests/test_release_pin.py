"""The README's pinning lines work against a release tag.

A temporary clone of this repository gets the working tree committed and tagged
``v<version>`` (tags are made only there, never in the checkout); the README's
``pip install git+...@TAG`` line, its pre-commit ``rev:`` snippet and
``pre-commit try-repo --ref TAG`` then run against that clone.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from ranklint import __version__
from tests.conftest import FIXTURES, REPO_ROOT, run_subprocess
from tests.test_precommit_hook import GIT_ENV, make_repo
from tests.test_release import fresh_venv, run_needing_the_index

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

TAG = f"v{__version__}"
FIXTURE = FIXTURES / "samples" / "import_time_mesh.py"


def _git(*args: str, cwd: Path) -> str:
    result = run_subprocess("git", *args, cwd=cwd, env=GIT_ENV)
    assert result.returncode == 0, result.stderr
    return result.stdout


def _readme_section() -> str:
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("## Install and pin a release")
    return text[start : text.index("\n## ", start + 1)]


@pytest.fixture(scope="module")
def tagged_clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clone of the checkout with its working tree committed and tagged ``TAG``."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    if not (REPO_ROOT / ".git").exists():
        pytest.skip("the ranklint checkout is not a git repository")
    clone = tmp_path_factory.mktemp("release") / "ranklint"
    _git("clone", "--quiet", "--no-hardlinks", str(REPO_ROOT), str(clone), cwd=clone.parent)
    present = _git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=REPO_ROOT)
    for name in filter(None, present.split("\0")):
        source = REPO_ROOT / name
        if source.is_file():
            (clone / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, clone / name)
    deleted = _git("ls-files", "-z", "--deleted", cwd=REPO_ROOT)
    for name in filter(None, deleted.split("\0")):
        (clone / name).unlink(missing_ok=True)
    _git("add", "-A", cwd=clone)
    _git("commit", "--quiet", "--allow-empty", "-m", "the working tree", cwd=clone)
    _git("tag", TAG, cwd=clone)
    return clone


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One pre-commit cache for the module: the tag's hook environment is built once."""
    pytest.importorskip("pre_commit", reason="pre-commit is a test extra")
    return tmp_path_factory.mktemp("pre-commit-home")


def _pre_commit(*args: str, cwd: Path, home: Path):
    env = {**GIT_ENV, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    return run_needing_the_index(
        sys.executable, "-m", "pre_commit", *args, cwd=cwd, timeout=840, env=env
    )


def test_readme_pins_the_current_version_tag_for_pip_and_pre_commit() -> None:
    section = _readme_section()

    (pin,) = re.findall(r"```yaml\n(.*?)```", section, re.S)
    config = yaml.safe_load(pin)

    assert re.search(rf'pip install "git\+\S+@{re.escape(TAG)}"', section)
    assert config["repos"][0]["rev"] == TAG
    assert config["repos"][0]["hooks"] == [{"id": "ranklint"}]
    assert f"`uses: OWNER/ranklint@{TAG}`" in section


def test_pre_commit_try_repo_at_a_release_tag_runs_that_tags_hook(
    tagged_clone: Path, pre_commit_home: Path, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path, {FIXTURE.name: FIXTURE.read_text(encoding="utf-8")})

    result = _pre_commit(
        "try-repo",
        str(tagged_clone),
        "ranklint",
        "--ref",
        TAG,
        "--files",
        FIXTURE.name,
        cwd=repo,
        home=pre_commit_home,
    )

    assert result.returncode == 1, result.stdout + result.stderr
    assert f"rev: {TAG}" in result.stdout
    assert f"{FIXTURE.name}:" in result.stdout
    assert "RNK101" in result.stdout


def test_readme_pre_commit_pin_fails_a_commit_with_a_finding_at_the_tag(
    tagged_clone: Path, pre_commit_home: Path, tmp_path: Path
) -> None:
    (pin,) = re.findall(r"```yaml\n(.*?)```", _readme_section(), re.S)
    config = pin.replace("https://HOST/OWNER/ranklint", str(tagged_clone))
    repo = make_repo(
        tmp_path,
        {".pre-commit-config.yaml": config, FIXTURE.name: FIXTURE.read_text(encoding="utf-8")},
    )

    result = _pre_commit("run", "--all-files", cwd=repo, home=pre_commit_home)

    assert str(tagged_clone) in config
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{FIXTURE.name}:" in result.stdout
    assert "RNK101" in result.stdout


def test_pip_install_from_a_git_tag_installs_that_release(
    tagged_clone: Path, tmp_path: Path
) -> None:
    bin_dir = fresh_venv(tmp_path / "venv")

    install = run_needing_the_index(
        str(bin_dir / "python"),
        "-m",
        "pip",
        "install",
        f"git+{tagged_clone.as_uri()}@{TAG}",
        cwd=tmp_path,
    )
    version = run_subprocess(str(bin_dir / "ranklint"), "--version", cwd=tmp_path)
    check = run_subprocess(
        str(bin_dir / "ranklint"), "check", "--no-cache", str(FIXTURE), cwd=tmp_path
    )

    assert install.returncode == 0, install.stdout + install.stderr
    assert version.stdout == f"ranklint {__version__}\n"
    assert check.returncode == 1
    assert "RNK101" in check.stdout
