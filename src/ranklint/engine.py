"""The engine: read, decode, parse once, walk once with all rules, suppress, and
run many files in parallel with output identical to a serial run."""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar

import libcst as cst
from libcst.metadata import CodeRange

from ranklint.analysis.context import FileContext
from ranklint.analysis.project import Hop, ProjectFinding, analyze
from ranklint.analysis.settings import AnalysisSettings
from ranklint.analysis.summary import ModuleSummary, Site
from ranklint.cache import Cache
from ranklint.config import Config
from ranklint.findings import Finding, InternalError, TraceStep
from ranklint.positions import NEWLINE, resolve_positions
from ranklint.rules import PendingFinding, Rule, rule_by_code
from ranklint.rules.parse import ParseError
from ranklint.source import SourceError, decode_source, parse_source
from ranklint.suppressions import NO_SUPPRESSIONS, parse_suppressions
from ranklint.traversal import Walker

logger = logging.getLogger(__name__)

# Below this many files a process pool costs more than it saves.
_MIN_FILES_FOR_POOL = 8


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    errors: list[InternalError] = field(default_factory=list)
    # Facts for the project phase (None when the file was not analysed).
    summary: ModuleSummary | None = None
    # Positions of call sites located for project findings (kept in the cache).
    located: dict[Site, _Span] = field(default_factory=dict)


