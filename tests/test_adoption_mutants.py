"""The edge cases of the adoption faces that the broader tests leave open: the exact
fingerprint, path and file format of a baseline, the counts it loads and compares,
the lines ``--add-noqa`` edits or refuses, and the spans RNK002's fix removes."""

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

from ranklint import Config, lint_source
from ranklint.faces import noqa
from ranklint.faces.baseline import BaselineError, compare, key_of, load, render
from ranklint.faces.noqa import add_noqa
from ranklint.findings import Finding, Severity
from ranklint.fixes import apply_fixes
from ranklint.rules.framework.unused_suppression import UnusedSuppression, unused_suppressions
from ranklint.suppressions import Suppressions
from tests.conftest import write


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


# -- --add-noqa -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "edited"),
    [
        pytest.param("x = 1   \n", "x = 1  # noqa: RNK102\n", id="trailing-spaces-dropped"),
        pytest.param("x = MAX\n", "x = MAX  # noqa: RNK102\n", id="only-the-ending-split-off"),
        pytest.param(
            "x = 1  # noqa:E501,W291\n",
            "x = 1  # noqa:E501, W291, RNK102\n",
            id="merged-into-a-list-without-spaces",
        ),
    ],
)
def test_add_noqa_appends_the_code_after_the_lines_text_or_into_its_noqa_list(
    tmp_path: Path, line: str, edited: str
) -> None:
    path = write(tmp_path / "a.py", line)

    report = add_noqa([_finding(path, 1)])

    assert path.read_text(encoding="utf-8") == edited
    assert (report.added, report.files) == (1, [str(path)])


def test_add_noqa_leaves_a_line_whose_noqa_list_already_names_the_code(tmp_path: Path) -> None:
    path = write(tmp_path / "a.py", "x = 1  # noqa: E501, RNK102\n")

    report = add_noqa([_finding(path, 1)])

    assert path.read_text(encoding="utf-8") == "x = 1  # noqa: E501, RNK102\n"
    assert (report.added, report.files, report.refused) == (0, [], [])


def test_add_noqa_still_places_the_findings_after_one_it_cannot_place(tmp_path: Path) -> None:
    path = write(tmp_path / "a.py", 'x = f("""\nabc\n""")\ny = 2\n')
    inside = _finding(path, 2)

    report = add_noqa([inside, _finding(path, 4)])

    assert report.unplaced == [inside]
    assert report.added == 1
    assert path.read_text(encoding="utf-8") == 'x = f("""\nabc\n""")\ny = 2  # noqa: RNK102\n'


def test_add_noqa_edits_a_file_that_parses_though_the_compiler_would_reject_it(
    tmp_path: Path,
) -> None:
    path = write(tmp_path / "a.py", "return 1\n")

    report = add_noqa([_finding(path, 1)])

    assert report.refused == []
    assert path.read_text(encoding="utf-8") == "return 1  # noqa: RNK102\n"


def test_add_noqa_refuses_a_file_it_cannot_read_and_says_why(tmp_path: Path) -> None:
    missing = tmp_path / "gone.py"

    report = add_noqa([_finding(missing, 1)])

    ((path, reason),) = report.refused
    assert path == str(missing)
    assert reason.startswith("cannot read it: ")
    assert os.strerror(errno.ENOENT) in reason


def test_add_noqa_refuses_an_edit_that_would_not_compile_and_keeps_the_file(
    tmp_path: Path,
) -> None:
    path = write(tmp_path / "a.py", "x = = 1\n")

    report = add_noqa([_finding(path, 1)])

    ((refused, reason),) = report.refused
    assert refused == str(path)
    assert reason.startswith("the edited file would not compile: ")
    assert (report.added, report.files) == (0, [])
    assert path.read_text(encoding="utf-8") == "x = = 1\n"


