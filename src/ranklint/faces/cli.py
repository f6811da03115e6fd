"""The ``ranklint`` command line."""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from ranklint import __version__
from ranklint._process import own_process
from ranklint.api import LintResult, config_groups, config_start, lint_paths, project_root
from ranklint.cache import CACHE_DIR_NAME, default_cache_dir
from ranklint.config import Config, ConfigError, load_config
from ranklint.faces.actions import add_noqa, apply_baseline, diff, fix
from ranklint.faces.check_output import (
    FORMAT_CHOICES,
    normalise_format,
    report_and_exit_code,
    write_findings,
)
from ranklint.faces.exits import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK
from ranklint.faces.files import replace_file
from ranklint.faces.server_command import add_parser as add_server_parser
from ranklint.faces.server_command import run as run_server
from ranklint.faces.trace_command import add_parser as add_trace_parser
from ranklint.faces.trace_command import run as run_trace
from ranklint.findings import Finding
from ranklint.options import CONFIDENCE_LEVELS

# The rules (and libcst) are imported where they are used: a check served
# wholly from the cache never loads them.

logger = logging.getLogger(__name__)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_ERROR, f"ranklint: error: {message}\n(see `{self.prog} --help`)\n")


def _codes(value: str) -> list[str]:
    return [code.strip() for code in value.split(",") if code.strip()]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ranklint",
        description="Static analysis for distributed PyTorch training and inference code.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    parser.add_argument("--version", action="version", version=f"ranklint {__version__}")
    # Sub-parsers are of the parent's class (_Parser) by default.
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = sub.add_parser(
        "check", help="check files and directories (default: .)", allow_abbrev=False
    )
    check.add_argument("paths", nargs="*", metavar="PATH", help="files or directories")
    check.add_argument("--select", type=_codes, help="codes or prefixes to enable (replaces)")
    check.add_argument(
        "--extend-select", type=_codes, default=[], help="codes or prefixes to enable in addition"
    )
    check.add_argument("--ignore", type=_codes, default=[], help="codes or prefixes to disable")
    check.add_argument(
        "--confidence",
        choices=CONFIDENCE_LEVELS,
        default=None,
        help="report findings of at least this confidence (default: the `confidence` option, "
        "high); medium and low add findings with a weaker link in their evidence",
    )
    check.add_argument(
        "--show-evidence",
        action="store_true",
        help="with the text format, print under each collective finding why it believes what "
        "it claims, link by link, and its confidence",
    )
    check.add_argument(
        "--output-format",
        "--format",
        dest="format",
        choices=FORMAT_CHOICES,
        default="full",
        help="output format: full (the default: each finding with its code frame), concise "
        "(one line a finding), text (the same as full), or a machine-readable one",
    )
    check.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the text output: auto (a terminal, unless NO_COLOR is set), always, never",
    )
    check.add_argument("--config", metavar="FILE", help="configuration file (pyproject.toml)")
    check.add_argument("--jobs", "-j", type=int, default=None, help="processes (default: CPUs)")
    check.add_argument(
        "--exit-zero", action="store_true", help="exit 0 even when there are findings"
    )
    check.add_argument(
        "--force-exclude",
        action="store_true",
        help="apply exclude patterns to paths named on the command line too",
    )
    check.add_argument(
        "--no-cache", action="store_true", help="do not read or write the result cache"
    )
    check.add_argument(
        "--no-respect-gitignore",
        action="store_true",
        help="also check the files git ignores (default: skip them when walking folders)",
    )
    check.add_argument(
        "--cache-dir",
        metavar="DIR",
        help=f"cache location (default: $RANKLINT_CACHE_DIR or {CACHE_DIR_NAME}/ in the "
        f"project root)",
    )
    check.add_argument(
        "--no-project-index",
        action="store_true",
        help="analyse only the given paths; by default the rest of their project joins the "
        "call graph (findings are reported for the given paths only)",
    )
    check.add_argument(
        "--only-given-files",
        action="store_true",
        help="report only findings located in the given paths; by default findings "
        "elsewhere in the project whose call chain passes through them are reported too",
    )
    check.add_argument(
        "--statistics",
        action="store_true",
        help="print the number of findings per code instead of the findings (text format)",
    )
    check.add_argument(
        "--output-file",
        "-o",
        metavar="FILE",
        help="write the findings to FILE instead of standard output (replaced atomically)",
    )
    check.add_argument(
        "--show-files", action="store_true", help="list the files that would be checked, and exit"
    )
    check.add_argument(
        "--show-settings",
        action="store_true",
        help="print the settings in effect as TOML (a [tool.ranklint] table that reads back), "
        "and exit",
    )
    check.add_argument(
        "--stdin-filename",
        metavar="NAME",
        help="with the path `-`: the name of the source read from standard input (for "
        "per-file settings and the output)",
    )
    check.add_argument(
        "--fix", action="store_true", help="apply the safe fixes of the findings to their files"
    )
    check.add_argument(
        "--unsafe-fixes",
        action="store_true",
        help="with --fix or --diff, apply the unsafe fixes too (they may change behaviour)",
    )
    check.add_argument(
        "--diff",
        action="store_true",
        help="print the fixes as a unified diff and write nothing (exit 1 when there is one); "
        "with --fix, the same",
    )
    check.add_argument(
        "--show-fixes", action="store_true", help="with --fix, list every finding fixed"
    )
    check.add_argument(
        "--exit-non-zero-on-fix",
        action="store_true",
        help="with --fix, exit 1 when a fix was applied, even if no finding remains",
    )
    check.add_argument(
        "--add-noqa",
        action="store_true",
        help="append `# noqa: CODE` to the line of every current finding and exit",
    )
    check.add_argument(
        "--baseline",
        metavar="FILE",
        help="report only the findings not recorded in FILE (see --write-baseline)",
    )
    check.add_argument(
        "--write-baseline",
        action="store_true",
        help="record every current finding in the --baseline FILE and exit 0",
    )
    check.add_argument(
        "--baseline-prune",
        action="store_true",
        help="drop the --baseline FILE's records that no longer match a finding",
    )
    check.add_argument("--verbose", "-v", action="store_true", help="debug logs and tracebacks")

    clean = sub.add_parser(
        "clean", help="remove the result cache of a project (default: .)", allow_abbrev=False
    )
    clean.add_argument("paths", nargs="*", metavar="PATH", help="files or folders of the project")
    clean.add_argument("--cache-dir", metavar="DIR", help="the cache to remove")
    rule = sub.add_parser("rule", help="print one rule's documentation", allow_abbrev=False)
    rule.add_argument(
        "code", nargs="?", help="rule code or name, e.g. RNK101 or import-time-process-group"
    )
    rule.add_argument("--all", action="store_true", help="print every rule's documentation")
    rules = sub.add_parser("rules", help="list every rule", allow_abbrev=False)
    rules.add_argument("--format", choices=("text", "json"), default="text", help="output format")
    add_trace_parser(sub)
    add_server_parser(sub)
    # The top-level help shows the options of `check`, the command most runs use.
    parser.epilog = "options of `ranklint check`:\n" + _options_help(check)
    return parser


