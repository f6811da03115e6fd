"""--add-noqa: every current finding suppressed where it is; the next run is clean."""

from __future__ import annotations

from pathlib import Path

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
