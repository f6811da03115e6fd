"""--baseline: record today's findings, fail only on new ones, report and prune stale records;
the exact fingerprint, path and file format of a baseline, and the counts it loads and
compares."""

from __future__ import annotations

import errno
import hashlib
import json
import locale
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from ranklint.faces.baseline import BaselineError, compare, key_of, load, render
from ranklint.findings import Finding, Severity
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
        "--output-format",
        "concise",
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
        "check",
        *paths,
        "--no-cache",
        "--baseline",
        "ranklint-baseline.json",
        "--output-format",
        "concise",
        *extra,
        cwd=project,
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


# -- baseline: helpers of the edge cases below ---------------------------------


def _finding(path: Path, line: int, end_line: int | None = None, code: str = "RNK102") -> Finding:
    return Finding(code, "n", Severity.ERROR, "m", str(path), line, 1, end_line or line, 2)


def _fingerprint(code: str, *lines: str) -> str:
    text = "\n".join(lines)
    return hashlib.sha256(f"{code}\0{text}".encode()).hexdigest()[:16]


@pytest.fixture
def ascii_locale() -> Iterator[None]:
    """The locale's codec is ASCII, as on a machine whose default codec is not UTF-8."""
    previous = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        yield
    finally:
        locale.setlocale(locale.LC_CTYPE, previous)


# -- baseline: keys -------------------------------------------------------------


def test_fingerprint_is_the_sha256_prefix_of_the_code_and_the_spans_normalised_lines(
    tmp_path: Path,
) -> None:
    path = write(tmp_path / "train.py", "before = 0\na   =  1\n\tb = (2,    3)  \nafter = 4\n")

    key = key_of(_finding(path, 2, 3), tmp_path, {})

    assert key == ("RNK102", "train.py", _fingerprint("RNK102", "a = 1", "b = (2, 3)"))
    assert len(key[2]) == 16


def test_fingerprint_of_a_finding_in_a_file_that_cannot_be_read_covers_no_text(
    tmp_path: Path,
) -> None:
    missing = tmp_path / "gone.py"

    key = key_of(_finding(missing, 1), tmp_path, {})

    assert key == ("RNK102", "gone.py", _fingerprint("RNK102", ""))


def test_fingerprint_of_a_line_with_invalid_utf8_reads_the_bad_bytes_as_replacements(
    tmp_path: Path,
) -> None:
    path = tmp_path / "train.py"
    path.write_bytes(b"x = '\xff'\n")

    key = key_of(_finding(path, 1), tmp_path, {})

    assert key[2] == _fingerprint("RNK102", "x = '\ufffd'")


def test_fingerprint_of_a_non_ascii_line_does_not_depend_on_the_locale(
    tmp_path: Path, ascii_locale: None
) -> None:
    path = write(tmp_path / "train.py", "name = 'données'\n")

    key = key_of(_finding(path, 1), tmp_path, {})

    assert key[2] == _fingerprint("RNK102", "name = 'données'")


def test_path_of_a_key_is_relative_to_the_baselines_folder_not_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "src" / "train.py", "x = 1\n")
    monkeypatch.chdir(tmp_path)

    key = key_of(_finding(path, 1), tmp_path / "conf", {})

    assert key[1] == "../src/train.py"


def test_path_of_a_finding_on_another_drive_than_the_baseline_is_its_absolute_path(
    tmp_path: Path,
) -> None:
    path = write(tmp_path / "train.py", "x = 1\n")

    def other_drive(path: str, start: str | None = None) -> str:
        raise ValueError("path is on mount 'D:', start on mount 'C:'")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os.path, "relpath", other_drive)
        key = key_of(_finding(path, 1), tmp_path / "conf", {})

    assert key == (
        "RNK102",
        Path(os.path.abspath(path)).as_posix(),
        _fingerprint("RNK102", "x = 1"),
    )


# -- baseline: the file ---------------------------------------------------------


