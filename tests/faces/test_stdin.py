"""`ranklint check - --stdin-filename NAME`: one source from standard input."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from tests.conftest import write

BUGGY = b"import torch.distributed as dist\ndist.init_process_group()\n"


@pytest.fixture
def stdin(monkeypatch: pytest.MonkeyPatch):
    def feed(data: bytes) -> None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))

    return feed


def test_stdin_source_is_checked_under_the_given_name(run_cli, stdin, tmp_path: Path) -> None:
    stdin(BUGGY)

    result = run_cli("check", "-", "--stdin-filename", "pkg/train.py", "--no-cache")

    assert result.code == 1
    assert result.out.startswith("pkg/train.py:2:1: RNK101 ")


def test_stdin_name_gets_its_per_file_ignores(run_cli, stdin, tmp_path: Path) -> None:
    write(
        tmp_path / "pyproject.toml",
        '[tool.ranklint]\nper-file-ignores = { "pkg/**" = ["RNK101"] }\n',
    )
    stdin(BUGGY)

    result = run_cli("check", "-", "--stdin-filename", "pkg/train.py", cwd=tmp_path)

    assert result.code == 0
    assert result.out == ""


def test_stdin_excluded_name_with_force_exclude_is_skipped(run_cli, stdin, tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[tool.ranklint]\nextend-exclude = ["vendor/"]\n')
    stdin(BUGGY)

    result = run_cli(
        "check", "-", "--stdin-filename", "vendor/x.py", "--force-exclude", cwd=tmp_path
    )

    assert (result.code, result.out) == (0, "")


def test_stdin_without_a_name_reports_as_dash(run_cli, stdin) -> None:
    stdin(BUGGY)

    result = run_cli("check", "-", "--format", "json")

    assert result.code == 1
    assert '"filename": "-"' in result.out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("check", "-", "a.py"), "`-` (standard input) must be the only path"),
        (("check", "a.py", "--stdin-filename", "x.py"), "--stdin-filename needs the path `-`"),
    ],
)
def test_stdin_misuse_is_a_usage_error(run_cli, stdin, argv: tuple[str, ...], message: str) -> None:
    stdin(BUGGY)

    result = run_cli(*argv)

    assert result.code == 2
    assert message in result.err
