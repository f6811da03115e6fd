"""``ranklint server`` end to end: the server as a subprocess, driven by pytest-lsp's client."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path

import pytest

pytest_lsp = pytest.importorskip("pytest_lsp")
pytest.importorskip("pygls")
pytest_asyncio = pytest.importorskip("pytest_asyncio")

from lsprotocol import types  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities  # noqa: E402

pytestmark = [pytest.mark.asyncio, pytest.mark.slow]

# How long a test waits for the server's answer before it fails (not a sleep).
TIMEOUT = 60

HELPERS = """\
import torch.distributed as dist


def log_metrics(x):
    return x
"""

TRAIN = """\
import torch.distributed as dist

from pkg.helpers import log_metrics


def step(x):
    if dist.get_rank() == 0:
        log_metrics(x)
    dist.all_reduce(x)
    return x
"""

FIXES = """\
import torch.distributed as dist
from os.path import *


def share(x):
    dist.broadcast(x)
    dist.gather(x)
    return join("a", "b")
"""


def make_project(root: Path) -> dict[str, Path]:
    """A project: a helper, a rank-guarded caller of it, and a file with fixable findings."""
    (root / "pkg").mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "demo"\n\n[tool.ranklint]\n')
    (root / "pkg" / "__init__.py").write_text("")
    files = {"helpers": HELPERS, "train": TRAIN, "fixes": FIXES}
    paths = {}
    for name, text in files.items():
        path = root / "pkg" / f"{name}.py"
        path.write_text(text)
        paths[name] = path
    return paths


@pytest_asyncio.fixture
async def client(tmp_path: Path) -> AsyncIterator[LanguageClient]:
    config = ClientServerConfig(server_command=[sys.executable, "-m", "ranklint", "server"])
    lsp = await config.start()
    capabilities = client_capabilities("visual-studio-code")
    await lsp.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            root_uri=tmp_path.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="demo")],
        )
    )
    yield lsp
    await lsp.shutdown_session()
    await lsp.stop()


async def diagnostics_when(
    client: LanguageClient, path: Path, wanted: Callable[[Sequence[types.Diagnostic]], bool]
) -> Sequence[types.Diagnostic]:
    """The diagnostics of ``path`` once they satisfy ``wanted`` (waits on each publication)."""

    async def wait() -> Sequence[types.Diagnostic]:
        while True:
            found = client.diagnostics.get(path.as_uri())
            if found is not None and wanted(found):
                return found
            await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

    return await asyncio.wait_for(wait(), TIMEOUT)


def open_file(client: LanguageClient, path: Path, version: int = 1) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=path.as_uri(), language_id="python", version=version, text=path.read_text()
            )
        )
    )


def change_file(client: LanguageClient, path: Path, text: str, version: int) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=path.as_uri(), version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def codes(diagnostics: Sequence[types.Diagnostic]) -> list[str]:
    return sorted(str(d.code) for d in diagnostics)


async def test_open_file_with_finding_publishes_ranklint_diagnostics(
    client: LanguageClient, tmp_path: Path
) -> None:
    paths = make_project(tmp_path)
    open_file(client, paths["fixes"])
    found = await diagnostics_when(client, paths["fixes"], lambda d: len(d) == 3)
    assert codes(found) == ["RNK103", "RNK103", "RNK301"]
    broadcast = next(d for d in found if d.range.start.line == 5)
    assert broadcast.source == "ranklint"
    assert broadcast.severity == types.DiagnosticSeverity.Warning
    assert broadcast.range.start == types.Position(line=5, character=4)
    assert broadcast.code_description is not None
    assert broadcast.code_description.href.endswith("RNK103.md")
    # The server told the client it was indexing the project.
    kinds = [report.kind for reports in client.progress_reports.values() for report in reports]
    assert kinds[0] == "begin"
    assert kinds[-1] == "end"


async def test_change_then_save_updates_diagnostics_of_the_edited_file(
    client: LanguageClient, tmp_path: Path
) -> None:
    paths = make_project(tmp_path)
    open_file(client, paths["fixes"])
    await diagnostics_when(client, paths["fixes"], lambda d: len(d) == 3)
    fixed = FIXES.replace("dist.broadcast(x)", "dist.broadcast(x, src=0)")
    change_file(client, paths["fixes"], fixed, 2)
    after_change = await diagnostics_when(client, paths["fixes"], lambda d: len(d) == 2)
    assert codes(after_change) == ["RNK103", "RNK301"]
    saved = fixed.replace("from os.path import *", "from os.path import join")
    await asyncio.to_thread(paths["fixes"].write_text, saved)
    change_file(client, paths["fixes"], saved, 3)
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=paths["fixes"].as_uri())
        )
    )
    after_save = await diagnostics_when(client, paths["fixes"], lambda d: len(d) == 1)
    assert codes(after_save) == ["RNK103"]


async def test_saving_a_helper_that_now_reaches_a_barrier_flags_its_guarded_caller_in_another_file(
    client: LanguageClient, tmp_path: Path
) -> None:
    paths = make_project(tmp_path)
    open_file(client, paths["train"])
    open_file(client, paths["helpers"])
    assert list(await diagnostics_when(client, paths["train"], lambda d: True)) == []
    barrier = HELPERS.replace("    return x", "    dist.barrier()\n    return x")
    await asyncio.to_thread(paths["helpers"].write_text, barrier)
    change_file(client, paths["helpers"], barrier, 2)
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=paths["helpers"].as_uri())
        )
    )
    found = await diagnostics_when(client, paths["train"], lambda d: len(d) == 1)
    (diagnostic,) = found
    assert diagnostic.code == "RNK102"
    assert diagnostic.severity == types.DiagnosticSeverity.Error
    assert diagnostic.range.start == types.Position(line=7, character=8)
    # The call chain: the guarded call here, the barrier in the helper.
    assert diagnostic.related_information is not None
    steps = [(info.location.uri, info.location.range.start.line, info.message)
             for info in diagnostic.related_information]  # fmt: skip
    assert steps == [
        (paths["train"].as_uri(), 7, "calls `log_metrics()`"),
        (paths["helpers"].as_uri(), 4, "`dist.barrier()` here"),
    ]


async def code_actions(
    client: LanguageClient, path: Path, line: int, only: list[str] | None = None
) -> list[types.CodeAction]:
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=path.as_uri()),
            range=types.Range(
                start=types.Position(line=line, character=0),
                end=types.Position(line=line, character=1),
            ),
            context=types.CodeActionContext(diagnostics=[], only=only),
        )
    )
    return [action for action in result or [] if isinstance(action, types.CodeAction)]


def edited(text: str, action: types.CodeAction, path: Path) -> str:
    """``text`` with the action's edits (one file, edits not overlapping) applied."""
    assert action.edit is not None
    assert action.edit.changes is not None
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def offset(position: types.Position) -> int:
        return offsets[position.line] + position.character

    edits = sorted(action.edit.changes[path.as_uri()], key=lambda e: offset(e.range.start))
    for edit in reversed(edits):
        start, end = offset(edit.range.start), offset(edit.range.end)
        text = text[:start] + edit.new_text + text[end:]
    return text