class Linter:
    """Lints files under one configuration. Cheap to build; picklable config."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.rules = config.enabled_rules()
        self._per_file_ignores = config.per_file_ignore_specs()
        self.settings = AnalysisSettings.build(
            (*config.rank_names, *config.extend_rank_names),
            config.extra_collectives,
            (*config.hot_functions, *config.extend_hot_functions),
            allow_periodic_sync=config.allow_periodic_sync,
            heavy_modules=(*config.heavy_modules, *config.extend_heavy_modules),
            blocking_functions=config.blocking_functions,
            machine_path_prefixes=config.machine_path_prefixes,
            mesh_axes=(*config.mesh_axes, *config.extend_mesh_axes),
            distributed_markers=config.distributed_markers,
        )
        self._test_spec = config.test_spec()
        self._script_spec = config.script_spec()
        self._project_codes = frozenset(rule.code for rule in self.rules if rule.project)

    def file_context(self, path: str, module: cst.Module) -> FileContext:
        """The walk's context for ``path``, with whether it is a test or a script."""
        relative = self.config.relative_path(path)
        return FileContext(
            path=path,
            module=module,
            settings=self.settings,
            is_test=self._test_spec.match_file(relative),
            is_script=self._script_spec.match_file(relative),
        )

    def rules_for(self, path: str) -> tuple[type[Rule], ...]:
        if not self._per_file_ignores:
            return self.rules
        relative = self.config.relative_path(path)
        ignored: set[str] = set()
        for spec, codes in self._per_file_ignores:
            if spec.match_file(relative):
                ignored |= codes
        return tuple(rule for rule in self.rules if rule.code not in ignored)

    # -- one file ----------------------------------------------------------
    def lint_file(self, path: str) -> FileResult:
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            return self._parse_error(path, f"cannot read file: {reason}", 1, 1)
        return self.lint_source(data, path)

    def lint_source(self, source: str | bytes, path: str) -> FileResult:
        return run_with_large_stack(self._guarded_lint_source, source, path)

    def lint_file_cached(
        self, path: str, cache: Cache | None, data: bytes | None = None
    ) -> FileResult:
        """:meth:`lint_file`, through ``cache`` when given; ``data``: the bytes, if read."""
        if cache is None:
            return self.lint_file(path) if data is None else self.lint_source(data, path)
        if data is None:
            try:
                with open(path, "rb") as handle:
                    data = handle.read()
            except OSError:
                return self.lint_file(path)  # reports the read error
            hit = cache.get(path, data)
            if hit is not None:
                return hit
        result = self.lint_source(data, path)
        cache.put(path, data, result)
        return result

    def _guarded_lint_source(self, source: str | bytes, path: str) -> FileResult:
        try:
            return self._lint_source(source, path)
        except RecursionError:
            return self._parse_error(path, "nesting too deep to analyse", 1, 1)
        except Exception as exc:  # never lose the run to one file
            logger.debug("engine failed on %s", path, exc_info=True)
            return FileResult(
                path,
                errors=[
                    InternalError(
                        path, "engine", f"{type(exc).__name__}: {exc}", traceback.format_exc()
                    )
                ],
            )

    def _lint_source(self, source: str | bytes, path: str) -> FileResult:
        rules = self.rules_for(path)
        if isinstance(source, bytes):
            try:
                text = decode_source(source)
            except SourceError as exc:
                return self._parse_error(path, exc.message, exc.line, exc.col, rules)
        else:
            text = source
        try:
            module = parse_source(text)
        except SourceError as exc:
            return self._parse_error(path, exc.message, exc.line, exc.col, rules, text)

        visiting = [rule for rule in rules if rule.handlers_on_visit or rule.handlers_on_leave]
        if not visiting and not self._project_codes:
            return FileResult(path)
        # Comments are tokenized only when they can matter: a possible
        # skip-file marker now, line suppressions once there are findings.
        if "skip-file" in text and parse_suppressions(text).skip_file:
            return FileResult(path)

        pending: list[PendingFinding] = []
        ctx = self.file_context(path, module)
        walker = Walker(ctx, [rule(ctx, pending.append) for rule in visiting])
        with deep_recursion():
            walker.walk(module)
            result = self._resolve(path, module, text, walker, pending)
        if self._project_codes and not walker.errors:
            result.summary = ctx.facts.summary(ctx.names.module_imports())
        return result

    def _resolve(
        self,
        path: str,
        module: cst.Module,
        text: str,
        walker: Walker,
        pending: list[PendingFinding],
    ) -> FileResult:
        """Positions, suppressions and Finding objects for the walk's pending findings."""
        pending = [p for p in pending if p.rule.code not in walker.failed_rules]
        result = FileResult(path, errors=walker.errors)
        if not pending:
            return result

        suppressions = parse_suppressions(text)
        wanted = [(p.node, p.top_statement) for p in pending]
        wanted += [(p.statement, p.top_statement) for p in pending if p.statement is not None]
        positions = resolve_positions(module, wanted)
        for item in pending:
            span = _span(positions, item.node, item.statement)
            if suppressions.suppresses(item.rule.code, span.lines):
                continue
            result.findings.append(
                Finding(
                    code=item.rule.code,
                    name=item.rule.name,
                    severity=item.rule.severity,
                    message=item.message,
                    path=path,
                    line=span.line,
                    col=span.col,
                    end_line=span.end_line,
                    end_col=span.end_col,
                    trace=item.trace,
                )
            )
        result.findings.sort(key=Finding.sort_key)
        return result

    # -- the project phase ------------------------------------------------------
    def project_phase(
        self,
        results: Sequence[FileResult],
        sources: dict[str, str | bytes] | None = None,
        cache: Cache | None = None,
    ) -> None:
        """Add the findings that need every file's facts (call graph) to ``results``.

        ``sources``: file contents by path for results that did not come from a
        file on disk (``lint_source``); others are read again, only when a
        finding or its call chain points into them, and parsed again only for
        call sites whose positions are not known yet (from the cache).
        """
        if not self._project_codes:
            return
        summaries = [result.summary for result in results if result.summary is not None]
        if not summaries:
            return
        codes: dict[str, set[str]] = {}
        found: list[ProjectFinding] = []
        for finding in run_with_large_stack(_analyze_deeply, summaries, self.settings.mesh_axes):
            if finding.path not in codes:
                codes[finding.path] = {rule.code for rule in self.rules_for(finding.path)}
            if finding.code in codes[finding.path]:
                found.append(finding)
        if not found:
            return
        wanted: dict[str, set[Site]] = {}
        for finding in found:
            for hop in finding.chain:
                wanted.setdefault(hop.path, set()).add(hop.site)
        sources = sources or {}
        by_path = {result.path: result for result in results}
        located = {
            path: self._located(path, sites, sources.get(path), by_path.get(path), cache)
            for path, sites in wanted.items()
        }
        suppressions = {
            path: parse_suppressions(place.text) if place.text is not None else NO_SUPPRESSIONS
            for path, place in located.items()
        }
        for finding in found:
            made = _project_finding(finding, located)
            result = by_path.get(finding.path)
            if made is None or result is None:
                continue
            lines = located[finding.path].sites[finding.site].lines
            if suppressions[finding.path].suppresses(made.code, lines):
                continue
            result.findings.append(made)
        for result in results:
            result.findings.sort(key=Finding.sort_key)

    def _located(
        self,
        path: str,
        sites: set[Site],
        source: str | bytes | None,
        result: FileResult | None,
        cache: Cache | None,
    ) -> _Located:
        """Positions of ``sites`` in ``path``: from earlier runs when known, else by a walk."""
        known = result.located if result is not None else {}
        if source is None:
            try:
                with open(path, "rb") as handle:
                    source = handle.read()
            except OSError:
                logger.warning("%s vanished during the run; findings skipped", path)
                return _Located(None, {})
        if sites <= known.keys():
            try:
                text = decode_source(source) if isinstance(source, bytes) else source
            except SourceError:
                return _Located(None, {})
            return _Located(text, {site: known[site] for site in sites})
        located = self._locate(path, sites, source)
        if result is not None and located.sites:
            result.located.update(located.sites)
            if cache is not None and isinstance(source, bytes):
                cache.put(path, source, result)
        return located

    def _locate(self, path: str, sites: set[Site], source: str | bytes) -> _Located:
        return run_with_large_stack(self._locate_in_thread, path, sites, source)

    def _locate_in_thread(self, path: str, sites: set[Site], source: str | bytes) -> _Located:
        try:
            text = decode_source(source) if isinstance(source, bytes) else source
            module = parse_source(text)
        except SourceError:
            logger.warning("%s changed during the run; findings skipped", path)
            return _Located(None, {})
        ctx = self.file_context(path, module)
        locator = _Locator(ctx, sites)
        # The rules that record hot-path candidates record them again, in the
        # same order: their sites (negative ordinals) name the same nodes.
        recorders = [
            rule(ctx, _ignore)
            for rule in self.rules_for(path)
            if rule.project and (rule.handlers_on_visit or rule.handlers_on_leave)
        ]
        with deep_recursion():
            Walker(ctx, [locator, *recorders]).walk(module)
            for site in sites:
                if site.ordinal < 0 and site in ctx.facts.hot_nodes:
                    locator.found[site] = ctx.facts.hot_nodes[site]
            wanted = [(node, top) for node, _, top in locator.found.values()]
            wanted += [
                (statement, top)
                for _, statement, top in locator.found.values()
                if statement is not None
            ]
            positions = resolve_positions(module, wanted)
        out = {
            site: _span(positions, node, statement)
            for site, (node, statement, _) in locator.found.items()
        }
        return _Located(text, out)

    def _parse_error(
        self,
        path: str,
        message: str,
        line: int,
        col: int,
        rules: Sequence[type[Rule]] | None = None,
        text: str | None = None,
    ) -> FileResult:
        if ParseError not in (self.rules_for(path) if rules is None else rules):
            return FileResult(path)
        end_col = col + 1
        if text is not None:
            # The span covers the character at the position, or nothing at the
            # end of a line (an empty line before a stray continuation, say).
            lines = NEWLINE.split(text)
            length = len(lines[line - 1]) if 1 <= line <= len(lines) else 0
            end_col = col + 1 if col <= length else col
        finding = Finding(
            code=ParseError.code,
            name=ParseError.name,
            severity=ParseError.severity,
            message=message,
            path=path,
            line=line,
            col=col,
            end_line=line,
            end_col=end_col,
        )
        return FileResult(path, findings=[finding])


