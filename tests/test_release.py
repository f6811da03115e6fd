"""A release a user can pin: the version, the changelog, the wheel and the sdist.

The slow tests build the distributions as a release would (``python -m build``),
install the wheel into a fresh virtual environment and run it on the fixtures.
They need the package index (for hatchling and libcst) and skip, saying so, only
where it cannot be reached.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import pytest

from ranklint import __version__
from ranklint.rules import all_rules
from tests.conftest import REPO_ROOT, run_subprocess
from tests.test_links import file_of

# Building, creating a venv and installing into it can take minutes on a cold cache.
pytestmark = pytest.mark.timeout(900)

CHANGELOG = REPO_ROOT / "CHANGELOG.md"
_RELEASE_HEADING = re.compile(r"^## \[(?P<version>[^\]]+)\] - (?P<date>\d{4}-\d{2}-\d{2})$", re.M)
_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")


def index_unreachable(scratch: Path) -> bool:
    """Whether pip cannot fetch a package (hatchling, the build backend) from the index."""
    probe = run_subprocess(
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--dest",
        str(scratch),
        "hatchling",
        cwd=scratch,
        timeout=300,
    )
    return probe.returncode != 0


def run_needing_the_index(
    *args: str, cwd: Path, timeout: float = 600, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a command that installs packages; skip the test if it failed for want of an index."""
    result = run_subprocess(*args, cwd=cwd, timeout=timeout, env=env)
    if result.returncode != 0:
        scratch = cwd / ".index-probe"
        scratch.mkdir(exist_ok=True)
        if index_unreachable(scratch):
            pytest.skip(f"the package index is unreachable ({' '.join(args[:4])} failed)")
    return result


def fresh_venv(root: Path) -> Path:
    """A new virtual environment with pip and nothing else; returns its scripts folder."""
    venv.EnvBuilder(with_pip=True, clear=True).create(root)
    return root / ("Scripts" if sys.platform == "win32" else "bin")


# --- version and changelog -------------------------------------------------------------------


def test_version_is_semver_below_1_while_the_rule_set_moves() -> None:
    assert _SEMVER.match(__version__), __version__
    assert __version__.startswith("0.")


def test_cli_version_flag_prints_the_package_version(run_cli) -> None:
    run = run_cli("--version")

    assert (run.code, run.out) == (0, f"ranklint {__version__}\n")


def test_changelog_opens_with_unreleased_then_the_current_version_as_newest_release() -> None:
    text = CHANGELOG.read_text(encoding="utf-8")

    releases = _RELEASE_HEADING.findall(text)
    headings = [line for line in text.splitlines() if line.startswith("## ")]

    assert headings[0] == "## [Unreleased]"
    assert releases, "no release entry"
    assert releases[0][0] == __version__
    assert all(_SEMVER.match(version) for version, _ in releases)
    assert [date for _, date in releases] == sorted((date for _, date in releases), reverse=True)
    assert "[Keep a Changelog](https://keepachangelog.com/" in text


def test_changelog_release_entries_use_keep_a_changelog_section_names() -> None:
    text = CHANGELOG.read_text(encoding="utf-8")
    allowed = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}

    sections = {line[4:] for line in text.splitlines() if line.startswith("### ")}

    assert sections
    assert sections <= allowed


def test_every_pinned_tag_in_the_readme_and_usage_guide_is_the_current_version() -> None:
    pins = {
        name: re.findall(r"(?:@|rev: )v(\d+\.\d+\.\d+)", (REPO_ROOT / name).read_text("utf-8"))
        for name in ("README.md", "docs/usage.md")
    }

    assert all(pins.values()), pins
    assert {version for found in pins.values() for version in found} == {__version__}