async def test_code_actions_offer_safe_and_unsafe_fixes_and_noqa(
    client: LanguageClient, tmp_path: Path
) -> None:
    paths = make_project(tmp_path)
    open_file(client, paths["fixes"])
    await diagnostics_when(client, paths["fixes"], lambda d: len(d) == 3)
    safe = await code_actions(client, paths["fixes"], 6, only=[types.CodeActionKind.QuickFix])
    titles = [action.title for action in safe]
    assert titles == [
        "Write out the implicit root: `dst=0` (global rank 0) (RNK103)",
        "Suppress RNK103 here: add `# noqa: RNK103`",
    ]
    assert safe[0].kind == types.CodeActionKind.QuickFix
    assert safe[0].is_preferred
    assert "dist.gather(x, dst=0)" in edited(FIXES, safe[0], paths["fixes"])
    noqa = edited(FIXES, safe[1], paths["fixes"])
    assert "    dist.gather(x)  # noqa: RNK103\n" in noqa
    unsafe = await code_actions(client, paths["fixes"], 1, only=[types.CodeActionKind.QuickFix])
    assert unsafe[0].title.endswith("(RNK301, unsafe)")
    assert not unsafe[0].is_preferred
    assert "from os.path import join\n" in edited(FIXES, unsafe[0], paths["fixes"])


async def test_fix_all_applies_only_the_safe_fixes_of_the_file(
    client: LanguageClient, tmp_path: Path
) -> None:
    paths = make_project(tmp_path)
    open_file(client, paths["fixes"])
    await diagnostics_when(client, paths["fixes"], lambda d: len(d) == 3)
    (action,) = await code_actions(client, paths["fixes"], 0, only=["source.fixAll"])
    assert action.kind == "source.fixAll.ranklint"
    fixed = edited(FIXES, action, paths["fixes"])
    assert fixed == FIXES.replace("dist.gather(x)", "dist.gather(x, dst=0)")


async def test_noqa_action_applied_clears_the_diagnostic(
    client: LanguageClient, tmp_path: Path
) -> None:
    paths = make_project(tmp_path)
    open_file(client, paths["fixes"])
    await diagnostics_when(client, paths["fixes"], lambda d: len(d) == 3)
    actions = await code_actions(client, paths["fixes"], 5)
    noqa = next(action for action in actions if "noqa" in action.title)
    change_file(client, paths["fixes"], edited(FIXES, noqa, paths["fixes"]), 2)
    found = await diagnostics_when(client, paths["fixes"], lambda d: len(d) == 2)
    assert all(d.range.start.line != 5 for d in found)


async def test_hover_on_a_finding_shows_its_rules_documentation(
    client: LanguageClient, tmp_path: Path
) -> None:
    paths = make_project(tmp_path)
    open_file(client, paths["fixes"])
    await diagnostics_when(client, paths["fixes"], lambda d: len(d) == 3)
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=paths["fixes"].as_uri()),
            position=types.Position(line=5, character=8),
        )
    )
    assert hover is not None
    assert isinstance(hover.contents, types.MarkupContent)
    assert hover.contents.kind == types.MarkupKind.Markdown
    assert hover.contents.value.startswith("# RNK103 missing-root")
    elsewhere = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=paths["fixes"].as_uri()),
            position=types.Position(line=3, character=0),
        )
    )
    assert elsewhere is None