def _options_help(parser: argparse.ArgumentParser) -> str:
    """The option lines of ``parser``'s help, without its usage and positionals."""
    text = parser.format_help()
    start = text.find("options:")
    return text[start + len("options:") :].strip("\n") if start >= 0 else text


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if getattr(args, "verbose", False) else logging.WARNING,
        format="ranklint: %(levelname)s: %(name)s: %(message)s",
    )
    try:
        if args.command == "check":
            with own_process():
                return _check(args, sys.stdout, sys.stderr)
        if args.command == "rule":
            return _rule(args, sys.stdout, sys.stderr)
        if args.command == "clean":
            return _clean(args, sys.stdout, sys.stderr)
        if args.command == "rules":
            return _rules(args.format, sys.stdout)
        if args.command == "trace":
            return run_trace(args, sys.stdout, sys.stderr)
        if args.command == "server":
            return run_server(args, sys.stderr)
    except KeyboardInterrupt:
        sys.stderr.write("ranklint: interrupted\n")
        return 130
    except BrokenPipeError:
        # The reader went away (`ranklint check | head`); not an error of ours.
        sys.stderr.close()
        return EXIT_OK
    except Exception as exc:  # a bug in ranklint: one line, never exit 1 ("findings")
        logger.debug("internal error", exc_info=True)
        sys.stderr.write(f"ranklint: error: internal error: {type(exc).__name__}: {exc}\n")
        if not getattr(args, "verbose", False):
            sys.stderr.write("(run with --verbose for the traceback)\n")
        return EXIT_ERROR
    parser.print_help(sys.stderr)
    return EXIT_ERROR


