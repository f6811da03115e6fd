"""``ranklint server``: the language server (LSP over standard input and output).

Built on pygls (the optional extra ``ranklint[lsp]``). Diagnostics come on
open, change and save, for every open file a change affects: an edit of a
helper reaches the findings of its rank-guarded callers in other open files,
through the project phase (:mod:`ranklint.faces.lsp_projects`). A finding's
call chain is the diagnostic's related information. Code actions apply a
fix (unsafe ones say so), every safe fix of a file (``source.fixAll.ranklint``)
or add ``# noqa: CODE``; hovering a finding shows its rule's documentation.

The linting runs on one worker thread, one batch of edits at a time: edits
that arrive while a batch runs are linted together in the next one.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from ranklint import __version__
from ranklint.faces.lsp_projects import Project, Projects
from ranklint.findings import Applicability, Edit, Finding, Severity
from ranklint.links import docs_url
from ranklint.positions import NEWLINE

logger = logging.getLogger(__name__)

SOURCE = "ranklint"
FIX_ALL_KIND = f"{types.CodeActionKind.SourceFixAll.value}.ranklint"
_CONFIG_NAMES = ("pyproject.toml", "ranklint.toml")
_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}


def split_lines(text: str) -> list[str]:
    """``text``'s lines as the tokenizer counts them (findings' lines), without endings."""
    return NEWLINE.split(text)


def _units(text: str, encoding: str) -> int:
    """The length of ``text`` in the client's position units."""
    if encoding == types.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8"))
    if encoding == types.PositionEncodingKind.Utf32:
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def _from_units(line: str, units: int, encoding: str) -> int:
    """The character index in ``line`` of a client's column."""
    if encoding == types.PositionEncodingKind.Utf32:
        return min(units, len(line))
    count = 0
    for index, char in enumerate(line):
        if count >= units:
            return index
        count += _units(char, encoding)
    return len(line)


def to_position(lines: list[str], line: int, col: int, encoding: str) -> types.Position:
    """The LSP position of the 1-based (``line``, ``col``) of a finding or an edit."""
    if line > len(lines):
        return types.Position(line=len(lines), character=0)
    text = lines[line - 1] if line >= 1 else ""
    return types.Position(line=max(line - 1, 0), character=_units(text[: col - 1], encoding))


def to_range(lines: list[str], edit: Finding | Edit, encoding: str) -> types.Range:
    return types.Range(
        start=to_position(lines, edit.line, edit.col, encoding),
        end=to_position(lines, edit.end_line, edit.end_col, encoding),
    )


