"""The engine: read, decode, parse once, walk once with all rules, suppress, and
run many files in parallel with output identical to a serial run."""

from __future__ import annotations

import ast
import logging
import os
import re
import traceback
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from ranklint.analysis.context import FileContext
from ranklint.config import Config
from ranklint.findings import Finding, InternalError
from ranklint.rules import PendingFinding, Rule
from ranklint.rules.parse import ParseError
from ranklint.source import DecodeError, decode_source
from ranklint.suppressions import parse_suppressions
from ranklint.traversal import Walker

logger = logging.getLogger(__name__)

# Below this many files a process pool costs more than it saves.
_MIN_FILES_FOR_POOL = 8


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    errors: list[InternalError] = field(default_factory=list)


class Linter:
    """Lints files under one configuration. Cheap to build; picklable config."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.rules = config.enabled_rules()
        self._per_file_ignores = config.per_file_ignore_specs()

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
            except DecodeError as exc:
                return self._parse_error(path, exc.message, exc.line, exc.col, rules)
        else:
            text = source
        try:
            module = cst.parse_module(text)
        except cst.ParserSyntaxError as exc:
            message, line, col = describe_syntax_error(text, exc)
            return self._parse_error(path, message, line, col, rules)
        except (ValueError, SyntaxError) as exc:  # e.g. NUL bytes
            return self._parse_error(path, f"cannot parse: {exc}", 1, 1, rules)

        visiting = [rule for rule in rules if rule.handlers_on_visit or rule.handlers_on_leave]
        if not visiting:
            return FileResult(path)
        suppressions = parse_suppressions(text)
        if suppressions.skip_file:
            return FileResult(path)

        pending: list[PendingFinding] = []
        ctx = FileContext(path=path, module=module)
        walker = Walker(ctx, [rule(ctx, pending.append) for rule in visiting])
        walker.walk(module)
        pending = [p for p in pending if p.rule.code not in walker.failed_rules]
        result = FileResult(path, errors=walker.errors)
        if not pending:
            return result

        # Positions are computed only for files with findings.
        positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        for item in pending:
            span = positions[item.node]
            lines = {span.start.line, span.end.line}
            if item.statement is not None:
                statement = positions[item.statement]
                lines |= {statement.start.line, statement.end.line}
            if suppressions.suppresses(item.rule.code, sorted(lines)):
                continue
            result.findings.append(
                Finding(
                    code=item.rule.code,
                    name=item.rule.name,
                    severity=item.rule.severity,
                    message=item.message,
                    path=path,
                    line=span.start.line,
                    col=span.start.column + 1,
                    end_line=span.end.line,
                    end_col=span.end.column + 1,
                    trace=item.trace,
                )
            )
        result.findings.sort(key=Finding.sort_key)
        return result

    def _parse_error(
        self,
        path: str,
        message: str,
        line: int,
        col: int,
        rules: Sequence[type[Rule]] | None = None,
    ) -> FileResult:
        if ParseError not in (self.rules_for(path) if rules is None else rules):
            return FileResult(path)
        finding = Finding(
            code=ParseError.code,
            name=ParseError.name,
            severity=ParseError.severity,
            message=message,
            path=path,
            line=line,
            col=col,
            end_line=line,
            end_col=col + 1,
        )
        return FileResult(path, findings=[finding])


_LIBCST_POSITION = re.compile(r"^(?:parser|tokenizer) error: (?:error at (\d+):(\d+): )?")


def describe_syntax_error(text: str, exc: cst.ParserSyntaxError) -> tuple[str, int, int]:
    """Message and 1-based position of a syntax error.

    CPython's parser (``ast.parse`` only builds a tree; nothing is executed)
    gives better messages and exact positions than libcst's native parser, so
    it is asked first, on this error path only.
    """
    try:
        ast.parse(text)
    except SyntaxError as syntax_error:
        line = syntax_error.lineno or 1
        col = syntax_error.offset or 1
        return f"syntax error: {syntax_error.msg}", line, max(col, 1)
    except (ValueError, RecursionError, MemoryError):
        pass
    match = _LIBCST_POSITION.match(exc.message)
    detail = exc.message[match.end() :] if match else exc.message
    if match and match.group(1):
        return f"syntax error: {detail}", int(match.group(1)), int(match.group(2)) + 1
    return f"syntax error: {detail}", exc.raw_line, exc.raw_column + 1


# -- many files ----------------------------------------------------------------

_worker_linter: Linter | None = None


def _init_worker(config: Config) -> None:
    global _worker_linter
    _worker_linter = Linter(config)


def _lint_in_worker(path: str) -> FileResult:
    assert _worker_linter is not None, "worker not initialised"
    return _worker_linter.lint_file(path)


def lint_files(
    files: Sequence[str], config: Config, *, jobs: int | None = None
) -> list[FileResult]:
    """Lint ``files``; results come back in the order of ``files`` whatever ``jobs`` is."""
    workers = jobs if jobs and jobs > 0 else (os.cpu_count() or 1)
    workers = min(workers, len(files))
    if workers <= 1 or len(files) < _MIN_FILES_FOR_POOL:
        linter = Linter(config)
        return [linter.lint_file(path) for path in files]
    chunksize = max(1, len(files) // (workers * 4))
    with ProcessPoolExecutor(
        max_workers=workers, initializer=_init_worker, initargs=(config,)
    ) as pool:
        return list(pool.map(_lint_in_worker, files, chunksize=chunksize))
