"""Lint pinned releases of real distributed-training projects.

    python bench/corpus/ecosystem.py [--cache DIR] [--jobs N] [--project NAME ...]

Downloads each project's wheel from PyPI with ``pip download --no-deps
--only-binary=:all:`` (wheels only: fetching an sdist with pip would make pip
run the project's build code). Projects published only as sdists
are fetched as archives straight from PyPI's JSON simple index, checked
against the index's sha256, and never built. Python files are unpacked under
``DIR/src/<project>``
(default ``.cache/ecosystem``, git-ignored; downloads are reused), runs
ranklint over each project with every rule, and prints files, findings per
code and internal errors per project. Exits 1 if any internal error occurred.
Nothing downloaded is committed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tarfile
import time
import urllib.request
import zipfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ranklint import Config, LintResult, lint_paths

# Pinned so that runs are comparable across ranklint versions. The projects
# reserved for independent evaluation (torchtitan, Megatron-LM, verl, AReaL,
# OpenRLHF, accelerate, trl, nanotron, nanoGPT, DeepSpeed) are left out, here
# and in every other corpus: ranklint is not tuned on them.
PROJECTS: dict[str, str] = {
    "pytorch-lightning": "2.6.6",
    "torchrec": "1.9.2",
    "torchtune": "0.6.1",
}
# Published as sdists only: downloaded as archives, never built (none today).
SDIST_ONLY: frozenset[str] = frozenset()
SIMPLE_INDEX = "https://pypi.org/simple"


class FetchError(Exception):
    """A project's wheel could not be downloaded."""


@dataclass
class ProjectRun:
    name: str
    files: int
    seconds: float
    result: LintResult


def fetch(name: str, version: str, cache: Path) -> Path:
    """The unpacked sources of ``name==version``, downloading the wheel if needed."""
    target = cache / "src" / name
    if target.is_dir() and any(target.rglob("*.py")):
        return target
    downloads = cache / "downloads" / name
    downloads.mkdir(parents=True, exist_ok=True)
    if name in SDIST_ONLY:
        return _fetch_sdist(name, version, downloads, target)
    wheels = sorted(downloads.glob("*.whl"))
    if not wheels:
        command = [
            sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
            "--only-binary=:all:", "--dest", str(downloads), f"{name}=={version}",
        ]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        wheels = sorted(downloads.glob("*.whl"))
        if done.returncode != 0 or not wheels:
            reason = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "no wheel"
            raise FetchError(f"{name}=={version}: {reason}")
    with zipfile.ZipFile(wheels[0]) as archive:
        for member in archive.namelist():
            if member.endswith(".py"):
                archive.extract(member, target)
    return target


def _fetch_sdist(name: str, version: str, downloads: Path, target: Path) -> Path:
    """Download ``name-version.tar.gz`` from PyPI (hash-checked) and unpack its ``.py`` files."""
    archive_path = downloads / f"{name}-{version}.tar.gz"
    if not archive_path.is_file():
        request = urllib.request.Request(
            f"{SIMPLE_INDEX}/{name}/",
            headers={"Accept": "application/vnd.pypi.simple.v1+json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                index = json.load(response)
            (entry,) = [f for f in index["files"] if f["filename"] == archive_path.name]
            with urllib.request.urlopen(entry["url"], timeout=600) as response:
                data = response.read()
        except (OSError, ValueError, KeyError) as exc:
            raise FetchError(f"{name}=={version}: {exc}") from None
        if hashlib.sha256(data).hexdigest() != entry["hashes"]["sha256"]:
            raise FetchError(f"{name}=={version}: sha256 mismatch")
        archive_path.write_bytes(data)
    with tarfile.open(archive_path) as archive:
        members = [m for m in archive.getmembers() if m.isfile() and m.name.endswith(".py")]
        archive.extractall(target, members=members, filter="data")
    return target


def run(names: list[str], cache: Path, jobs: int | None) -> tuple[list[ProjectRun], list[str]]:
    """Lint each project; also returns the download failures (those are skipped)."""
    runs: list[ProjectRun] = []
    failures: list[str] = []
    for name in names:
        try:
            source = fetch(name, PROJECTS[name], cache)
        except (FetchError, subprocess.TimeoutExpired, OSError) as exc:
            failures.append(str(exc))
            continue
        start = time.perf_counter()
        result = lint_paths([source], Config(select=("ALL",), root=source), jobs=jobs)
        runs.append(ProjectRun(name, result.files_checked, time.perf_counter() - start, result))
    return runs, failures


def report(runs: list[ProjectRun]) -> str:
    codes = sorted({f.code for r in runs for f in r.result.findings})
    header = (
        f"{'project':<20} {'version':<9} {'files':>6} {'seconds':>8} {'errors':>6} "
        + " ".join(f"{code:>7}" for code in codes)
    )
    lines = [header]
    for r in runs:
        counts = Counter(f.code for f in r.result.findings)
        lines.append(
            f"{r.name:<20} {PROJECTS[r.name]:<9} {r.files:>6} {r.seconds:>8.1f} "
            f"{len(r.result.errors):>6} " + " ".join(f"{counts.get(c, 0):>7}" for c in codes)
        )
    total = Counter(f.code for r in runs for f in r.result.findings)
    lines.append(
        f"{'total':<20} {'':<9} {sum(r.files for r in runs):>6} "
        f"{sum(r.seconds for r in runs):>8.1f} {sum(len(r.result.errors) for r in runs):>6} "
        + " ".join(f"{total.get(c, 0):>7}" for c in codes)
    )
    for r in runs:
        lines.extend(f"internal error: {error.describe()}" for error in r.result.errors)
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=Path(".cache/ecosystem"))
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--project", action="append", choices=sorted(PROJECTS))
    args = parser.parse_args()
    runs, failures = run(args.project or sorted(PROJECTS), args.cache, args.jobs)
    print(report(runs))
    for failure in failures:
        print(f"skipped, download failed: {failure}")
    return 1 if any(r.result.errors for r in runs) else 0


if __name__ == "__main__":
    raise SystemExit(main())