@dataclass
class _Span:
    line: int
    col: int
    end_line: int
    end_col: int
    # Lines whose suppression comments apply (the call's and its statement's).
    lines: list[int]


def _span(
    positions: Mapping[cst.CSTNode, CodeRange],
    node: cst.CSTNode,
    statement: cst.CSTNode | None,
) -> _Span:
    """1-based span of ``node``; suppression lines include its statement's first and last."""
    where = positions[node]
    lines = {where.start.line, where.end.line}
    if statement is not None:
        lines |= {positions[statement].start.line, positions[statement].end.line}
    return _Span(
        where.start.line,
        where.start.column + 1,
        where.end.line,
        where.end.column + 1,
        sorted(lines),
    )


@dataclass
class _Located:
    text: str | None
    sites: dict[Site, _Span]


class _Locator(Rule):
    """Finds call nodes by :class:`Site` on a second walk of a file."""

    def __init__(self, ctx: FileContext, sites: set[Site]) -> None:
        super().__init__(ctx, lambda _: None)
        self.sites = sites
        self.found: dict[Site, tuple[cst.CSTNode, cst.CSTNode | None, cst.CSTNode | None]] = {}

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        site = Site(ctx.top_index, ctx.call_ordinal)
        if site in self.sites:
            self.found[site] = (node, ctx.statement, ctx.top_statement)


