"""``ranklint server`` where the ``lsp`` extra is not installed (runs without pygls too)."""

from __future__ import annotations

import subprocess
import sys

from ranklint.faces.cli import build_parser

# `pygls` made unimportable the way Python marks a module that is not there.
_WITHOUT_PYGLS = (
    "import sys; sys.modules['pygls'] = None; "
    "from ranklint.faces.cli import main; raise SystemExit(main(['server']))"
)


def test_server_without_pygls_exits_2_and_says_how_to_install_it() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_PYGLS],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "pip install 'ranklint[lsp]'" in done.stderr
    assert done.stdout == ""


def test_server_subcommand_is_listed_in_the_help() -> None:
    assert "server" in build_parser().format_help()
