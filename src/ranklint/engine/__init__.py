"""The engine: read, decode, parse once, walk once with the fact recorders and all
rules, suppress, run the rules' project phase on the joined facts, and run many
files in parallel with output identical to a serial run."""

from __future__ import annotations

import logging
import multiprocessing
import os
import sys
import threading
import traceback
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor

import libcst as cst

from ranklint._process import claim_process, collector_paused
from ranklint.analysis.context import FileContext
from ranklint.analysis.events import Site
from ranklint.analysis.project import ProjectFacts
from ranklint.analysis.recorders import FACT_RECORDERS
from ranklint.cache import Cache
from ranklint.config import Config
from ranklint.engine.fixing import fix_nodes, fixes_of
from ranklint.engine.locate import Located, Locator, project_finding
from ranklint.engine.spans import placed_positions, span_of, spans_of
from ranklint.engine.threads import deep_recursion, run_with_large_stack
from ranklint.engine.walker import Walker
from ranklint.findings import Finding, InternalError
from ranklint.positions import NEWLINE
from ranklint.results import FileResult, Span, add_project_findings, finding_at
from ranklint.rules import PendingFinding, Rule, rule_by_code
from ranklint.rules.base import ProjectFinding
from ranklint.rules.framework.parse_error import ParseError
from ranklint.rules.framework.unused_suppression import UNUSED_SUPPRESSION, unused_suppressions
from ranklint.source import SourceError, decode_source, parse_source
from ranklint.suppressions import NO_SUPPRESSIONS, parse_suppressions

logger = logging.getLogger(__name__)

# Below this many files a process pool costs more than it saves.
_MIN_FILES_FOR_POOL = 8
# Walks that place call sites parse a file each, as linting does.
_MIN_WALKS_FOR_POOL = 8


