"""--color auto|always|never and NO_COLOR for the text format."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import pytest

from ranklint.faces.check_output import use_color
from tests.conftest import write

BUGGY = "import torch.distributed as dist\ndist.init_process_group()\n"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_color_always_paints_path_and_code_and_never_leaves_plain_text(
    run_cli, tmp_path: Path
) -> None:
    write(tmp_path / "a.py", BUGGY)

    painted = run_cli("check", str(tmp_path / "a.py"), "--no-cache", "--color", "always")
    plain = run_cli("check", str(tmp_path / "a.py"), "--no-cache", "--color", "never")

    assert painted.out.startswith(f"\x1b[1m{tmp_path / 'a.py'}\x1b[0m:2:1: \x1b[31mRNK101\x1b[0m ")
    assert "\x1b[34m2 |\x1b[0m dist.init_process_group()\n" in painted.out
    assert "\x1b[" not in plain.out
    assert plain.out.startswith(f"{tmp_path / 'a.py'}:2:1: RNK101 ")
    assert "2 | dist.init_process_group()\n" in plain.out


def test_color_always_paints_the_concise_format_too(run_cli, tmp_path: Path) -> None:
    write(tmp_path / "a.py", BUGGY)

    run = run_cli(
        "check", str(tmp_path / "a.py"), "--no-cache", "--color", "always", "--format", "concise"
    )

    assert run.out.startswith(f"\x1b[1m{tmp_path / 'a.py'}\x1b[0m:2:1: \x1b[31mRNK101\x1b[0m ")
    assert run.out.count("\n") == 1


@pytest.mark.parametrize(
    ("choice", "terminal", "env", "expected"),
    [
        ("auto", True, {}, True),
        ("auto", False, {}, False),
        ("auto", True, {"NO_COLOR": "1"}, False),
        ("auto", True, {"TERM": "dumb"}, False),
        ("always", False, {"NO_COLOR": "1"}, True),
        ("never", True, {}, False),
    ],
)
def test_use_color_follows_the_choice_terminal_and_environment(
    monkeypatch: pytest.MonkeyPatch, choice: str, terminal: bool, env: dict, expected: bool
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    out = _Terminal() if terminal else io.StringIO()

    assert use_color(argparse.Namespace(color=choice), out) is expected
