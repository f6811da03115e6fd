"""Which configuration a run uses: found from the checked paths, and `extend`."""

from __future__ import annotations

from pathlib import Path

import pytest

from ranklint.config import ConfigError, load_config
from tests.conftest import write

BUGGY = "import torch.distributed as dist\ndist.init_process_group()\n"


def test_checking_a_subfolder_uses_its_own_pyproject(run_cli, tmp_path: Path) -> None:
    write(tmp_path / "trainer" / "pyproject.toml", "[tool.ranklint]\nignore = ['RNK101']\n")
    write(tmp_path / "trainer" / "train.py", BUGGY)

    result = run_cli("check", "trainer", "--no-cache", cwd=tmp_path)

    assert (result.code, result.out) == (0, "")


def test_extend_inherits_the_parent_table_and_own_keys_win(tmp_path: Path) -> None:
    write(
        tmp_path / "pyproject.toml",
        "[tool.ranklint]\nignore = ['RNK101']\nextend-select = ['RNK2']\n",
    )
    write(
        tmp_path / "sub" / "pyproject.toml",
        "[tool.ranklint]\nextend = '../pyproject.toml'\nignore = ['RNK301']\n",
    )

    config = load_config(cwd=tmp_path / "sub")

    assert config.ignore == ("RNK301",)
    assert config.extend_select == ("RNK2",)
    assert config.root == tmp_path / "sub"


def test_extend_chain_of_three_files(tmp_path: Path) -> None:
    write(tmp_path / "base.toml", "extend-select = ['RNK2']\n")
    write(tmp_path / "mid" / "ranklint.toml", "extend = '../base.toml'\nignore = ['RNK201']\n")
    write(
        tmp_path / "mid" / "leaf" / "pyproject.toml",
        "[tool.ranklint]\nextend = '../ranklint.toml'\n",
    )

    config = load_config(cwd=tmp_path / "mid" / "leaf")

    assert (config.extend_select, config.ignore) == (("RNK2",), ("RNK201",))


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"pyproject.toml": "[tool.ranklint]\nextend = 'pyproject.toml'\n"}, "extend: a cycle"),
        ({"pyproject.toml": "[tool.ranklint]\nextend = 3\n"}, "extend: expected a path"),
        (
            {"pyproject.toml": "[tool.ranklint]\nextend = 'nope.toml'\n"},
            "configuration file not found",
        ),
        (
            {"pyproject.toml": "[tool.ranklint]\nextend = 'b.toml'\n", "b.toml": "selectt = []\n"},
            "unknown key 'selectt'",
        ),
    ],
)
def test_bad_extend_is_a_clear_config_error(tmp_path: Path, files: dict, message: str) -> None:
    for name, text in files.items():
        write(tmp_path / name, text)

    with pytest.raises(ConfigError, match=message):
        load_config(cwd=tmp_path)


def test_bad_extend_through_the_cli_exits_2(run_cli, tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.ranklint]\nextend = 'gone.toml'\n")
    write(tmp_path / "a.py", "x = 1\n")

    result = run_cli("check", "a.py", cwd=tmp_path)

    assert result.code == 2
    assert "gone.toml: configuration file not found" in result.err
