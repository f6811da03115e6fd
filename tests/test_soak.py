"""Real-code soak: every file of the installed torch package and of pinned releases
of real training projects lints without an internal error."""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path

import pytest

from ranklint import Config, lint_paths
from tests.conftest import REPO_ROOT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]


def test_every_torch_source_file_lints_without_internal_error() -> None:
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        pytest.skip("torch is not installed (it is a test extra)")
    root = Path(spec.origin).parent

    # The virtual environment lies in the (git-ignored) checkout: walk it anyway.
    config = Config(select=("ALL",), root=root, respect_gitignore=False)
    result = lint_paths([root], config, jobs=2)

    counts = Counter(f.code for f in result.findings)
    print(f"torch soak: {result.files_checked} files, findings {dict(sorted(counts.items()))}")  # noqa: T201
    assert [error.describe() for error in result.errors] == []
    assert result.files_checked > 1000


def test_ecosystem_corpus_lints_without_internal_error(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO_ROOT / "bench" / "corpus"))
    try:
        import ecosystem
    finally:
        sys.path.pop(0)
    cache = REPO_ROOT / ".cache" / "ecosystem"

    runs, failures = ecosystem.run(sorted(ecosystem.PROJECTS), cache, jobs=2)

    if not runs:
        pytest.skip(f"no project could be downloaded: {failures}")
    print(ecosystem.report(runs))  # noqa: T201
    assert [e.describe() for r in runs for e in r.result.errors] == []
    assert failures == [], "some pinned releases could not be downloaded"
