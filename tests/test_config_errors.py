"""Configuration errors end the CLI with one clear line and exit 2, never a traceback."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conftest import run_subprocess, write


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("[tool.ranklint\nselect = [\n", "invalid TOML"),
        ('[tool.ranklint]\nselect = "RNK1"\n', "select: expected a list of strings, got a string"),
        ("[tool.ranklint]\nexclude = [1, 2]\n", "exclude: expected a list of strings"),
        ('[tool.ranklint]\nextend-selct = ["RNK1"]\n', "did you mean 'extend-select'?"),
        ('[tool.ranklint]\nignore = ["RNK9"]\n', "unknown rule code or prefix 'RNK9'"),
        ('[tool.ranklint.per-file-ignores]\n"tests/*" = ["RNK12"]\n', "RNK12"),
        ('[tool.ranklint]\nextend-exclude = ["build\\\\"]\n', "bad pattern"),
    ],
    ids=["malformed-toml", "wrong-type", "wrong-item-type", "unknown-key", "unknown-code",
         "unknown-code-per-file", "bad-glob"],
)  # fmt: skip
def test_bad_configuration_exits_2_with_one_line_and_no_traceback(
    tmp_path: Path, toml: str, message: str
) -> None:
    write(tmp_path / "pyproject.toml", toml)
    write(tmp_path / "a.py", "x = 1\n")

    result = run_subprocess(sys.executable, "-m", "ranklint", "check", cwd=tmp_path)

    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("ranklint: error: ")
    assert result.stderr.count("\n") == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_code_on_the_command_line_exits_2(tmp_path: Path) -> None:
    write(tmp_path / "a.py", "x = 1\n")

    result = run_subprocess(
        sys.executable, "-m", "ranklint", "check", "--ignore", "RNK101,XYZ1", cwd=tmp_path
    )

    assert result.returncode == 2
    assert "unknown rule code or prefix 'XYZ1'" in result.stderr
    assert "Traceback" not in result.stderr