def _ignore(_: PendingFinding) -> None:
    """A finding sink for rules run only to record facts again."""


def _analyze_deeply(
    summaries: Sequence[ModuleSummary], mesh_axes: frozenset[str]
) -> list[ProjectFinding]:
    """The project analysis recurses over nested branches and call chains."""
    with deep_recursion():
        return analyze(summaries, mesh_axes)


def _project_finding(finding: ProjectFinding, located: dict[str, _Located]) -> Finding | None:
    rule = rule_by_code(finding.code)
    spans: list[tuple[Hop, _Span]] = []
    for hop in finding.chain:
        span = located[hop.path].sites.get(hop.site)
        if span is None or rule is None:
            return None
        spans.append((hop, span))
    first = spans[finding.anchor][1]
    message = finding.message
    if "{chain}" in message:
        last_hop, last_span = spans[-1]
        chain = " -> ".join(hop.label for hop, _ in spans)
        message = message.replace("{chain}", f"{chain} at {last_hop.path}:{last_span.line}")
    trace: tuple[TraceStep, ...] = ()
    if len(spans) > 1:
        trace = tuple(
            TraceStep(
                hop.path,
                span.line,
                span.col,
                f"`{hop.label}` here" if index == len(spans) - 1 else f"calls `{hop.label}`",
            )
            for index, (hop, span) in enumerate(spans)
        )
    return Finding(
        code=rule.code,
        name=rule.name,
        severity=rule.severity,
        message=message,
        path=finding.path,
        line=first.line,
        col=first.col,
        end_line=first.end_line,
        end_col=first.end_col,
        trace=trace,
    )


# libcst's native parser recurses on the C stack of the calling thread: on the
# main thread's 8 MiB it segfaults (killing the whole run) on nesting such as
# 1500 brackets or a 20000-term `+` chain. On a thread with this much stack it
# parses them; the memory is virtual and only the pages used are committed.
_PARSE_STACK_BYTES = 512 * 1024 * 1024
_stack_size_lock = threading.Lock()

_T = TypeVar("_T")

# The walk and libcst's position computation recurse in Python, a few frames per
# tree level: valid code at CPython's own limits (200 nested brackets, 2000-term
# operator chains) needs far more than the default 1000 frames.
_RECURSION_LIMIT = 60_000
_recursion_lock = threading.Lock()
_recursion_users = 0
_saved_recursion_limit = 0