class Linter:
    """Lints files under one configuration. Cheap to build; picklable config."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.rules = selected_rules(config)
        self._per_file_ignores = [
            *config.kind_ignore_specs(),
            *config.per_file_ignore_specs(),
        ]
        self.settings = config.analysis_settings()
        self._test_spec = config.test_spec()
        self._script_spec = config.script_spec()
        self._project_rules = tuple(rule for rule in self.rules if rule.project)

    def file_context(self, path: str, module: cst.Module, text: str) -> FileContext:
        """The walk's context for ``path``, with whether it is a test or a script."""
        relative = self.config.relative_path(path)
        ctx = FileContext(
            path=path,
            module=module,
            settings=self.settings,
            is_test=self._test_spec.match_file(relative),
            is_script=self._script_spec.match_file(relative),
            source=text,
        )
        return ctx

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
        with collector_paused():
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
        if not visiting and not self._project_rules:
            return FileResult(path)
        # Comments are tokenized only when they can matter: a possible
        # skip-file marker now, line suppressions once there are findings.
        if "skip-file" in text and parse_suppressions(text).skip_file:
            return FileResult(path)

        pending: list[PendingFinding] = []
        ctx = self.file_context(path, module, text)
        recorders = [recorder(ctx) for recorder in FACT_RECORDERS]
        walker = Walker(ctx, [*recorders, *(rule(ctx, pending.append) for rule in visiting)])
        with deep_recursion():
            walker.walk(module)
            result = self._resolve(path, module, text, walker, pending, rules)
        if not walker.errors:
            result.summary = ctx.facts.summary(ctx.names.module_imports(), is_test=ctx.is_test)
        return result

    def _resolve(
        self,
        path: str,
        module: cst.Module,
        text: str,
        walker: Walker,
        pending: list[PendingFinding],
        rules: Sequence[type[Rule]] = (),
    ) -> FileResult:
        """Positions, suppressions and Finding objects for the walk's pending findings;
        with RNK002 among ``rules``, the suppressions that suppressed nothing."""
        pending = [p for p in pending if p.rule.code not in walker.failed_rules]
        result = FileResult(path, errors=walker.errors)
        unused_rule = next((rule for rule in rules if rule.code == UNUSED_SUPPRESSION), None)
        if not pending and unused_rule is None:
            return result

        suppressions = parse_suppressions(text)
        used: set[tuple[int, str]] = set()
        placed = [(p.node, p.statement, p.top_statement) for p in pending]
        # One pass over the statements holding findings places them and their fixes.
        positions = placed_positions(module, placed, text, fix_nodes(pending))
        spans = [span_of(positions, node, statement) for node, statement, _ in placed]
        shown = []
        for item, span in zip(pending, spans, strict=True):
            suppressing = suppressions.suppressing(item.rule.code, span.lines)
            if suppressing is not None:
                line, entries = suppressing
                used.update((line, entry) for entry in entries)
                continue
            shown.append((item, span))
        fixes = fixes_of(module, text, [item for item, _ in shown], positions)
        for (item, span), fix in zip(shown, fixes, strict=True):
            result.findings.append(
                finding_at(item.rule, item.message, path, span, fix=fix, evidence=item.evidence)
            )
        if unused_rule is not None:
            # Codes decided here, in this file's walk, are judged now; those of
            # project-phase rules once the project phase has run (their
            # suppression may serve a finding this walk cannot see).
            walked = [rule for rule in rules if rule.code not in walker.failed_rules]
            judged = {rule.code for rule in walked} - {"RNK001", UNUSED_SUPPRESSION}
            now = {rule.code for rule in walked if not rule.project} & judged
            later = {rule.code for rule in walked if rule.project} & judged
            found = unused_suppressions(unused_rule, path, text, suppressions, used, now)
            result.findings.extend(finding for _, finding in found)
            result.unused_candidates = unused_suppressions(
                unused_rule, path, text, suppressions, used, later, also_checked=now
            )
        result.findings.sort(key=Finding.sort_key)
        return result

    # -- the project phase ------------------------------------------------------
    def project_phase(
        self,
        results: Sequence[FileResult],
        sources: dict[str, str | bytes] | None = None,
        cache: Cache | None = None,
        jobs: int | None = 1,
        *,
        judge_suppressions: bool = False,
        complete: bool = True,
    ) -> None:
        """Add the findings that need every file's facts (call graph) to ``results``.

        ``sources``: file contents by path for results that did not come from a
        file on disk (``lint_source``); others are read again, only when a
        finding or its call chain points into them, and parsed again only for
        call sites whose positions are not known yet (from the cache).

        With ``cache``, when every result came through it, the phase's findings
        are stored under the key of all the files' keys; a run over the same
        files with the same bytes takes them from there, unpacks no summary and
        builds no call graph. ``jobs``: processes for the walks that place call
        sites whose positions are not known yet (one file each).

        ``judge_suppressions``: the results are the whole project, so the RNK002
        candidates for codes of project-phase rules (``unused_candidates``) are
        judged: kept where the phase suppressed nothing with them.

        ``complete``: the results are every file of the project. When not (a
        run over part of a project that did not reach all of its files), the
        checks that need every file (``Rule.whole_project``: is a mesh
        dimension declared anywhere?) are not run, and ``--verbose`` says so;
        their rules' per-file findings are kept.
        """
        rules = self._project_rules
        if not complete:
            undecided = [rule.code for rule in rules if rule.whole_project]
            if undecided:
                logger.info(
                    "%s: not judged across files: this run sees %d files, not every file of "
                    "the project",
                    ", ".join(undecided),
                    len(results),
                )
            rules = tuple(rule for rule in rules if not rule.whole_project)
        if not rules:
            return
        judged = judge_suppressions
        key = None
        if cache is not None and not sources:
            key = cache.project_key(results, judged=judged, complete=complete)
        made = cache.get_project(key) if cache is not None and key is not None else None
        if made is None:
            made, used = self._project_findings(results, sources or {}, cache, jobs, rules)
            if judged:
                _add_unused(made, results, used)
            if cache is not None and key is not None:
                cache.put_project(key, made)
        add_project_findings(results, made)

    def _project_findings(
        self,
        results: Sequence[FileResult],
        sources: dict[str, str | bytes],
        cache: Cache | None,
        jobs: int | None,
        rules: Sequence[type[Rule]],
    ) -> tuple[dict[str, list[Finding]], set[tuple[str, int, str]]]:
        """The project phase's findings by path (see :meth:`project_phase`), and the
        (path, line, code) of each suppression comment that suppressed one."""
        used: set[tuple[str, int, str]] = set()
        summaries = [
            summary for result in results if (summary := result.module_summary()) is not None
        ]
        if not summaries:
            return {}, used
        codes: dict[str, set[str]] = {}
        found: list[tuple[type[Rule], ProjectFinding]] = []
        facts = ProjectFacts(summaries, self.settings)
        checked = run_with_large_stack(_check_project_deeply, rules, facts)
        for rule, finding in checked:
            if finding.path not in codes:
                codes[finding.path] = {enabled.code for enabled in self.rules_for(finding.path)}
            if rule.code in codes[finding.path]:
                found.append((rule, finding))
        if not found:
            return {}, used
        wanted: dict[str, set[Site]] = {}
        for _, finding in found:
            for hop in finding.chain:
                wanted.setdefault(hop.path, set()).add(hop.site)
        by_path = {result.path: result for result in results}
        located = self._all_located(wanted, sources, by_path, cache, jobs)
        suppressions = {
            path: parse_suppressions(place.text) if place.text is not None else NO_SUPPRESSIONS
            for path, place in located.items()
        }
        made: dict[str, list[Finding]] = {}
        for rule, finding in found:
            finished = project_finding(rule, finding, located)
            if finished is None or finding.path not in by_path:
                continue
            lines = located[finding.path].sites[finding.site].lines
            suppressing = suppressions[finding.path].suppressing(finished.code, lines)
            if suppressing is not None:
                line, entries = suppressing
                used.update((finding.path, line, entry) for entry in entries)
                continue
            made.setdefault(finding.path, []).append(finished)
        return made, used

    def _all_located(
        self,
        wanted: dict[str, set[Site]],
        sources: dict[str, str | bytes],
        by_path: dict[str, FileResult],
        cache: Cache | None,
        jobs: int | None,
    ) -> dict[str, Located]:
        """Positions of the ``wanted`` sites of each file: from earlier runs when
        known, else by a walk of the file (in ``jobs`` processes when several
        files need one)."""
        located: dict[str, Located] = {}
        walks: list[tuple[str, set[Site], str | bytes]] = []
        for path, sites in wanted.items():
            source = sources.get(path)
            if source is None:
                try:
                    with open(path, "rb") as handle:
                        source = handle.read()
                except OSError:
                    logger.warning("%s vanished during the run; findings skipped", path)
                    located[path] = Located(None, {})
                    continue
            result = by_path.get(path)
            known = result.located if result is not None else {}
            if sites <= known.keys():
                try:
                    text = decode_source(source) if isinstance(source, bytes) else source
                except SourceError:
                    located[path] = Located(None, {})
                    continue
                located[path] = Located(text, {site: known[site] for site in sites})
            else:
                walks.append((path, sites, source))
        for (path, _, source), place in zip(walks, self._walks(walks, jobs), strict=True):
            located[path] = place
            result = by_path.get(path)
            if result is not None and place.sites:
                result.located.update(place.sites)
                if cache is not None and isinstance(source, bytes):
                    cache.put(path, source, result)
        return {path: located[path] for path in wanted}

    def _walks(
        self, walks: Sequence[tuple[str, set[Site], str | bytes]], jobs: int | None
    ) -> list[Located]:
        """:meth:`_locate` for each of ``walks``, in worker processes when several."""
        workers = min(_workers(jobs), len(walks))
        if workers <= 1 or len(walks) < _MIN_WALKS_FOR_POOL:
            return [self._locate(path, sites, source) for path, sites, source in walks]
        with ProcessPoolExecutor(
            max_workers=workers,
            mp_context=_pool_context(),
            initializer=_init_worker,
            initargs=(self.config, None),
        ) as pool:
            return list(pool.map(_locate_in_worker, walks))

    def _locate(self, path: str, sites: set[Site], source: str | bytes) -> Located:
        return run_with_large_stack(self._locate_in_thread, path, sites, source)

    def _locate_in_thread(self, path: str, sites: set[Site], source: str | bytes) -> Located:
        try:
            text = decode_source(source) if isinstance(source, bytes) else source
            module = parse_source(text)
        except SourceError:
            logger.warning("%s changed during the run; findings skipped", path)
            return Located(None, {})
        ctx = self.file_context(path, module, text)
        locator = Locator(ctx, sites)
        # The fact recorders record again: their sites (negative ordinals) name
        # the same nodes as in the first walk.
        recorders = [recorder(ctx) for recorder in FACT_RECORDERS]
        with deep_recursion():
            Walker(ctx, [locator, *recorders]).walk(module)
            for site in sites:
                if site.ordinal < 0 and site in ctx.facts.recorded:
                    locator.found[site] = ctx.facts.recorded[site]
            spans = spans_of(module, list(locator.found.values()), text)
        return Located(text, dict(zip(locator.found, spans, strict=True)))

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
        span = Span(line, col, line, end_col, [line])
        return FileResult(path, findings=[finding_at(ParseError, message, path, span)])