def test_add_noqa_reports_a_file_it_cannot_write_with_the_systems_reason(
    tmp_path: Path,
) -> None:
    path = write(tmp_path / "a.py", "x = 1\n")

    def failing(file: Path, data: bytes) -> None:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(file))

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(noqa, "replace_file", failing)
        report = add_noqa([_finding(path, 1)])

    assert report.refused == [(str(path), f"cannot write it: {os.strerror(errno.EACCES)}")]
    assert (report.added, report.files) == (0, [])
    assert path.read_text(encoding="utf-8") == "x = 1\n"


# -- RNK002 ---------------------------------------------------------------------

JUDGED = ("RNK002", "RNK301", "RNK103")


def _rnk002(source: str) -> list[Finding]:
    result = lint_source(source, "pkg/mod.py", Config(select=JUDGED))
    assert result.errors == []
    return [finding for finding in result.findings if finding.code == "RNK002"]


def test_stale_code_is_reported_as_a_one_line_warning_of_the_rule() -> None:
    (finding,) = _rnk002("x = 1  # noqa: RNK301\n")

    assert (finding.code, finding.name, finding.severity) == (
        "RNK002",
        "unused-suppression",
        Severity.WARNING,
    )
    assert (finding.line, finding.col, finding.end_line, finding.end_col) == (1, 8, 1, 22)


def test_stale_code_on_a_last_line_without_a_newline_is_reported() -> None:
    findings = _rnk002("y = 0\nx = 1  # noqa: RNK301")

    assert [(f.line, f.col, f.end_col) for f in findings] == [(2, 8, 22)]


@pytest.mark.parametrize(
    "first",
    ["x = 0  # noqa", "x = 0  # noqa: E501", "from torch.distributed import *  # noqa: RNK301"],
    ids=["bare-noqa", "unjudged-code", "used-code"],
)
def test_stale_code_after_a_line_with_nothing_stale_is_still_reported(first: str) -> None:
    source = f"{first}\nrank = get_rank()\ny = 1  # noqa: RNK103\n"

    findings = _rnk002(source)

    assert [(f.line, f.message[:8]) for f in findings] == [(3, "`RNK103`")]


def test_suppressed_line_without_a_suppression_comment_is_reported_from_column_1() -> None:
    text = "x = 1\n"

    found = unused_suppressions(
        UnusedSuppression,
        "m.py",
        text,
        Suppressions(by_line={1: frozenset({"RNK301"})}),
        set(),
        ["RNK301"],
    )

    ((code, finding),) = found
    assert code == "RNK301"
    assert (finding.line, finding.col, finding.end_col, finding.fix) == (1, 1, 6, None)


def _fixed(source: str) -> str:
    fixed, _ = apply_fixes(source, [f.fix for f in _rnk002(source) if f.fix is not None])
    return fixed


@pytest.mark.parametrize(
    ("before", "after"),
    [
        pytest.param(
            "x = 1  # noqa: RNK301  # noqa: E501\n",
            "x = 1  # noqa: E501\n",
            id="earlier-of-two-noqa-comments",
        ),
        pytest.param(
            "x = 1  # noqa: RNK301 (old)  # keep: me # and me\n",
            "x = 1  # keep: me # and me\n",
            id="up-to-the-next-comment-only",
        ),
        pytest.param(
            "x = 1  # ranklint: ignore[RNK301]# keep\n",
            "x = 1  # keep\n",
            id="next-comment-right-after-it",
        ),
        pytest.param("x = 1  # noqa: RNK301 (was needed)\n", "x = 1\n", id="with-its-explanation"),
    ],
)
def test_fix_of_a_wholly_stale_suppression_removes_it_and_keeps_the_other_comments(
    before: str, after: str
) -> None:
    fixed = _fixed(before)

    assert fixed == after


def test_fix_of_several_stale_codes_names_them_all_in_order() -> None:
    findings = _rnk002("x = 1  # noqa: RNK301, RNK103\n")

    assert {f.fix.message for f in findings if f.fix is not None} == {
        "Remove the unused suppression of RNK103, RNK301"
    }
    assert len(findings) == 2
