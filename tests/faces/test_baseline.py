"""--baseline: record today's findings, fail only on new ones, report and prune stale records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import write

TRAIN = """\
import torch.distributed as dist


def step(rank, t):
    if rank == 0:
        dist.all_reduce(t)
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write(
        tmp_path / "pyproject.toml",
        "[project]\nname = 'p'\n\n[tool.ranklint]\nconfidence = 'low'\n",
    )
    write(tmp_path / "train.py", TRAIN)
    return tmp_path


def _check(run_cli, project: Path, *extra: str):
    return run_cli(
        "check",
        "train.py",
        "--no-cache",
        "--baseline",
        "ranklint-baseline.json",
        *extra,
        cwd=project,
    )


def test_write_baseline_records_the_findings_and_exits_0(run_cli, project: Path) -> None:
    result = _check(run_cli, project, "--write-baseline")

    data = json.loads((project / "ranklint-baseline.json").read_text(encoding="utf-8"))
    assert result.code == 0
    assert result.out == ""
    assert "recorded 1 finding in ranklint-baseline.json" in result.err
    assert data["ranklint-baseline"] == 1
    assert [(e["code"], e["path"], e["count"]) for e in data["findings"]] == [
        ("RNK102", "train.py", 1)
    ]


def test_baselined_finding_is_not_reported_even_after_lines_move(run_cli, project: Path) -> None:
    _check(run_cli, project, "--write-baseline")
    write(project / "train.py", "# a comment above\n\n" + TRAIN)

    result = _check(run_cli, project)

    assert result.code == 0
    assert result.out == ""
    assert "1 finding recorded in ranklint-baseline.json not shown" in result.err


def test_new_bug_fails_the_run_and_only_it_is_reported(run_cli, project: Path) -> None:
    _check(run_cli, project, "--write-baseline")
    write(project / "train.py", TRAIN + "    if rank == 1:\n        dist.barrier()\n")

    result = _check(run_cli, project)

    assert result.code == 1
    assert result.out.splitlines() == [
        "train.py:8:9: RNK102 `barrier` is reached only when `rank == 1`; ranks that skip it "
        "hang in their next collective; call it on every rank, outside the rank-dependent branch"
    ]


def test_a_second_copy_of_a_baselined_bug_is_new(run_cli, project: Path) -> None:
    _check(run_cli, project, "--write-baseline")
    write(project / "train.py", TRAIN + "    if rank == 0:\n        dist.all_reduce(t)\n")

    result = _check(run_cli, project)

    assert result.code == 1
    assert result.out.count("RNK102") == 1


def test_fixed_bug_leaves_a_stale_record_that_prune_removes(run_cli, project: Path) -> None:
    _check(run_cli, project, "--write-baseline")
    write(project / "train.py", "def step(rank, t):\n    return t\n")

    warned = _check(run_cli, project)
    pruned = _check(run_cli, project, "--baseline-prune")
    after = _check(run_cli, project)

    assert warned.code == 0
    assert "1 record of ranklint-baseline.json no longer match" in warned.err
    assert "pruned 1 stale record" in pruned.err
    data = json.loads((project / "ranklint-baseline.json").read_text(encoding="utf-8"))
    assert data["findings"] == []
    assert "no longer match" not in after.err


def test_edited_flagged_statement_is_new(run_cli, project: Path) -> None:
    _check(run_cli, project, "--write-baseline")
    write(project / "train.py", TRAIN.replace("all_reduce(t)", "all_reduce(t, async_op=False)"))

    result = _check(run_cli, project)

    assert result.code == 1
    assert "no longer match" in result.err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "baseline not found (create it with --write-baseline)"),
        ("{not json", "not a ranklint baseline (invalid JSON"),
        ('{"findings": []}', "expected a 'ranklint-baseline' key"),
        ('{"ranklint-baseline": 1, "findings": {}}', "'findings' must be a list"),
        ('{"ranklint-baseline": 1, "findings": [{"code": "RNK102"}]}', "entry 0 needs code"),
    ],
)
def test_bad_baseline_file_is_a_clear_error_and_exit_2(
    run_cli, project: Path, content: str | None, message: str
) -> None:
    if content is not None:
        write(project / "ranklint-baseline.json", content)

    result = _check(run_cli, project)

    assert result.code == 2
    assert message in result.err
    assert result.out == ""


def test_write_baseline_without_baseline_is_a_usage_error(run_cli, project: Path) -> None:
    result = run_cli("check", "train.py", "--write-baseline", cwd=project)

    assert result.code == 2
    assert "--write-baseline and --baseline-prune need --baseline FILE" in result.err


def _moved_check(run_cli, project: Path, *paths: str, extra: tuple[str, ...] = ()):
    return run_cli(
        "check", *paths, "--no-cache", "--baseline", "ranklint-baseline.json", *extra, cwd=project
    )


def test_finding_of_a_moved_unchanged_file_matches_its_record(run_cli, project: Path) -> None:
    _check(run_cli, project, "--write-baseline")
    (project / "pkg").mkdir()
    (project / "train.py").rename(project / "pkg" / "train.py")

    result = _moved_check(run_cli, project, "pkg/train.py")

    assert (result.code, result.out) == (0, "")
    assert "1 finding matched records of files that moved" in result.err
    assert "no longer match" not in result.err