def _add_unused(
    made: dict[str, list[Finding]],
    results: Sequence[FileResult],
    used: set[tuple[str, int, str]],
) -> None:
    """Add to ``made`` the RNK002 candidates of ``results`` whose code the project
    phase suppressed nothing with, on their line."""
    for result in results:
        for code, finding in result.unused_candidates:
            if (result.path, finding.line, code) not in used:
                made.setdefault(result.path, []).append(finding)


def selected_rules(config: Config) -> tuple[type[Rule], ...]:
    """The rule classes the configuration enables, sorted by code."""
    rules = []
    for code in config.enabled_codes():
        rule = rule_by_code(code)
        if rule is not None:
            rules.append(rule)
    return tuple(rules)


def _check_project_deeply(
    rules: Sequence[type[Rule]], facts: ProjectFacts
) -> list[tuple[type[Rule], ProjectFinding]]:
    """Every project rule's findings; the analysis recurses over branches and call chains."""
    with deep_recursion():
        return [(rule, finding) for rule in rules for finding in rule.check_project(facts)]


# -- many files ----------------------------------------------------------------

_worker_linter: Linter | None = None
_worker_cache: Cache | None = None


def _init_worker(config: Config, cache: Cache | None) -> None:
    global _worker_linter, _worker_cache
    claim_process()
    _worker_linter = Linter(config)
    _worker_cache = cache