class RanklintServer(LanguageServer):
    """The server's state: the projects, what was last published, the worker."""

    def __init__(self, *, cache: bool = True) -> None:
        super().__init__("ranklint", __version__)
        self.projects = Projects(cache=cache)
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ranklint-lint")
        # Events waiting for the next batch: (path, what happened).
        self.pending: list[tuple[str, str]] = []
        self.batch: asyncio.Task[None] | None = None
        # Per open file: the text its diagnostics were made from, and the diagnostics.
        self.linted: dict[str, str] = {}
        self.published: dict[str, list[types.Diagnostic]] = {}

    @property
    def encoding(self) -> str:
        return str(self.workspace.position_encoding or types.PositionEncodingKind.Utf16)

    def text_of(self, path: str) -> str:
        """The editor's text of ``path`` when open, else the file's on disk ('' if none)."""
        document = self.workspace.text_documents.get(from_fs_path(path) or "")
        if document is not None:
            return document.source
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                return handle.read()
        except OSError:
            return ""

    # -- linting ------------------------------------------------------------
    def schedule(self, path: str, event: str) -> None:
        """Lint after ``event`` (open, change, save, close, disk, config) on ``path``."""
        self.pending.append((path, event))
        if self.batch is None or self.batch.done():
            self.batch = asyncio.get_running_loop().create_task(self._run_batches())

    async def _run_batches(self) -> None:
        loop = asyncio.get_running_loop()
        while self.pending:
            events, self.pending = self.pending, []
            # The texts as they are now (later edits come in the next batch).
            texts = {
                path: self.text_of(path) for path, event in events if event in ("open", "change")
            }
            new = self._unindexed(events)
            token = await self._begin_progress(new)
            try:
                report = self._progress_reporter(loop, token, len(new))
                found = await loop.run_in_executor(self.worker, self._apply, events, texts, report)
            except Exception:  # a bug of ours: logged, the server stays up
                logger.exception("ranklint server: linting failed")
                continue
            finally:
                if token is not None:
                    self.work_done_progress.end(token, types.WorkDoneProgressEnd(message="indexed"))
            closed = {path for path, event in events if event == "close"}
            # The files an event named are published again even when nothing changed.
            named = {path for path, _ in events}
            for path, (text, findings) in found.items():
                if path not in closed:
                    self._publish(path, text, findings, again=path in named)

    def _unindexed(self, events: list[tuple[str, str]]) -> list[Project]:
        with self.projects.lock:
            found = {
                id(project): project
                for path, event in events
                if event in ("open", "change")
                and (project := self.projects.project_of(path)) is not None
                and not project.indexed
            }
        return list(found.values())

    async def _begin_progress(self, new: list[Project]) -> str | None:
        """A progress token, begun, when a project is indexed and the client shows progress."""
        window = self.client_capabilities.window
        if not new or window is None or not window.work_done_progress:
            return None
        token = f"ranklint-index-{uuid.uuid4()}"
        try:
            await self.work_done_progress.create_async(token)
        except Exception:  # the client refused the token: no progress shown
            logger.debug("progress token refused", exc_info=True)
            return None
        names = ", ".join(str(project.root) for project in new)
        self.work_done_progress.begin(
            token,
            types.WorkDoneProgressBegin(
                title="ranklint: indexing", message=names, percentage=0, cancellable=False
            ),
        )
        return token

    def _progress_reporter(
        self, loop: asyncio.AbstractEventLoop, token: str | None, projects: int
    ) -> Any:
        def report(done: int, total: int) -> None:
            if token is None:
                return
            value = types.WorkDoneProgressReport(
                message=f"{done}/{total} files", percentage=100 * done // max(total, 1)
            )
            loop.call_soon_threadsafe(self.work_done_progress.report, token, value)

        return report

    def _apply(
        self, events: list[tuple[str, str]], texts: dict[str, str], report: Any
    ) -> dict[str, tuple[str, list[Finding]]]:
        """On the worker: apply ``events``, index new projects, run the phase of each
        project touched; the (text, findings) of every open file of those projects."""
        with self.projects.lock:
            if any(event == "config" for _, event in events):
                self.projects.forget_configuration()
            touched: dict[int, Project] = {}
            if any(event == "config" for _, event in events):
                touched = {id(project): project for project in self.projects.projects()}
            for path, event in events:
                project = self.projects.project_of(path)
                if project is None:
                    continue
                touched[id(project)] = project
                if event in ("open", "change"):
                    project.set_text(path, texts[path])
                elif event == "save":
                    project.saved(path)
                elif event == "close":
                    project.close(path)
                elif event in ("disk", "deleted"):
                    project.changed_on_disk(path, deleted=event == "deleted")
            found: dict[str, tuple[str, list[Finding]]] = {}
            for project in touched.values():
                if not project.indexed:
                    project.index(report)
                findings = project.run_phase()
                for path, text in project.texts.items():
                    found[path] = (text, findings.get(path, []))
            # Open files the configuration excludes: nothing to show.
            for path, event in events:
                if event in ("open", "change") and self.projects.project_of(path) is None:
                    found[path] = (texts[path], [])
            return found

    def _publish(self, path: str, text: str, findings: list[Finding], *, again: bool) -> None:
        diagnostics = [self.diagnostic(finding, split_lines(text)) for finding in findings]
        self.linted[path] = text
        if not again and self.published.get(path) == diagnostics:
            return
        self.published[path] = diagnostics
        uri = from_fs_path(path) or path
        document = self.workspace.text_documents.get(uri)
        version = document.version if document is not None and self.text_of(path) == text else None
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        )

    def diagnostic(self, finding: Finding, lines: list[str]) -> types.Diagnostic:
        related = []
        other_lines: dict[str, list[str]] = {}
        for step in finding.trace:
            if step.path == finding.path:
                step_lines = lines
            else:
                if step.path not in other_lines:
                    other_lines[step.path] = split_lines(self.text_of(step.path))
                step_lines = other_lines[step.path]
            where = to_position(step_lines, step.line, step.col, self.encoding)
            related.append(
                types.DiagnosticRelatedInformation(
                    location=types.Location(
                        uri=from_fs_path(step.path) or step.path,
                        range=types.Range(start=where, end=where),
                    ),
                    message=step.message,
                )
            )
        fix = finding.fix
        return types.Diagnostic(
            range=to_range(lines, finding, self.encoding),
            message=finding.message,
            severity=_SEVERITY[finding.severity],
            code=finding.code,
            code_description=types.CodeDescription(href=docs_url(finding.code)),
            source=SOURCE,
            related_information=related or None,
            tags=[types.DiagnosticTag.Unnecessary] if finding.code == "RNK002" else None,
            data={"fix": fix.applicability.value if fix is not None else None},
        )

    def findings_of(self, path: str) -> tuple[str | None, list[Finding]]:
        """The text the last diagnostics of ``path`` were made from, and their findings."""
        with self.projects.lock:
            project = self.projects.project_of(path)
            if project is None:
                return None, []
            return self.linted.get(path), list(project.findings.get(path, []))


