"""``ranklint server``: the command that starts the language server
(:mod:`ranklint.faces.server`), and says how to install it when pygls is missing."""

from __future__ import annotations

import argparse
import importlib.util
import logging
from typing import Any, TextIO

from ranklint.faces.exits import EXIT_ERROR, EXIT_OK

logger = logging.getLogger(__name__)

DESCRIPTION = """\
Run the language server: LSP over standard input and output, for an editor
to start (see docs/editors.md). Diagnostics on open, change and save, with
cross-file findings (the call chain as related information), quick fixes,
`# noqa` actions, fix-all (source.fixAll.ranklint) and the rule's
documentation on hover. Needs the `lsp` extra: pip install 'ranklint[lsp]'."""

INSTALL_HINT = "pip install 'ranklint[lsp]'"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``server`` on the CLI's sub-parsers."""
    server = sub.add_parser(
        "server",
        help="run the language server (LSP over stdio) for editors",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    server.add_argument(
        "--no-cache", action="store_true", help="do not read or write the result cache"
    )
    server.add_argument("--verbose", "-v", action="store_true", help="debug logs (to stderr)")
    return server


def run(args: argparse.Namespace, err: TextIO) -> int:
    """Serve until the client exits; 2 when pygls is not installed."""
    try:
        missing = importlib.util.find_spec("pygls") is None
    except ValueError:  # a module without a spec stands in for it
        missing = True
    if not missing:
        try:
            from ranklint.faces.server import serve
        except ImportError:  # pygls there, lsprotocol or a part of it not
            logger.debug("cannot import the server", exc_info=True)
            missing = True
    if missing:
        err.write(
            "ranklint: error: `ranklint server` needs pygls, which is not installed; "
            f"install the language server with: {INSTALL_HINT}\n"
        )
        return EXIT_ERROR

    serve(cache=not args.no_cache)
    return EXIT_OK
