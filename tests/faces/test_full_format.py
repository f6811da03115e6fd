"""The `full` text format (the default): code frames, wrapping at the terminal's
width, the call chain of cross-file findings, and `--output-format concise`."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from ranklint.faces.check_output import DEFAULT_WIDTH, file_lines, terminal_width
from ranklint.faces.code_frames import format_full, source_frame, wrap
from ranklint.findings import Applicability, Edit, Finding, Fix, Severity, TraceStep
from tests.conftest import write

BUGGY = "import torch.distributed as dist\n\n\ndef f():\n    pass\ndist.init_process_group()\n"
# A helper two calls down reaches a barrier; its caller is rank-guarded in another file.
HELPER = "import torch.distributed as dist\n\n\ndef save():\n    dist.barrier()\n"
CALLER = "import torch.distributed as dist\nfrom ckpt import save\n\n\ndef step():\n"
CALLER += "    if dist.get_rank() == 0:\n        save()\n"


def finding(
    *,
    path: str = "pkg/train.py",
    line: int = 3,
    col: int = 5,
    end_line: int = 3,
    end_col: int = 18,
    message: str = "`barrier` is reached only when `rank == 0`",
    trace: tuple[TraceStep, ...] = (),
    fix: Fix | None = None,
) -> Finding:
    return Finding(
        "RNK102",
        "rank-divergent-collective",
        Severity.ERROR,
        message,
        path,
        line,
        col,
        end_line,
        end_col,
        trace,
        fix,
    )


LINES = ["def f(rank):", "    if rank == 0:", "    dist.barrier()", "", "", "y = 2"]


@pytest.fixture(autouse=True)
def columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.delenv("NO_COLOR", raising=False)


def test_full_format_frames_the_finding_with_numbered_lines_and_a_marker_under_its_span() -> None:
    text = format_full([finding()], lambda path: LINES, width=80)

    assert text == (
        "pkg/train.py:3:5: RNK102 `barrier` is reached only when `rank == 0`\n"
        "  |\n"
        "1 | def f(rank):\n"
        "2 |     if rank == 0:\n"
        "3 |     dist.barrier()\n"
        "  |     ^^^^^^^^^^^^^\n"
        "  |\n"
        "\n"
    )


def test_frame_context_drops_blank_lines_at_its_edges_but_keeps_inner_ones() -> None:
    lines = ["a = 1", "", "b = 2", "", "c = 3", "", ""]

    frame = source_frame(finding(line=5, col=1, end_line=5, end_col=2), lines, color=False)

    assert frame == ["  |", "3 | b = 2", "4 |", "5 | c = 3", "  | ^", "  |"]


def test_gutter_is_as_wide_as_the_largest_line_number_shown() -> None:
    lines = [f"x{n} = {n}" for n in range(1, 12)]

    frame = source_frame(finding(line=9, col=1, end_line=9, end_col=3), lines, color=False)

    assert frame[0] == "   |"
    assert frame[1] == " 7 | x7 = 7"
    assert frame[-2] == "11 | x11 = 11"


def test_marker_of_a_span_over_several_lines_runs_to_the_end_of_its_first_line() -> None:
    frame = source_frame(finding(line=2, col=5, end_line=3, end_col=9), LINES, color=False)

    assert "  |     ^^^^^^^^^^^^^" in frame


def test_marker_keeps_the_tabs_of_the_line_so_that_it_lines_up() -> None:
    lines = ["if x:", "\tdist.barrier()"]

    frame = source_frame(finding(line=2, col=2, end_line=2, end_col=6), lines, color=False)

    assert frame[2:4] == ["2 | \tdist.barrier()", "  | \t^^^^"]


def test_control_characters_of_the_source_are_shown_as_question_marks() -> None:
    lines = ["x = '\x1b[31m'"]

    frame = source_frame(finding(line=1, col=1, end_line=1, end_col=2), lines, color=False)

    assert frame[1] == "1 | x = '?[31m'"


def test_finding_past_the_end_of_the_file_as_read_has_no_frame() -> None:
    assert source_frame(finding(line=40), LINES, color=False) == []


def test_finding_whose_file_cannot_be_read_is_its_line_alone(tmp_path: Path) -> None:
    lines_of = file_lines()
    missing = str(tmp_path / "deleted.py")

    text = format_full([finding(path=missing)], lines_of, width=200)

    assert text == f"{missing}:3:5: RNK102 `barrier` is reached only when `rank == 0`\n\n"


def test_file_lines_reads_a_declared_encoding_and_gives_none_for_bytes_it_cannot_decode(
    tmp_path: Path,
) -> None:
    latin = tmp_path / "latin.py"
    latin.write_bytes("# -*- coding: latin-1 -*-\nx = 'café'\n".encode("latin-1"))
    broken = tmp_path / "broken.py"
    broken.write_bytes(b"x = '\xff\xfe'\n")
    lines_of = file_lines({"-": "from stdin\n"})

    assert lines_of(str(latin))[1] == "x = 'café'"
    assert lines_of(str(broken)) is None
    assert lines_of("-") == ["from stdin", ""]


def test_standard_input_without_a_text_is_never_read_from_disk(tmp_path: Path) -> None:
    assert file_lines()("-") is None
    assert file_lines({"name.py": None})("name.py") is None


def test_file_lines_splits_where_the_parser_numbers_lines_not_at_form_feeds() -> None:
    lines = file_lines({"a.py": "a = 1\x0c\r\nb = 2\rc = 3\n"})("a.py")

    assert lines == ["a = 1\x0c", "b = 2", "c = 3", ""]


def test_long_message_wraps_at_the_width_and_never_breaks_the_head_or_a_code_span() -> None:
    message = "the collective `dist.all_reduce(loss, op=dist.ReduceOp.AVG)` is " + "word " * 30

    lines = wrap("pkg/train.py:3:5: RNK102", message.strip(), 60, "  ")

    assert lines[0].startswith("pkg/train.py:3:5: RNK102 the collective")
    assert all(len(line) <= 60 for line in lines)
    assert any("`dist.all_reduce(loss, op=dist.ReduceOp.AVG)`" in line for line in lines)
    assert all(line.startswith("  ") for line in lines[1:])
    assert " ".join(line.strip() for line in lines) == f"pkg/train.py:3:5: RNK102 {message.strip()}"


def test_word_longer_than_the_width_keeps_a_line_of_its_own() -> None:
    lines = wrap("a.py:1:1: RNK101", "x " + "y" * 70 + " z", 40, "  ")

    assert lines == ["a.py:1:1: RNK101 x", "  " + "y" * 70, "  z"]


def test_head_wider_than_the_terminal_is_kept_whole_with_the_first_word() -> None:
    head = "a/" * 30 + "b.py:1:1: RNK101"

    lines = wrap(head, "short message", 40, "  ")

    assert lines == [f"{head} short", "  message"]


def test_fix_is_offered_as_help_and_an_unsafe_one_says_so() -> None:
    edit = (Edit(3, 18, 3, 18, "src=0"),)
    safe = finding(fix=Fix(Applicability.SAFE, "Write out `src=0`", edit))
    unsafe = finding(fix=Fix(Applicability.UNSAFE, "Use `group_src`", edit))

    text = format_full([safe, unsafe], lambda path: None, width=100)

    assert "\nhelp: Write out `src=0`\n" in text
    assert "\nhelp: Use `group_src` (unsafe: with `--unsafe-fixes`)\n" in text


def test_trace_lines_follow_the_frame_and_wrap_with_a_deeper_indent() -> None:
    step = TraceStep("pkg/ckpt.py", 12, 5, "calls " + "`save()` " * 12)

    text = format_full([finding(trace=(step,))], lambda path: LINES, width=60)

    lines = text.splitlines()
    marker = lines.index("  |     ^^^^^^^^^^^^^")
    assert lines[marker + 1] == "  |"
    assert lines[marker + 2].startswith("    pkg/ckpt.py:12:5: calls `save()`")
    assert lines[marker + 3].startswith("      `save()`")


def test_colour_paints_the_head_gutter_and_marker_and_leaves_the_text_plain() -> None:
    text = format_full([finding()], lambda path: LINES, width=100, color=True)

    assert text.startswith("\x1b[1mpkg/train.py\x1b[0m:3:5: \x1b[31mRNK102\x1b[0m `barrier`")
    assert "\x1b[34m3 |\x1b[0m     dist.barrier()\n" in text
    assert "\x1b[31m^^^^^^^^^^^^^\x1b[0m\n" in text


def test_terminal_width_is_columns_when_set_else_the_default_off_a_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert terminal_width() == 80
    monkeypatch.delenv("COLUMNS")
    monkeypatch.setattr(sys, "__stdout__", io.StringIO())

    assert terminal_width() == DEFAULT_WIDTH


# -- through the command line ------------------------------------------------------


def test_default_output_is_full_with_a_frame_under_each_finding(run_cli, tmp_path: Path) -> None:
    write(tmp_path / "a.py", BUGGY)

    run = run_cli("check", "a.py", "--no-cache", cwd=tmp_path)

    assert run.code == 1
    assert run.out.startswith(
        "a.py:6:1: RNK101 `torch.distributed.init_process_group()` runs when this module\n"
        "  is imported;"
    )
    assert run.out.endswith(
        "  |\n"
        "4 | def f():\n"
        "5 |     pass\n"
        "6 | dist.init_process_group()\n"
        "  | ^^^^^^^^^^^^^^^^^^^^^^^^^\n"
        "  |\n"
        "\n"
    )
    assert all(len(line) <= 80 for line in run.out.splitlines())


def test_concise_output_is_one_line_per_finding(run_cli, tmp_path: Path) -> None:
    write(tmp_path / "a.py", BUGGY)

    run = run_cli("check", "a.py", "--no-cache", "--output-format", "concise", cwd=tmp_path)

    assert len(run.out.splitlines()) == 1
    assert run.out.startswith("a.py:6:1: RNK101 `torch.distributed.init_process_group()` runs ")
    assert len(run.out) > 100  # never wrapped


def test_format_text_is_the_full_format_under_its_old_name(run_cli, tmp_path: Path) -> None:
    write(tmp_path / "a.py", BUGGY)

    text = run_cli("check", "a.py", "--no-cache", "--format", "text", cwd=tmp_path)
    full = run_cli("check", "a.py", "--no-cache", "--output-format", "full", cwd=tmp_path)

    assert text.out == full.out
    assert "6 | dist.init_process_group()\n" in text.out


def test_cross_file_finding_keeps_its_call_chain_under_its_frame(run_cli, tmp_path: Path) -> None:
    write(tmp_path / "ckpt.py", HELPER)
    write(tmp_path / "train.py", CALLER)

    run = run_cli("check", ".", "--no-cache", cwd=tmp_path)

    assert run.code == 1
    block = run.out.split("\n\n")[0].splitlines()
    assert block[0].startswith("train.py:7:9: RNK102 `save()` (which reaches `barrier`")
    marker = block.index("  |         ^^^^^^")
    assert block[marker - 1] == "7 |         save()"
    assert block[marker + 2 :] == [
        "    train.py:7:9: calls `save()`",
        "    ckpt.py:5:5: `dist.barrier()` here",
    ]


def test_frame_of_standard_input_shows_the_source_read_not_the_file_on_disk(
    run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "a.py", "# the saved file, older than the editor's buffer\n")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(BUGGY.encode())))

    run = run_cli("check", "-", "--stdin-filename", "a.py", cwd=tmp_path)

    assert "6 | dist.init_process_group()\n" in run.out
    assert "older than" not in run.out


def test_undecodable_standard_input_gets_its_finding_without_a_frame(
    run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "a.py", BUGGY)  # a file of that name on disk is not shown either
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"x = '\xff'\n")))

    run = run_cli("check", "-", "--stdin-filename", "a.py", cwd=tmp_path)

    assert run.code == 1
    assert run.out.startswith("a.py:1:6: RNK001 cannot decode")
    assert " | " not in run.out


def test_show_evidence_lines_follow_the_frame_in_the_full_format(run_cli, tmp_path: Path) -> None:
    write(tmp_path / "train.py", CALLER.replace("dist.get_rank() == 0", "rank == 0"))
    write(tmp_path / "ckpt.py", HELPER)

    run = run_cli(
        "check", ".", "--no-cache", "--confidence", "low", "--show-evidence", cwd=tmp_path
    )

    lines = run.out.split("\n\n")[0].splitlines()
    frame_end = max(index for index, line in enumerate(lines) if line.startswith("  |"))
    assert lines[frame_end + 1 :][-6] == "    confidence: medium"
    assert "    source: rank-name (medium): `rank`" in lines[frame_end + 1 :]
