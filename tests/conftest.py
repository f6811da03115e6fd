"""Shared helpers for the test suite."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from ranklint import Config, lint_paths, lint_source
from ranklint.cache import CACHE_DIR_ENV
from ranklint.faces.cli import main as cli_main
from ranklint.findings import Finding
from ranklint.testing import expected_findings

# Hypothesis profiles: "ci" (default, a few hundred examples per property) and
# "long" (10,000+, on demand): `pytest tests/test_fuzz.py --hypothesis-profile long`.
_FUZZ_SETTINGS = {
    "deadline": None,
    # hypothesmith filters many of the programs it draws (filter_too_much, now and then).
    "suppress_health_check": [
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
}
settings.register_profile("ci", max_examples=300, **_FUZZ_SETTINGS)
settings.register_profile("long", max_examples=10_000, **_FUZZ_SETTINGS)
# For mutation testing (bench/mutation/mutation.py): each surviving mutant reruns the properties.
settings.register_profile("mutation", max_examples=25, **_FUZZ_SETTINGS)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
# The long profile runs for many minutes per property, by hand: no per-test timeout.
FUZZ_TIMEOUT = 0 if os.environ.get("HYPOTHESIS_PROFILE") == "long" else 300

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = REPO_ROOT / "fixtures"


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Each test caches results in a folder of its own, never in the checkout.

    A cache shared between tests would let one test read another's results: in
    mutation testing (the same source files for every mutant) a mutant would then
    pass on the unmutated code's cached findings. Tests of the default location
    remove the variable themselves.
    """
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path_factory.mktemp("ranklint-cache")))


def findings_of(source: str, *, select: tuple[str, ...] | None = None) -> list[Finding]:
    """Findings (of every confidence) for a dedented snippet; fails the test on internal errors."""
    config = Config(select=select, confidence="low")
    result = lint_source(textwrap.dedent(source), "snippet.py", config)
    assert result.errors == []
    return result.findings


def codes_by_line(
    source: str,
    path: str = "snippet.py",
    config: Config | None = None,
    *,
    select: tuple[str, ...] | None = None,
    only: tuple[str, ...] | None = None,
) -> list[tuple[int, str]]:
    """(line, code) of each finding in a dedented snippet (a leading newline dropped).

    ``config`` (default: ``Config(select=select)`` at every confidence: what the
    analysis finds, whatever its tier); ``only``: keep these codes.
    Fails the test on internal errors.
    """
    config = config if config is not None else Config(select=select, confidence="low")
    result = lint_source(textwrap.dedent(source).lstrip("\n"), path, config)
    assert result.errors == []
    return [(f.line, f.code) for f in result.findings if only is None or f.code in only]


def marked_project(
    root: Path, files: dict[str, str], codes: tuple[str, ...]
) -> tuple[list[tuple[str, int, str]], list[tuple[str, int, str]]]:
    """Write the project ``files`` (name -> dedented text) under ``root`` and lint
    it with ``codes`` at every confidence: (found, expected) as sorted (file,
    line, code), where expected comes from the files' ``# expect:`` markers."""
    expected: list[tuple[str, int, str]] = []
    for name, text in files.items():
        source = textwrap.dedent(text).lstrip()
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
        expected += [(name, line, code) for line, code in expected_findings(source)]
    result = lint_paths([root], Config(select=codes, root=root, confidence="low"), jobs=1)
    assert result.errors == []
    found = [(Path(f.path).relative_to(root).as_posix(), f.line, f.code) for f in result.findings]
    return sorted(found), sorted(expected)


@dataclass
class CliRun:
    code: int
    out: str
    err: str


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    """Run the CLI in-process; ``cwd`` defaults to the test's working directory."""

    def run(*args: str, cwd: Path | None = None) -> CliRun:
        if cwd is not None:
            monkeypatch.chdir(cwd)
        try:
            code = cli_main(list(args))
        except SystemExit as exc:  # argparse usage errors and --version
            code = int(exc.code or 0)
        captured = capsys.readouterr()
        return CliRun(code, captured.out, captured.err)

    return run


def run_subprocess(
    *args: str, cwd: Path, timeout: float = 120, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a command with the test interpreter's scripts on PATH."""
    full_env = {**os.environ, **(env or {})}
    bin_dir = str(Path(sys.executable).parent)
    full_env["PATH"] = bin_dir + os.pathsep + full_env.get("PATH", "")
    return subprocess.run(
        list(args), cwd=cwd, capture_output=True, text=True, timeout=timeout, env=full_env
    )


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path