# --- the built distributions -----------------------------------------------------------------


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(wheel, sdist) built from the checkout by ``python -m build`` (the sdist first,
    then the wheel from the sdist, as a release does)."""
    pytest.importorskip("build", reason="build is a test extra")
    out = tmp_path_factory.mktemp("dist")
    result = run_needing_the_index(
        sys.executable, "-m", "build", "--outdir", str(out), str(REPO_ROOT), cwd=out
    )
    assert result.returncode == 0, result.stdout + result.stderr
    (wheel,) = out.glob("*.whl")
    (sdist,) = out.glob("*.tar.gz")
    return wheel, sdist


@pytest.fixture(scope="module")
def installed(dists: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scripts folder of a fresh virtual environment with only the wheel installed."""
    root = tmp_path_factory.mktemp("wheel-venv")
    bin_dir = fresh_venv(root / "venv")
    result = run_needing_the_index(
        str(bin_dir / "python"), "-m", "pip", "install", str(dists[0]), cwd=root
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return bin_dir


@pytest.mark.slow
def test_build_names_the_wheel_and_sdist_after_the_package_version(
    dists: tuple[Path, Path],
) -> None:
    wheel, sdist = dists

    assert wheel.name == f"ranklint-{__version__}-py3-none-any.whl"
    assert sdist.name == f"ranklint-{__version__}.tar.gz"


@pytest.mark.slow
def test_wheel_ships_every_rule_page_as_generated_and_no_tests_or_fixtures(
    dists: tuple[Path, Path],
) -> None:
    with zipfile.ZipFile(dists[0]) as wheel:
        names = wheel.namelist()
        pages = {
            name.rpartition("/")[2]: wheel.read(name).decode("utf-8")
            for name in names
            if name.startswith("ranklint/_data/docs/rules/")
        }

    expected = {
        page.name: page.read_text("utf-8") for page in (REPO_ROOT / "docs/rules").glob("*.md")
    }
    assert pages == expected
    assert {f"{rule.code}.md" for rule in all_rules()} | {"README.md"} == set(pages)
    top = {name.split("/", 1)[0] for name in names}
    assert top == {"ranklint", f"ranklint-{__version__}.dist-info"}
    assert not [name for name in names if "/tests/" in name or "__pycache__" in name]


@pytest.mark.slow
def test_wheel_metadata_has_the_version_and_no_url_of_a_host_without_ranklint(
    dists: tuple[Path, Path],
) -> None:
    with zipfile.ZipFile(dists[0]) as wheel:
        metadata = wheel.read(f"ranklint-{__version__}.dist-info/METADATA").decode("utf-8")

    assert f"\nVersion: {__version__}\n" in metadata
    assert "github.com/ranklint" not in metadata
    assert "Requires-Dist: libcst" in metadata


@pytest.mark.slow
def test_sdist_holds_what_the_wheel_the_tests_and_the_hook_are_built_from(
    dists: tuple[Path, Path],
) -> None:
    with tarfile.open(dists[1]) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}

    for needed in (
        "pyproject.toml",
        "README.md",
        "CHANGELOG.md",
        ".pre-commit-hooks.yaml",
        "action.yml",
        "src/ranklint/_version.py",
        "docs/rules/RNK101.md",
        "fixtures/samples/import_time_mesh.py",
        "tests/conftest.py",
    ):
        assert needed in names, needed
    assert not [name for name in names if "__pycache__" in name or name.startswith(".venv/")]


@pytest.mark.slow
def test_installed_wheel_checks_the_fixtures_as_the_checkout_does(
    installed: Path, tmp_path: Path
) -> None:
    from_wheel = run_subprocess(
        str(installed / "ranklint"), "check", "--no-cache", "fixtures/", cwd=REPO_ROOT
    )
    from_checkout = run_subprocess(
        sys.executable, "-m", "ranklint", "check", "--no-cache", "fixtures/", cwd=REPO_ROOT
    )
    version = run_subprocess(str(installed / "ranklint"), "--version", cwd=tmp_path)

    assert from_wheel.returncode == 1, from_wheel.stdout + from_wheel.stderr
    assert "fixtures/samples/import_time_mesh.py:" in from_wheel.stdout
    assert from_wheel.stdout == from_checkout.stdout
    assert version.stdout == f"ranklint {__version__}\n"


@pytest.mark.slow
def test_installed_wheel_links_each_finding_to_a_page_inside_the_install(
    installed: Path,
) -> None:
    run = run_subprocess(
        str(installed / "ranklint"),
        "check",
        "--no-cache",
        "--format",
        "json",
        "fixtures/",
        cwd=REPO_ROOT,
    )

    findings = json.loads(run.stdout)
    assert findings
    venv_root = installed.parent.resolve()
    for finding in findings:
        page = file_of(finding["url"])
        assert page.is_file(), finding["url"]
        assert venv_root in page.parents
        assert page.read_text("utf-8") == (REPO_ROOT / "docs/rules" / page.name).read_text("utf-8")


def test_index_probe_without_any_index_reports_it_unreachable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path))
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "")
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")

    assert index_unreachable(tmp_path) is True
