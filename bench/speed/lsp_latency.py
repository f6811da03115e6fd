"""The language server's latency: an edited file's diagnostics, with a warm cache.

    python bench/speed/lsp_latency.py [--files N] [--rounds R] [--project DIR --edit FILE]

Generates a project of N files (default 500, ``bench/speed/lsp_project.py``)
in a temporary folder, or uses DIR (for example a project of the review
corpus under ``.cache/corpus/src``) and edits FILE in it. Then, in one run:

1. the baseline: ``ranklint check`` of the whole project, cold (no cache) and
   warm (once the cache holds every file; the median of 3 runs);
2. ``ranklint server`` started as a subprocess with pygls's client: the time
   from opening the file to its first diagnostics (the project indexed from
   the warm cache), then R edits of the file, each timed from the didChange
   notification to the publishDiagnostics of that version;
3. R edits of a helper (mod_1: its barrier removed and put back), each timed
   until the diagnostics of its rank-guarded caller in another open file
   (mod_0) change (generated project only).

Prints the medians (and the range) in milliseconds and their ratio to the warm
full check. The target: an edited file's diagnostics in under 1 second for a
500-file project. Times include the JSON-RPC round trip, not the editor.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

sys.path.insert(0, str(Path(__file__).parent))
from lsp_project import make_project

SERVER = [sys.executable, "-m", "ranklint", "server"]


def full_check(root: Path, *, cache: bool) -> float:
    """Seconds of ``ranklint check`` over the whole project (a fresh process)."""
    command = [sys.executable, "-m", "ranklint", "check", "--exit-zero", str(root)]
    if not cache:
        command.append("--no-cache")
    started = time.perf_counter()
    subprocess.run(command, cwd=root, capture_output=True, check=True)
    return time.perf_counter() - started


class Client:
    """pygls's client, with each publication of diagnostics waited for."""

    def __init__(self) -> None:
        self.lsp = LanguageClient("lsp-latency", "1")
        self.diagnostics: dict[str, types.PublishDiagnosticsParams] = {}
        self.changed = asyncio.Event()

        @self.lsp.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(_: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
            self.diagnostics[params.uri] = params
            self.changed.set()

    async def until(self, uri: str, wanted: object) -> types.PublishDiagnosticsParams:
        """The diagnostics of ``uri`` once ``wanted(params)`` holds."""
        while True:
            found = self.diagnostics.get(uri)
            if found is not None and wanted(found):  # type: ignore[operator]
                return found
            self.changed.clear()
            await asyncio.wait_for(self.changed.wait(), 120)

    def open(self, path: Path, text: str) -> None:
        self.lsp.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=path.as_uri(), language_id="python", version=0, text=text
                )
            )
        )

    def change(self, path: Path, text: str, version: int) -> None:
        self.lsp.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(
                    uri=path.as_uri(), version=version
                ),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )


async def measure(
    root: Path, edited: Path, helper: Path | None, rounds: int
) -> dict[str, list[float]]:
    texts = await asyncio.to_thread(
        lambda: {path: path.read_text() for path in (edited, helper) if path is not None}
    )
    client = Client()
    await client.lsp.start_io(*SERVER, cwd=str(root))
    await client.lsp.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
        )
    )
    client.lsp.initialized(types.InitializedParams())
    times: dict[str, list[float]] = {"open": [], "edit": [], "helper": []}
    uri = edited.as_uri()
    started = time.perf_counter()
    client.open(edited, texts[edited])
    await client.until(uri, lambda p: True)
    times["open"].append(time.perf_counter() - started)
    text = texts[edited]
    for version in range(1, rounds + 1):
        started = time.perf_counter()
        client.change(edited, f"{text}\nEDIT_{version} = {version}\n", version)
        await client.until(uri, lambda p, v=version: p.version == v)
        times["edit"].append(time.perf_counter() - started)
    if helper is not None:
        client.open(helper, texts[helper])
        await client.until(helper.as_uri(), lambda p: True)
        original = texts[helper]
        without = original.replace("    dist.barrier()\n", "")
        for version in range(1, rounds + 1):
            before = len(client.diagnostics[uri].diagnostics)
            started = time.perf_counter()
            client.change(helper, without if version % 2 else original, version)
            await client.until(uri, lambda p, n=before: len(p.diagnostics) != n)
            times["helper"].append(time.perf_counter() - started)
    await client.lsp.shutdown_async(None)
    client.lsp.exit(None)
    await client.lsp.stop()
    return times


def row(name: str, seconds: list[float], baseline: float) -> str:
    median = statistics.median(seconds)
    spread = f"{min(seconds) * 1000:.0f}-{max(seconds) * 1000:.0f}"
    return f"| {name} | {median * 1000:.0f} ms | {spread} ms | {median / baseline:.3f} |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--project", type=Path, help="an existing project instead")
    parser.add_argument("--edit", type=Path, help="with --project: the file to edit")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        if args.project is not None:
            root = args.project.resolve()
            edited = (args.edit or next(root.rglob("*.py"))).resolve()
            helper = None
        else:
            root = Path(folder)
            files = make_project(root, args.files)
            edited, helper = files[0], files[1]
        cold = full_check(root, cache=False)
        full_check(root, cache=True)  # fills the cache
        warm = statistics.median(full_check(root, cache=True) for _ in range(3))
        times = asyncio.run(measure(root, edited, helper, args.rounds))
        count = len(list(root.rglob("*.py")))
    print(f"project: {count} files; edited: {edited.name}; {args.rounds} rounds")
    print("| what | median | range | / warm full check |")
    print("|---|---|---|---|")
    print(f"| full `ranklint check`, cold | {cold * 1000:.0f} ms | | {cold / warm:.3f} |")
    print(f"| full `ranklint check`, warm | {warm * 1000:.0f} ms | | 1.000 |")
    print(row("server: open a file (index from the warm cache)", times["open"], warm))
    print(row("server: edit a file, its diagnostics", times["edit"], warm))
    if times["helper"]:
        print(row("server: edit a helper, its caller's diagnostics", times["helper"], warm))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