def _lint_in_worker(path: str) -> FileResult:
    assert _worker_linter is not None, "worker not initialised"
    return _worker_linter.lint_file_cached(path, _worker_cache)


def _locate_in_worker(walk: tuple[str, set[Site], str | bytes]) -> Located:
    assert _worker_linter is not None, "worker not initialised"
    return _worker_linter._locate(*walk)


def _workers(jobs: int | None) -> int:
    """Processes for ``jobs`` (``None`` or 0: one per CPU)."""
    return jobs if jobs and jobs > 0 else (os.cpu_count() or 1)


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
    known: Sequence[FileResult | None] | None = None,
) -> list[FileResult]:
    """Lint ``files``; results come back in the order of ``files`` whatever ``jobs`` is.

    With ``cache``, files whose entry is valid are not parsed; only the others
    go to the workers (which store their results). ``known``: the cache's
    answer for each file, when the caller has already asked it.
    """
    linter = Linter(config)
    if known is None:
        known = cache.lookup(files) if cache is not None else [None] * len(files)
    results = list(known)
    misses = [index for index, result in enumerate(results) if result is None]
    workers = min(_workers(jobs), len(misses))
    if workers <= 1 or len(misses) < _MIN_FILES_FOR_POOL:
        for index in misses:
            results[index] = linter.lint_file_cached(files[index], cache)
    else:
        chunksize = max(1, len(misses) // (workers * 4))  # pragma: no mutate (any size >= 1 works)
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
