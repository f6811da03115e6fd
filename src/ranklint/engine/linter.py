"""The per-file linter: read, decode, parse once, walk once with the fact
recorders and the rules, suppress; and walk a file again to place call sites."""

from __future__ import annotations

import logging
import traceback
from collections.abc import Sequence

import libcst as cst

from ranklint._process import collector_paused
from ranklint.analysis.walk.constants import module_flags
from ranklint.analysis.walk.context import FileContext
from ranklint.analysis.walk.recorders import FACT_RECORDERS
from ranklint.cache import Cache
from ranklint.config import Config
from ranklint.engine.locate import Located, Locator
from ranklint.engine.spans import placed_positions, span_of, spans_of
from ranklint.engine.stack import deep_recursion, run_with_large_stack
from ranklint.engine.walker import Walker
from ranklint.findings import Finding, InternalError
from ranklint.fixing.plan import fix_nodes, fixes_of
from ranklint.model.events import Site
from ranklint.positions import NEWLINE
from ranklint.results import FileResult, Span, finding_at
from ranklint.rules import PendingFinding, Rule, rule_by_code
from ranklint.rules.meta.parse_error import ParseError
from ranklint.rules.meta.unused_suppression import UNUSED_SUPPRESSION, unused_suppressions
from ranklint.source import SourceError, parse_source, python_text
from ranklint.suppressions import parse_suppressions

logger = logging.getLogger(__name__)


class FileLinter:
    """Lints one file at a time under one configuration, and places call sites in a
    file by walking it again. Cheap to build; picklable config."""

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
        try:
            text = python_text(source, path)
        except SourceError as exc:
            return self._parse_error(path, exc.message, exc.line, exc.col, rules)
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
            result.summary.flags = module_flags(module, text)
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
        with the unused-suppression rule among ``rules``, the suppressions that
        suppressed nothing."""
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
            judged = {rule.code for rule in walked} - {ParseError.code, UNUSED_SUPPRESSION}
            now = {rule.code for rule in walked if not rule.project} & judged
            later = {rule.code for rule in walked if rule.project} & judged
            found = unused_suppressions(unused_rule, path, text, suppressions, used, now)
            result.findings.extend(finding for _, finding in found)
            result.unused_candidates = unused_suppressions(
                unused_rule, path, text, suppressions, used, later, also_checked=now
            )
        result.findings.sort(key=Finding.sort_key)
        return result

    def locate(self, path: str, sites: set[Site], source: str | bytes) -> Located:
        """The positions of ``sites`` in ``path``, by a walk of ``source``."""
        return run_with_large_stack(self._locate_in_thread, path, sites, source)

    def _locate_in_thread(self, path: str, sites: set[Site], source: str | bytes) -> Located:
        try:
            text = python_text(source, path)
            module = parse_source(text)
        except SourceError:
            logger.warning("%s changed during the run; findings skipped", path)
            return Located(None, {})
        ctx = self.file_context(path, module, text)
        locator = Locator(ctx, sites)
        # Calls are found by their ordinal alone. Where a site names a node a
        # fact recorder named (a negative ordinal), the recorders record again:
        # their sites name the same nodes as in the first walk.
        recording = any(site.ordinal < 0 for site in sites)
        recorders = [recorder(ctx) for recorder in FACT_RECORDERS] if recording else []
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


def selected_rules(config: Config) -> tuple[type[Rule], ...]:
    """The rule classes the configuration enables, sorted by code."""
    rules = []
    for code in config.enabled_codes():
        rule = rule_by_code(code)
        if rule is not None:
            rules.append(rule)
    return tuple(rules)