def _rule(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ranklint.docs import render_rule
    from ranklint.rules import all_rules

    if args.all == (args.code is not None):
        err.write("ranklint: error: give one rule code or name, or --all\n")
        return EXIT_ERROR
    if args.all:
        out.write("\n".join(render_rule(rule) for rule in all_rules()))
        return EXIT_OK
    wanted = args.code.strip()
    for rule in all_rules():
        if wanted.upper() == rule.code or wanted.lower() == rule.name:
            out.write(render_rule(rule))
            return EXIT_OK
    err.write(f"ranklint: error: unknown rule {args.code!r}; `ranklint rules` lists them\n")
    return EXIT_ERROR


def _rules(format_: str, out: TextIO) -> int:
    from ranklint.rules import all_rules

    rows = [
        (r.code, r.name, r.severity.value, "on" if r.default_enabled else "off", r.summary)
        for r in all_rules()
    ]
    if format_ == "json":
        keys = ("code", "name", "severity", "default", "summary")
        records = [dict(zip(keys, row, strict=True)) for row in rows]
        for record in records:
            record["default"] = record["default"] == "on"
        out.write(json.dumps(records, indent=2) + "\n")
        return EXIT_OK
    name_width = max(len(row[1]) for row in rows)
    out.write(f"{'code':<7} {'name':<{name_width}} {'severity':<8} default  summary\n")
    for code, name, severity, default, summary in rows:
        out.write(f"{code:<7} {name:<{name_width}} {severity:<8} {default:<8} {summary}\n")
    return EXIT_OK


def _check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    normalise_format(args)
    if args.jobs is not None and args.jobs < 1:
        err.write("ranklint: error: --jobs must be at least 1\n")
        return EXIT_ERROR
    if args.add_noqa and args.baseline is not None:
        err.write("ranklint: error: --add-noqa and --baseline are two ways to adopt; pick one\n")
        return EXIT_ERROR
    if args.add_noqa and (args.fix or args.diff):
        err.write("ranklint: error: --add-noqa does not combine with --fix or --diff\n")
        return EXIT_ERROR
    if (args.write_baseline or args.baseline_prune) and args.baseline is None:
        err.write("ranklint: error: --write-baseline and --baseline-prune need --baseline FILE\n")
        return EXIT_ERROR
    if args.show_evidence and (args.format != "text" or args.statistics):
        err.write(
            "ranklint: error: --show-evidence adds lines to the text format's findings; "
            "the json, json-lines and sarif formats always carry the evidence\n"
        )
        return EXIT_ERROR
    if args.statistics and args.format != "text":
        err.write(
            f"ranklint: error: --statistics prints a text table; it does not combine with "
            f"--format {args.format}\n"
        )
        return EXIT_ERROR
    try:
        start = config_start(args.paths or ["."], args.stdin_filename)
        config: Config = load_config(args.config, cwd=start).with_overrides(
            select=args.select, extend_select=args.extend_select, ignore=args.ignore
        )
        if args.confidence is not None:
            config = dataclasses.replace(config, confidence_override=args.confidence)
    except ConfigError as exc:
        err.write(f"ranklint: error: {exc}\n")
        return EXIT_ERROR
    if args.no_respect_gitignore:
        config = dataclasses.replace(config, respect_gitignore=False)
    paths = args.paths or ["."]
    if args.show_settings:
        return _show_settings(config, paths, out)
    if args.show_files:
        from ranklint.discovery import discover

        found = discover(paths, config, force_exclude=args.force_exclude)
        # As a check would: each file under the configuration that covers it.
        try:
            groups = config_groups(
                found.files, config, named=paths, force_exclude=args.force_exclude
            )
        except ConfigError as exc:
            err.write(f"ranklint: error: {exc}\n")
            return EXIT_ERROR
        checked = {path for _, files in groups for path in files}
        out.write("".join(f"{path}\n" for path in found.files if path in checked))
        for path in found.missing:
            err.write(f"ranklint: error: {path}: no such file or directory\n")
        return EXIT_ERROR if found.missing else EXIT_OK
    if "-" in paths:
        return _check_stdin(args, config, paths, out, err)
    if args.stdin_filename is not None:
        err.write("ranklint: error: --stdin-filename needs the path `-`\n")
        return EXIT_ERROR
    cache_dir: Path | None = None
    if not args.no_cache:
        if args.cache_dir is not None:
            cache_dir = Path(args.cache_dir)
        else:
            # Never the folder of a --config file: that may lie far above the project.
            root = project_root(paths, config) or Path.cwd()
            cache_dir = default_cache_dir(root)
    logger.debug("configuration: %s", config.source or "defaults (no [tool.ranklint] found)")
    logger.debug("project root: %s", project_root(paths, config))
    logger.debug("cache: %s", cache_dir or "off")

    def run() -> LintResult:
        return lint_paths(
            paths,
            config,
            jobs=args.jobs,
            force_exclude=args.force_exclude,
            cache_dir=cache_dir,
            whole_project=not args.no_project_index,
            missing_ok=True,
            only_given_files=args.only_given_files,
        )

    try:
        result = run()
    except ConfigError as exc:  # a folder's own configuration file, found on the way
        err.write(f"ranklint: error: {exc}\n")
        return EXIT_ERROR
    fixed = 0
    if args.diff:
        return diff(args, result, config, out, err)
    if args.fix:
        fixed = fix(args, result, config, err)
        if fixed < 0:
            return EXIT_ERROR
        if fixed:
            result = run()  # what remains, on the fixed files
    if args.add_noqa:
        return add_noqa(result, err)
    if args.baseline is not None:
        shown = apply_baseline(args, result, err)
        if shown is None:
            return EXIT_ERROR
        if args.write_baseline:
            return EXIT_ERROR if result.errors or result.missing else EXIT_OK
        result = shown
    if args.output_file is None:
        write_findings(args, result, out)
    else:
        buffer = io.StringIO()
        write_findings(args, result, buffer)
        try:
            replace_file(Path(args.output_file), buffer.getvalue().encode("utf-8"))
        except OSError as exc:
            err.write(f"ranklint: error: cannot write {args.output_file}: {exc.strerror}\n")
            return EXIT_ERROR
    for path, reason in result.skipped:
        err.write(f"ranklint: warning: {path}: skipped: {reason}\n")
    if result.files_checked == 0 and not result.missing and not result.skipped:
        err.write(f"ranklint: warning: no Python files to check in {', '.join(paths)}\n")
    return report_and_exit_code(args, result, err, fixed=fixed)


def _show_settings(config: Config, paths: list[str], out: TextIO) -> int:
    from ranklint.faces.settings_toml import render_settings

    out.write(render_settings(config, paths, project_root(paths, config)))
    return EXIT_OK


def _clean(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import shutil

    from ranklint.cache import is_ranklint_cache

    if args.cache_dir is not None:
        cache = Path(args.cache_dir)
    else:
        paths = args.paths or ["."]
        try:
            config = load_config(cwd=config_start(paths, None))
        except ConfigError as exc:
            err.write(f"ranklint: error: {exc}\n")
            return EXIT_ERROR
        cache = default_cache_dir(project_root(paths, config) or Path.cwd())
    if not cache.exists():
        out.write(f"no cache at {cache}\n")
        return EXIT_OK
    if not is_ranklint_cache(cache):
        err.write(
            f"ranklint: error: {cache} is not a ranklint cache (no CACHEDIR.TAG of ranklint's); "
            "not removed\n"
        )
        return EXIT_ERROR
    shutil.rmtree(cache)
    out.write(f"removed {cache}\n")
    return EXIT_OK


def _check_stdin(
    args: argparse.Namespace, config: Config, paths: list[str], out: TextIO, err: TextIO
) -> int:
    """``ranklint check -``: one source from standard input, named by --stdin-filename."""
    from ranklint.api import lint_source
    from ranklint.discovery import is_excluded

    if paths != ["-"] or args.add_noqa or args.baseline is not None:
        err.write(
            "ranklint: error: `-` (standard input) must be the only path, without --add-noqa "
            "or --baseline\n"
        )
        return EXIT_ERROR
    name = args.stdin_filename or "-"
    # With --force-exclude an excluded name is skipped, as a named file would be
    # (editors and pre-commit pass every buffer).
    if args.force_exclude and args.stdin_filename is not None and is_excluded(name, config):
        return report_and_exit_code(args, LintResult(), err)
    data = sys.stdin.buffer.read()
    result = lint_source(data, name, config)
    if args.fix or args.diff:
        return _fix_stdin(args, config, name, data, result, out, err)
    # The code frames show the source read, never a file of that name on disk.
    write_findings(args, result, out, sources={name: _decoded(data)})
    return report_and_exit_code(args, result, err)


def _decoded(data: bytes) -> str | None:
    from ranklint.decoding import SourceError, decode_source

    try:
        return decode_source(data)
    except SourceError:
        return None


def _fix_stdin(
    args: argparse.Namespace,
    config: Config,
    name: str,
    data: bytes,
    result: LintResult,
    out: TextIO,
    err: TextIO,
) -> int:
    """``--fix`` on standard input: the fixed source to standard output, what remains
    to standard error; ``--diff``: the diff to standard output."""
    from ranklint.api import lint_source
    from ranklint.fixing.apply import FixedSource, fix_text

    text = _decoded(data)
    fixed: list[Finding] = []
    after = text
    if text is not None:

        def relint(source: str) -> list[Finding]:
            return lint_source(source, name, config).findings

        after, fixed = fix_text(text, result.findings, relint, unsafe=args.unsafe_fixes)
    if args.diff:
        if after != text:  # both None when undecodable
            out.write(FixedSource(name, text, after, fixed).diff())
        out.flush()
        return EXIT_FINDINGS if fixed else EXIT_OK
    if after is None:  # undecodable: passed through unchanged, RNK001 on standard error
        out.flush()
        out.buffer.write(data)
        remaining = result
    else:
        out.write(after)
        remaining = lint_source(after, name, config) if fixed else result
    out.flush()
    args_text = argparse.Namespace(**{**vars(args), "format": "text", "statistics": False})
    write_findings(args_text, remaining, err, sources={name: after})
    return report_and_exit_code(args, remaining, err, fixed=len(fixed))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main(sys.argv[1:]))
