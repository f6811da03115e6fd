"""--add-noqa: every current finding suppressed where it is, so that the next run is
clean; and the lines it edits or refuses."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from ranklint.faces import noqa
from ranklint.faces.noqa import add_noqa
from ranklint.findings import Finding, Severity
from tests.conftest import write

GUARDED = "import torch.distributed as dist\n\n\ndef step(rank, t):\n    if rank == 0:\n"


def test_add_noqa_suppresses_every_finding_and_a_second_run_is_clean(
    run_cli, tmp_path: Path
) -> None:
    write(
        tmp_path / "a.py",
        GUARDED + "        dist.all_reduce(t)\n    if rank == 1:\n        dist.barrier()\n",
    )
    write(tmp_path / "b.py", "import torch.distributed as dist\ndist.init_process_group()\n")

    added = run_cli("check", str(tmp_path), "--no-cache", "--confidence", "low", "--add-noqa")
    again = run_cli("check", str(tmp_path), "--no-cache", "--confidence", "low")

    assert added.code == 0
    assert "added 3 noqa comments to 2 files" in added.err
    assert again.code == 0
    assert (tmp_path / "a.py").read_text(encoding="utf-8").splitlines()[5:] == [
        "        dist.all_reduce(t)  # noqa: RNK102",
        "    if rank == 1:",
        "        dist.barrier()  # noqa: RNK102",
    ]


def test_add_noqa_merges_into_an_existing_noqa_list(run_cli, tmp_path: Path) -> None:
    write(tmp_path / "a.py", GUARDED + "        dist.all_reduce(t)  # noqa: E501 (long)\n")

    run_cli("check", str(tmp_path), "--no-cache", "--confidence", "low", "--add-noqa")

    last = (tmp_path / "a.py").read_text(encoding="utf-8").splitlines()[-1]
    assert last == "        dist.all_reduce(t)  # noqa: E501, RNK102 (long)"


def test_add_noqa_moves_past_a_backslash_continuation(run_cli, tmp_path: Path) -> None:
    write(tmp_path / "a.py", GUARDED + "        dist.all_reduce(\\\n            t)\n")

    result = run_cli("check", str(tmp_path), "--no-cache", "--confidence", "low", "--add-noqa")
    again = run_cli("check", str(tmp_path), "--no-cache", "--confidence", "low")

    text = (tmp_path / "a.py").read_text(encoding="utf-8")
    assert result.code == 0
    assert text.endswith("        dist.all_reduce(\\\n            t)  # noqa: RNK102\n")
    assert again.code == 0


def test_add_noqa_keeps_bom_and_crlf_line_endings(run_cli, tmp_path: Path) -> None:
    source = (GUARDED + "        dist.barrier()\n").replace("\n", "\r\n")
    (tmp_path / "a.py").write_bytes(b"\xef\xbb\xbf" + source.encode("utf-8"))

    run_cli("check", str(tmp_path), "--no-cache", "--confidence", "low", "--add-noqa")

    data = (tmp_path / "a.py").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    assert data.endswith(b"        dist.barrier()  # noqa: RNK102\r\n")
    assert data.count(b"\r\n") == data.count(b"\n")


def _finding(path: Path, line: int, end_line: int | None = None) -> Finding:
    end = end_line or line
    return Finding("RNK102", "n", Severity.ERROR, "m", str(path), line, 1, end, 2)


def test_add_noqa_leaves_a_finding_whose_lines_all_sit_inside_a_string(tmp_path: Path) -> None:
    path = write(tmp_path / "a.py", 'x = f("""\nabc\n""")\n')

    report = add_noqa([_finding(path, 1, 2)])

    assert report.added == 0
    assert [f.line for f in report.unplaced] == [1]
    assert path.read_text(encoding="utf-8") == 'x = f("""\nabc\n""")\n'


def test_add_noqa_refuses_a_file_changed_since_it_was_checked(tmp_path: Path) -> None:
    path = write(tmp_path / "a.py", "x = 1\n")
    finding = _finding(path, 1)

    original = Path.read_bytes
    calls = []

    def changing(self: Path) -> bytes:
        calls.append(self)
        if len(calls) == 2:  # the check just before writing
            return b"y = 2\n"
        return original(self)

    import pytest

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Path, "read_bytes", changing)
        report = add_noqa([finding])

    assert report.refused == [(str(path), "it changed on disk since it was checked")]
    assert path.read_text(encoding="utf-8") == "x = 1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py"]


def test_add_noqa_with_baseline_is_a_usage_error(run_cli, tmp_path: Path) -> None:
    write(tmp_path / "a.py", "x = 1\n")

    result = run_cli("check", str(tmp_path), "--add-noqa", "--baseline", "b.json")

    assert result.code == 2
    assert "pick one" in result.err


# -- the lines it edits or refuses ---------------------------------------------


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