@contextlib.contextmanager
def deep_recursion() -> Iterator[None]:
    """Raise the interpreter's recursion limit while any file is being walked."""
    global _recursion_users, _saved_recursion_limit
    with _recursion_lock:
        if _recursion_users == 0:
            _saved_recursion_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_saved_recursion_limit, _RECURSION_LIMIT))
        _recursion_users += 1
    try:
        yield
    finally:
        with _recursion_lock:
            _recursion_users -= 1
            if _recursion_users == 0:
                sys.setrecursionlimit(_saved_recursion_limit)


def run_with_large_stack(function: Callable[..., _T], *args: object) -> _T:
    """Run ``function(*args)`` on a fresh thread with a large stack and return its result."""
    outcome: list[_T] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            outcome.append(function(*args))
        except BaseException as exc:  # re-raised in the caller's thread
            failure.append(exc)

    with _stack_size_lock:
        previous = threading.stack_size(_PARSE_STACK_BYTES)
        try:
            thread = threading.Thread(target=target, name="ranklint-parse")
            thread.start()
        finally:
            threading.stack_size(previous)
    thread.join()
    if failure:
        raise failure[0]
    return outcome[0]


# -- many files ----------------------------------------------------------------

_worker_linter: Linter | None = None
_worker_cache: Cache | None = None


def _init_worker(config: Config, cache: Cache | None) -> None:
    global _worker_linter, _worker_cache
    _worker_linter = Linter(config)
    _worker_cache = cache


def _lint_in_worker(path: str) -> FileResult:
    assert _worker_linter is not None, "worker not initialised"
    return _worker_linter.lint_file_cached(path, _worker_cache)


def _pool_context() -> multiprocessing.context.BaseContext:
    """``fork`` (fastest) only where it is safe: Linux, and no other thread alive."""
    methods = multiprocessing.get_all_start_methods()
    if sys.platform == "linux" and "fork" in methods and _os_thread_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def _os_thread_count() -> int:
    # Threads started outside the threading module (e.g. by C extensions) count
    # for fork safety too; Linux lists every thread of the process here.
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def lint_files(
    files: Sequence[str],
    config: Config,
    *,
    jobs: int | None = None,
    cache: Cache | None = None,
) -> list[FileResult]:
    """Lint ``files``; results come back in the order of ``files`` whatever ``jobs`` is.

    With ``cache``, files whose entry is valid are not parsed; only the others
    go to the workers (which store their results).
    """
    linter = Linter(config)
    results: list[FileResult | None] = [None] * len(files)
    # Bytes already read for the cache check, kept for serial misses (at most
    # the pool threshold's worth; the pool's workers read their own).
    read: dict[int, bytes] = {}
    if cache is not None:
        for index, path in enumerate(files):
            try:
                with open(path, "rb") as handle:
                    data = handle.read()
            except OSError:
                continue
            results[index] = cache.get(path, data)
            if results[index] is None and len(read) < _MIN_FILES_FOR_POOL:
                read[index] = data
    misses = [index for index, result in enumerate(results) if result is None]
    workers = jobs if jobs and jobs > 0 else (os.cpu_count() or 1)
    workers = min(workers, len(misses))
    if workers <= 1 or len(misses) < _MIN_FILES_FOR_POOL:
        for index in misses:
            results[index] = linter.lint_file_cached(files[index], cache, read.get(index))
    else:
        chunksize = max(1, len(misses) // (workers * 4))
        with ProcessPoolExecutor(
            max_workers=workers,
            mp_context=_pool_context(),
            initializer=_init_worker,
            initargs=(config, cache),
        ) as pool:
            done = pool.map(_lint_in_worker, [files[i] for i in misses], chunksize=chunksize)
            for index, result in zip(misses, done, strict=True):
                results[index] = result
    return [result for result in results if result is not None]