# -- requests ---------------------------------------------------------------
def _overlaps(finding: Finding, lines: list[str], wanted: types.Range, encoding: str) -> bool:
    where = to_range(lines, finding, encoding)
    start = (wanted.start.line, wanted.start.character)
    end = (wanted.end.line, wanted.end.character)
    return (where.start.line, where.start.character) <= end and start <= (
        where.end.line,
        where.end.character,
    )


def _edit_to_text_edit(edit: Edit, lines: list[str], encoding: str) -> types.TextEdit:
    return types.TextEdit(range=to_range(lines, edit, encoding), new_text=edit.content)


def code_actions(server: RanklintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    """The quick fixes, noqa comments and fix-all for the requested range."""
    from ranklint.faces.noqa import noqa_line

    path = to_fs_path(params.text_document.uri) or params.text_document.uri
    linted, findings = server.findings_of(path)
    text = server.text_of(path)
    if linted != text:
        return []  # diagnostics of another text: their positions no longer hold
    lines = split_lines(text)
    encoding = server.encoding
    uri = params.text_document.uri
    only = params.context.only
    actions: list[types.CodeAction] = []
    wants_quickfix = not only or any(
        types.CodeActionKind.QuickFix.value.startswith(str(kind)) for kind in only
    )
    # The findings on the lines asked about (an editor asks at the cursor).
    first, last = params.range.start.line + 1, params.range.end.line + 1
    here = [f for f in findings if f.line <= last and first <= f.end_line]
    if wants_quickfix:
        for finding in here:
            diagnostic = server.diagnostic(finding, lines)
            fix = finding.fix
            if fix is not None:
                unsafe = fix.applicability is Applicability.UNSAFE
                edits = [_edit_to_text_edit(edit, lines, encoding) for edit in fix.edits]
                actions.append(
                    types.CodeAction(
                        title=f"{fix.message} ({finding.code}{', unsafe' if unsafe else ''})",
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[diagnostic],
                        is_preferred=not unsafe,
                        edit=types.WorkspaceEdit(changes={uri: edits}),
                    )
                )
            placed = noqa_line(text, finding)
            if placed is not None:
                line, content = placed
                old = lines[line - 1]
                edit = types.TextEdit(
                    range=types.Range(
                        start=types.Position(line=line - 1, character=0),
                        end=types.Position(line=line - 1, character=_units(old, encoding)),
                    ),
                    new_text=content,
                )
                actions.append(
                    types.CodeAction(
                        title=f"Suppress {finding.code} here: add `# noqa: {finding.code}`",
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[diagnostic],
                        edit=types.WorkspaceEdit(changes={uri: [edit]}),
                    )
                )
    wants_fix_all = not only or any(FIX_ALL_KIND.startswith(str(kind)) for kind in only)
    if wants_fix_all and any(f.fixable(unsafe=False) for f in findings):
        edit = _fix_all_edit(server, path, text, findings)
        if edit is not None:
            actions.append(
                types.CodeAction(
                    title="ranklint: fix all safe fixes in this file",
                    kind=FIX_ALL_KIND,
                    edit=types.WorkspaceEdit(changes={uri: [edit]}),
                )
            )
    return actions


def _fix_all_edit(
    server: RanklintServer, path: str, text: str, findings: list[Finding]
) -> types.TextEdit | None:
    """Every safe fix of ``text`` applied (round by round, as ``--fix`` does), as one edit."""
    from ranklint.fixing.apply import fix_text
    from ranklint.fixing.edits import Lines, smallest_edit

    with server.projects.lock:
        project = server.projects.project_of(path)
        if project is None:
            return None

        def relint(source: str) -> list[Finding]:
            return project.linter.lint_source(source, path).findings

        fixed, done = fix_text(text, findings, relint, unsafe=False)
    if not done or fixed == text:
        return None
    edit = smallest_edit(Lines(text), 0, len(text), fixed)
    if edit is None:
        return None
    return _edit_to_text_edit(edit, split_lines(text), server.encoding)


def hover(server: RanklintServer, params: types.HoverParams) -> types.Hover | None:
    """The documentation of the rules of the findings under the cursor."""
    from ranklint.docs import render_rule
    from ranklint.rules import rule_by_code

    path = to_fs_path(params.text_document.uri) or params.text_document.uri
    linted, findings = server.findings_of(path)
    if linted is None:
        return None
    lines = split_lines(linted)
    point = types.Range(start=params.position, end=params.position)
    here = [f for f in findings if _overlaps(f, lines, point, server.encoding)]
    parts: list[str] = []
    for code in dict.fromkeys(finding.code for finding in here):
        rule = rule_by_code(code)
        if rule is not None:
            parts.append(render_rule(rule).strip())
    if not parts:
        return None
    return types.Hover(
        contents=types.MarkupContent(
            kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(parts)
        ),
        range=to_range(lines, here[0], server.encoding),
    )


def build_server(*, cache: bool = True) -> RanklintServer:
    """The server with its features registered."""
    server = RanklintServer(cache=cache)

    def path_of(uri: str) -> str:
        return os.path.abspath(to_fs_path(uri) or uri)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: RanklintServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(path_of(params.text_document.uri), "open")

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: RanklintServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(path_of(params.text_document.uri), "change")

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: RanklintServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.schedule(path_of(params.text_document.uri), "save")

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: RanklintServer, params: types.DidCloseTextDocumentParams) -> None:
        path = path_of(params.text_document.uri)
        ls.published.pop(path, None)
        ls.linted.pop(path, None)
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[])
        )
        ls.schedule(path, "close")

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched(ls: RanklintServer, params: types.DidChangeWatchedFilesParams) -> None:
        for change in params.changes:
            path = path_of(change.uri)
            if os.path.basename(path) in _CONFIG_NAMES:
                ls.schedule(path, "config")
            elif path.endswith(".py"):
                deleted = change.type == types.FileChangeType.Deleted
                ls.schedule(path, "deleted" if deleted else "disk")

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND],
        ),
    )
    async def code_action(
        ls: RanklintServer, params: types.CodeActionParams
    ) -> list[types.CodeAction]:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(ls.worker, code_actions, ls, params)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def on_hover(ls: RanklintServer, params: types.HoverParams) -> types.Hover | None:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(ls.worker, hover, ls, params)

    @server.feature(types.SHUTDOWN)
    def on_shutdown(ls: RanklintServer, params: None) -> None:
        ls.worker.shutdown(wait=False, cancel_futures=True)

    return server


def serve(*, cache: bool = True) -> None:
    """Run the server on standard input and output until the client exits."""
    build_server(cache=cache).start_io()