def test_prune_records_the_new_path_of_a_moved_file(run_cli, project: Path) -> None:
    _check(run_cli, project, "--write-baseline")
    (project / "pkg").mkdir()
    (project / "train.py").rename(project / "pkg" / "train.py")

    pruned = _moved_check(run_cli, project, "pkg/train.py", extra=("--baseline-prune",))
    again = _moved_check(run_cli, project, "pkg/train.py")

    data = json.loads((project / "ranklint-baseline.json").read_text(encoding="utf-8"))
    assert "moved 1 record to the new paths of their files" in pruned.err
    assert [(e["code"], e["path"]) for e in data["findings"]] == [("RNK102", "pkg/train.py")]
    assert (again.code, again.out) == (0, "")
    assert "moved" not in again.err


def test_moved_record_does_not_match_when_its_old_path_still_exists(run_cli, project: Path) -> None:
    _check(run_cli, project, "--write-baseline")
    write(project / "copy.py", TRAIN)

    result = _moved_check(run_cli, project, "train.py", "copy.py")

    assert result.code == 1
    assert result.out.startswith("copy.py:6:9: RNK102")


def test_moved_record_does_not_match_when_two_files_could_be_its_new_place(
    run_cli, project: Path
) -> None:
    _check(run_cli, project, "--write-baseline")
    (project / "train.py").rename(project / "a.py")
    write(project / "b.py", TRAIN)

    result = _moved_check(run_cli, project, "a.py", "b.py")

    assert result.code == 1
    assert sorted(line.split(":")[0] for line in result.out.splitlines()) == ["a.py", "b.py"]


def test_moved_record_does_not_match_when_two_missing_files_could_be_its_old_place(
    tmp_path: Path,
) -> None:
    from collections import Counter

    from ranklint.faces import baseline
    from ranklint.findings import Finding, Severity

    path = write(tmp_path / "now.py", TRAIN)
    finding = Finding("RNK102", "n", Severity.ERROR, "m", str(path), 6, 9, 6, 25)
    (code, _, digest) = baseline.key_of(finding, tmp_path, {})
    one_gone = Counter({(code, "gone.py", digest): 1})
    two_gone = Counter({(code, "gone.py", digest): 1, (code, "also_gone.py", digest): 1})

    moved = baseline.compare([finding], one_gone, tmp_path)
    ambiguous = baseline.compare([finding], two_gone, tmp_path)

    assert (moved.new, moved.known, +moved.stale) == ([], 1, Counter())
    assert moved.moved == Counter({((code, "gone.py", digest), (code, "now.py", digest)): 1})
    assert (ambiguous.new, ambiguous.known, ambiguous.stale) == ([finding], 0, two_gone)


def _records(tmp_path: Path, *paths: str, count: int = 1):
    """Findings of TRAIN in ``paths`` (written), and the key of the first one."""
    from ranklint.faces import baseline
    from ranklint.findings import Finding, Severity

    findings = []
    for name in paths:
        path = write(tmp_path / name, TRAIN)
        for _ in range(count):
            findings.append(Finding("RNK102", "n", Severity.ERROR, "m", str(path), 6, 9, 6, 25))
    return findings, baseline.key_of(findings[0], tmp_path, {})


def test_moved_file_with_two_copies_of_a_finding_matches_both_records_and_no_more(
    tmp_path: Path,
) -> None:
    from collections import Counter

    from ranklint.faces import baseline

    findings, (code, _, digest) = _records(tmp_path, "now.py", count=3)
    old, new = (code, "gone.py", digest), (code, "now.py", digest)

    comparison = baseline.compare(findings, Counter({old: 2}), tmp_path)

    assert (len(comparison.new), comparison.known, +comparison.stale) == (1, 2, Counter())
    assert comparison.moved == Counter({(old, new): 2})
    assert baseline.pruned(Counter({old: 2}), comparison.stale, comparison.moved) == (
        baseline._render(Counter({new: 2}))
    )


def test_record_whose_file_still_exists_is_not_taken_for_a_moved_one(tmp_path: Path) -> None:
    from collections import Counter

    from ranklint.faces import baseline

    findings, (code, _, digest) = _records(tmp_path, "other.py")
    write(tmp_path / "train.py", "# the bug was fixed here\n")
    recorded = Counter({(code, "train.py", digest): 1})

    comparison = baseline.compare(findings, recorded, tmp_path)

    assert (comparison.new, comparison.known) == (findings, 0)
    assert comparison.stale == recorded
    assert comparison.moved == Counter()


def test_fully_matched_record_of_a_missing_path_is_not_matched_again(tmp_path: Path) -> None:
    from collections import Counter

    from ranklint.faces import baseline

    findings, (code, _, digest) = _records(tmp_path, "now.py", count=2)
    recorded = Counter({(code, "gone.py", digest): 1, (code, "now.py", digest): 1})

    comparison = baseline.compare(findings, recorded, tmp_path)

    assert baseline.pruned(recorded, comparison.stale, comparison.moved) == baseline._render(
        Counter({(code, "now.py", digest): 2})
    )
    assert (comparison.new, comparison.known, comparison.moved) == (
        [],
        2,
        Counter({((code, "gone.py", digest), (code, "now.py", digest)): 1}),
    )