def test_render_writes_json_indented_by_two_spaces_with_a_final_newline(tmp_path: Path) -> None:
    path = write(tmp_path / "train.py", "x = 1\n")
    digest = _fingerprint("RNK102", "x = 1")

    text = render([_finding(path, 1), _finding(path, 1)], tmp_path)

    assert text == (
        "{\n"
        '  "ranklint-baseline": 1,\n'
        '  "findings": [\n'
        "    {\n"
        '      "code": "RNK102",\n'
        '      "path": "train.py",\n'
        f'      "fingerprint": "{digest}",\n'
        '      "count": 2\n'
        "    }\n"
        "  ]\n"
        "}\n"
    )


def _entry(code: str = "RNK102", **extra: object) -> dict[str, object]:
    return {"code": code, "path": "train.py", "fingerprint": "f" * 16, **extra}


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        pytest.param([_entry()], {"RNK102": 1}, id="no-count-is-one"),
        pytest.param([_entry(count=3)], {"RNK102": 3}, id="count-as-written"),
        pytest.param(
            [_entry(count=1), _entry(count=2), _entry("RNK103")],
            {"RNK102": 3, "RNK103": 1},
            id="repeated-entries-add-up",
        ),
    ],
)
def test_load_counts_each_recorded_key(
    tmp_path: Path, entries: list[dict[str, object]], expected: dict[str, int]
) -> None:
    file = tmp_path / "baseline.json"
    file.write_text(json.dumps({"ranklint-baseline": 1, "findings": entries}), encoding="utf-8")

    counts = load(file)

    assert counts == Counter({(code, "train.py", "f" * 16): n for code, n in expected.items()})


def test_load_reads_a_non_ascii_path_whatever_the_locale(
    tmp_path: Path, ascii_locale: None
) -> None:
    file = tmp_path / "baseline.json"
    entry = {"code": "RNK102", "path": "données/train.py", "fingerprint": "f" * 16}
    document = json.dumps({"ranklint-baseline": 1, "findings": [entry]}, ensure_ascii=False)
    file.write_bytes(document.encode("utf-8"))

    counts = load(file)

    assert counts == Counter({("RNK102", "données/train.py", "f" * 16): 1})


def test_load_of_a_folder_says_why_it_cannot_be_read(tmp_path: Path) -> None:
    folder = tmp_path / "baseline.json"
    folder.mkdir()

    with pytest.raises(BaselineError) as raised:
        load(folder)

    assert str(raised.value) == f"{folder}: cannot read baseline: {os.strerror(errno.EISDIR)}"


@pytest.mark.parametrize(
    "document",
    ['{"findings": []}', '{"ranklint-baseline": 2, "findings": []}', "[1]"],
    ids=["no-version", "other-version", "not-an-object"],
)
def test_load_of_a_file_that_is_no_baseline_names_the_expected_key(
    tmp_path: Path, document: str
) -> None:
    file = tmp_path / "baseline.json"
    file.write_text(document, encoding="utf-8")

    with pytest.raises(BaselineError) as raised:
        load(file)

    assert str(raised.value) == (
        f"{file}: not a ranklint baseline of version 1 (expected a 'ranklint-baseline' key)"
    )


# -- baseline: compare ----------------------------------------------------------


@pytest.mark.parametrize(
    ("recorded", "found", "known", "new", "stale"),
    [
        pytest.param(2, 2, 2, 0, 0, id="as-many-as-recorded"),
        pytest.param(3, 2, 2, 0, 1, id="fewer-than-recorded"),
        pytest.param(2, 3, 2, 1, 0, id="more-than-recorded"),
    ],
)
def test_compare_matches_each_finding_of_a_key_to_one_record_and_lists_only_unmatched_ones(
    tmp_path: Path, recorded: int, found: int, known: int, new: int, stale: int
) -> None:
    path = write(tmp_path / "train.py", "x = 1\n")
    findings = [_finding(path, 1) for _ in range(found)]
    key = ("RNK102", "train.py", _fingerprint("RNK102", "x = 1"))

    comparison = compare(findings, Counter({key: recorded}), tmp_path)

    assert comparison.known == known
    assert comparison.new == findings[found - new :]
    # A key whose records were all matched is not stale (not even with a count of 0).
    assert dict(comparison.stale) == ({key: stale} if stale else {})
