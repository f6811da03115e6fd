"""The one entry point of every face: :func:`lint_source` and :func:`lint_paths`."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ranklint.analysis.project.layout import project_folder
from ranklint.cache import Cache
from ranklint.config import Config, config_file_in, load_config, load_config_file
from ranklint.discovery import discover, is_excluded
from ranklint.findings import Finding, InternalError
from ranklint.results import FileResult, add_project_findings

# The engine (libcst, the analysis, the rules) is imported only where a file
# must be parsed or the project phase must run: a run served wholly from the
# cache never loads it.


@dataclass
class LintResult:
    """Everything a run found, in deterministic order."""

    findings: list[Finding] = field(default_factory=list)
    errors: list[InternalError] = field(default_factory=list)
    files_checked: int = 0
    # Paths given by the user that do not exist.
    missing: list[str] = field(default_factory=list)
    # Paths given by the user that are not checked, with the reason (notebooks).
    skipped: list[tuple[str, str]] = field(default_factory=list)
    # Findings left out because their confidence is below the one reported.
    below_confidence: int = 0

    @classmethod
    def merge(cls, results: Sequence[FileResult], missing: Sequence[str] = ()) -> LintResult:
        findings = sorted((f for r in results for f in r.findings), key=Finding.sort_key)
        errors = [e for r in results for e in r.errors]
        return cls(findings, errors, len(results), list(missing))


def lint_source(
    source: str | bytes,
    path: str | Path = "<string>",
    config: Config | None = None,
    *,
    partial: bool = False,
) -> LintResult:
    """Lint one file's contents. ``bytes`` are decoded per PEP 263.

    ``partial``: the file is one of a project whose other files are not seen
    (flake8 hands over one file at a time). Project-phase findings of rules
    that need every file (``Rule.whole_project``: a mesh dimension another
    file may declare) are then dropped, not guessed.
    """
    from ranklint.engine import Linter

    linter = Linter(config if config is not None else Config())
    result = linter.lint_source(source, str(path))
    # The file is the whole project unless it is one of many (flake8).
    linter.project_phase(
        [result], {str(path): source}, judge_suppressions=not partial, complete=not partial
    )
    return _reported(LintResult.merge([result]), linter.config)


def lint_paths(
    paths: Sequence[str | Path],
    config: Config | None = None,
    *,
    jobs: int | None = None,
    force_exclude: bool = False,
    cache_dir: str | Path | None = None,
    whole_project: bool = False,
    missing_ok: bool = False,
    only_given_files: bool = False,
) -> LintResult:
    """Discover and lint files under ``paths``; ``jobs`` processes (default: CPU count).

    ``config``: when None, the nearest configuration above the folder holding
    ``paths``, as the CLI finds it (defaults when there is none), and for files
    below a folder with a configuration file of its own, that one
    (:func:`config_groups`); :class:`~ranklint.config.ConfigError` when one is
    broken. A ``config`` given here applies to every file.
    A path that does not exist raises :class:`FileNotFoundError` naming every
    such path, unless ``missing_ok`` (then they are listed in ``missing`` and
    the rest is checked, as the CLI does).

    ``cache_dir``: reuse and store per-file results there (no cache when None).
    ``whole_project``: when ``paths`` are part of a project (see
    :func:`project_root`), its other files join the call graph too, so that
    call chains into them are followed; only findings in ``paths`` are reported.
    Of the other files, those the cache knows join, and of the rest only those
    the calls of ``paths`` lead into (directly or not): a cold run over a few
    files of a large project parses only what their findings depend on.
    Findings in the other files whose trace passes through ``paths`` (a helper
    in ``paths`` now reaches a barrier, called under a rank guard elsewhere)
    are reported too, at their own location, unless ``only_given_files``; they
    are found in the files the run saw, so all of them with a warm cache.
    """
    config = config if config is not None else load_config(cwd=config_start(paths, None))
    found = discover([str(p) for p in paths], config, force_exclude=force_exclude)
    if found.missing and not missing_ok:
        names = ", ".join(found.missing)
        raise FileNotFoundError(f"no such file or directory: {names}")
    groups = config_groups(found.files, config, named=paths, force_exclude=force_exclude)
    # With one configuration, the project of a folder walked here is walked already;
    # with several, the others' files may still join a project's call graph.
    walked = {os.path.abspath(p) for p in paths if os.path.isdir(p)} if len(groups) == 1 else set()
    parts = [
        _lint_group(
            files,
            own,
            walked,
            jobs=jobs,
            cache_dir=cache_dir,
            whole_project=whole_project,
            only_given_files=only_given_files,
        )
        for own, files in groups
    ]
    return LintResult(
        findings=sorted((f for part in parts for f in part.findings), key=Finding.sort_key),
        errors=[error for part in parts for error in part.errors],
        files_checked=sum(part.files_checked for part in parts),
        missing=list(found.missing),
        skipped=list(found.skipped),
        below_confidence=sum(part.below_confidence for part in parts),
    )


def config_groups(
    files: Sequence[str],
    config: Config,
    *,
    named: Sequence[str | Path] = (),
    force_exclude: bool = False,
) -> list[tuple[Config, list[str]]]:
    """``files`` grouped by the configuration each one uses, in order of first use.

    With a ``config`` that was discovered (not given with --config or built in
    code), a file below a folder with a configuration file of its own
    (:func:`~ranklint.config.config_file_in`) between ``config``'s folder and the
    file uses the nearest such file, with the command line's selection on top;
    its ``exclude`` patterns apply to the files it covers (except files ``named``
    on the command line, unless ``force_exclude``). Other files use ``config``.
    """
    if not config.discovered:
        return [(config, list(files))] if files else []
    root = Path(config.root).absolute()
    given = {os.path.abspath(path) for path in named}
    nearest: dict[Path, Config] = {}

    def config_of(folder: Path) -> Config:
        if folder not in nearest:
            file = config_file_in(folder) if folder != root and root in folder.parents else None
            if file is not None:
                own = load_config_file(file, discovered=True)
                nearest[folder] = dataclasses.replace(
                    own,
                    overrides=config.overrides,
                    confidence_override=config.confidence_override,
                )
            elif folder != root and root in folder.parents:
                nearest[folder] = config_of(folder.parent)
            else:
                nearest[folder] = config
        return nearest[folder]

    groups: dict[int, tuple[Config, list[str]]] = {}
    for path in files:
        absolute = os.path.abspath(path)
        own = config_of(Path(absolute).parent)
        skippable = own is not config and (force_exclude or absolute not in given)
        if skippable and is_excluded(path, own):
            continue
        groups.setdefault(id(own), (own, []))[1].append(path)
    return list(groups.values())


def _lint_group(
    files: Sequence[str],
    config: Config,
    walked: set[str],
    *,
    jobs: int | None,
    cache_dir: str | Path | None,
    whole_project: bool,
    only_given_files: bool,
) -> LintResult:
    """:func:`lint_paths` for ``files`` that all use ``config``; ``walked``: the
    folders (absolute) walked to find them."""
    files = list(files)
    cache = Cache.for_config(config, Path(cache_dir)) if cache_dir is not None else None
    known = cache.lookup(files) if cache is not None else [None] * len(files)
    extra: list[str] = []
    others: list[str] = []
    if whole_project and files:
        project = _project_files(files, config, walked)
        extra_known = cache.lookup(project) if cache is not None else [None] * len(project)
        if None in extra_known:
            # Not all known: the others join only where the given files' calls lead.
            pairs = list(zip(project, extra_known, strict=True))  # pragma: no mutate
            others = [path for path, hit in pairs if hit is None]
            # Not mutated: the engine takes hits from `known`; only misses read their paths.
            extra = [path for path, hit in pairs if hit is not None]  # pragma: no mutate
            extra_known = [hit for _, hit in pairs if hit is not None]
        else:
            extra = project
        known += extra_known
    if cache is not None and None not in known:
        results = [result for result in known if result is not None]
        # Every file of the project is known: suppressions of project-phase codes
        # are judged (as below), unless the rest of the project was left out.
        key = cache.project_key(results, judged=whole_project)
        made = cache.get_project(key) if key is not None else None
        if made is not None:
            add_project_findings(results, made)
            return _reported(_finished(results, files, through=not only_given_files), config)
    from ranklint.engine import Linter

    # `known` spares a second lookup of each file (equivalent mutant without it).
    results = lint_files(
        [*files, *extra],
        config,
        jobs=jobs,
        cache=cache,
        known=known,  # pragma: no mutate
    )
    complete = not others
    if others:
        called = _called_files(
            files,
            others,
            results,
            config,
            jobs=jobs,  # pragma: no mutate (how many processes lint, not what they find)
            cache=cache,
        )
        results += called
        loaded = {result.path for result in called}
        callers = _caller_files(
            files,
            [path for path in others if path not in loaded],
            results,
            config,
            jobs=jobs,  # pragma: no mutate (how many processes lint, not what they find)
            cache=cache,
        )
        results += callers
        called += callers
        complete = len(called) == len(others)
    Linter(config).project_phase(
        results,
        cache=cache,
        jobs=jobs,
        judge_suppressions=complete and whole_project,
        complete=complete,
    )
    return _reported(_finished(results, files, through=not only_given_files), config)


def _reported(result: LintResult, config: Config) -> LintResult:
    """``result`` with only the findings of the confidence ``config`` reports."""
    reported = [finding for finding in result.findings if config.reports(finding)]
    result.below_confidence += len(result.findings) - len(reported)
    result.findings = reported
    return result


def _finished(results: Sequence[FileResult], files: Sequence[str], *, through: bool) -> LintResult:
    """The run's result from the results of the given files (first) and the others;
    with ``through``, the others' findings whose trace passes through a given file too."""
    merged = LintResult.merge(results[: len(files)])
    if through:
        given = {os.path.abspath(path) for path in files}
        reached = [
            finding
            for result in results[len(files) :]
            for finding in result.findings
            if any(os.path.abspath(step.path) in given for step in finding.trace)
        ]
        if reached:
            merged.findings = sorted([*merged.findings, *reached], key=Finding.sort_key)
    return merged


def _project_files(files: Sequence[str], config: Config, walked: set[str]) -> list[str]:
    """The other files of the project of ``files``, spelled for call chains; none
    when the project's folder is among the folders ``walked`` for ``files`` (then
    they are all there already)."""
    root = project_root(files, config)
    if root is None or os.path.abspath(root) in walked:
        return []
    given = {os.path.abspath(path) for path in files}
    # Spelled like the user's paths (relative to the working directory)
    # where possible: these paths appear in call chains.
    relative = os.path.relpath(root)
    spelled = str(root) if relative.startswith("..") else relative
    # Not mutated: the root is a folder, whose excluded files are skipped
    # whether or not exclusion is forced.
    everything = discover([spelled], config, force_exclude=True).files  # pragma: no mutate
    return [path for path in everything if os.path.abspath(path) not in given]


def _called_files(
    files: Sequence[str],
    others: Sequence[str],
    results: Sequence[FileResult],
    config: Config,
    *,
    jobs: int | None,
    cache: Cache | None,
    only: Collection[tuple[str, str]] | None = None,
    guards_only: bool = False,
) -> list[FileResult]:
    """Lint, round by round, the ``others`` that the calls of ``files`` lead into
    (``only``: the calls of those of their functions, by (path, qualname);
    ``guards_only``: the calls that decide their rank tests).

    Each round follows the calls from ``files`` through the files linted so
    far and lints the project files their lookups may mean; it ends when no
    lookup leads into a file not linted yet.
    """
    from ranklint.analysis.project.dependencies import ModuleMap
    from ranklint.analysis.project.reach import files_to_load

    modules = ModuleMap([*(result.path for result in results), *others])
    given = set(files)
    added: list[FileResult] = []
    remaining = list(others)
    while remaining:
        summaries = [
            summary
            for result in (*results, *added)
            if (summary := result.module_summary()) is not None
        ]
        wanted = files_to_load(summaries, given, modules, only=only, guards_only=guards_only)
        batch = [path for path in remaining if path in wanted]
        if not batch:
            break
        added += lint_files(
            batch,
            config,
            jobs=jobs,  # pragma: no mutate (how many processes lint, not what they find)
            cache=cache,
        )
        remaining = [path for path in remaining if path not in wanted]
    return added


def _caller_files(
    files: Sequence[str],
    others: Sequence[str],
    results: Sequence[FileResult],
    config: Config,
    *,
    jobs: int | None,
    cache: Cache | None,
) -> list[FileResult]:
    """Lint, round by round, the ``others`` that may call into the given ``files``
    (:class:`~ranklint.analysis.project.reach.CallerSearch`): each round reads the text of
    the files not linted yet (no parse), lints those that mention a name a caller
    must use, and searches for their callers next, until no file mentions one.
    Then the files that decide those callers' rank tests join too."""
    from ranklint.analysis.project.reach import CallerSearch

    search = CallerSearch(
        (summary for result in results if (summary := result.module_summary()) is not None),
        set(files),
    )
    texts: dict[str, str] = {}
    remaining = list(others)
    added: list[FileResult] = []
    while remaining:
        wanted = search.pending()
        if not wanted:
            break
        batch = [path for path in remaining if _mentions(_text(path, texts), wanted)]
        if not batch:
            break
        linted = lint_files(batch, config, jobs=jobs, cache=cache)
        added += linted
        search.add(summary for result in linted if (summary := result.module_summary()) is not None)
        taken = set(batch)
        remaining = [path for path in remaining if path not in taken]
    if added and remaining:
        # The files that decide the callers' rank tests (`if is_main():`).
        added += _called_files(
            [result.path for result in added],
            remaining,
            [*results, *added],
            config,
            jobs=jobs,  # pragma: no mutate (how many processes lint, not what they find)
            cache=cache,
            only=search.targets,
            guards_only=True,
        )
    return added


def _mentions(text: str, wanted: set[tuple[str, frozenset[str]]]) -> bool:
    """``text`` holds one of the names, as a word, and a word of its module."""
    for name, words in wanted:
        if not (name in text and re.search(rf"\b{re.escape(name)}\b", text)):
            continue
        if not words or any(re.search(rf"\b{re.escape(word)}\b", text) for word in words):
            return True
    return False


def _text(path: str, texts: dict[str, str]) -> str:
    """The text of ``path`` for a name search (bytes decoded leniently; empty if unreadable)."""
    if path not in texts:
        try:
            texts[path] = Path(path).read_bytes().decode("utf-8", errors="replace")
        except OSError:
            texts[path] = ""
    return texts[path]


def lint_files(
    files: Sequence[str],
    config: Config,
    *,
    jobs: int | None,
    cache: Cache | None,
    known: Sequence[FileResult | None] | None = None,
) -> list[FileResult]:
    """:func:`ranklint.engine.lint_files`, imported when first needed."""
    from ranklint.engine import lint_files as run

    # `known` spares a second lookup of each file (equivalent mutant without it).
    return run(files, config, jobs=jobs, cache=cache, known=known)  # pragma: no mutate


def config_start(paths: Sequence[str | Path], stdin_name: str | None) -> Path:
    """Where the configuration is looked for: the folder holding all the checked
    paths (``ranklint check trainer/`` uses ``trainer/pyproject.toml``), or the
    working folder when they are not on disk."""
    named = [stdin_name or "."] if list(paths) == ["-"] else list(paths)
    existing = [os.path.abspath(p) for p in named if os.path.exists(p)]
    if not existing:
        return Path.cwd()
    try:
        common = Path(os.path.commonpath(existing))
    except ValueError:  # other drives
        return Path.cwd()
    return common if common.is_dir() else common.parent


def project_root(files: Sequence[str], config: Config) -> Path | None:
    """The project the files belong to: the configuration's directory when a
    ``[tool.ranklint]`` table was discovered above them (never the folder of a
    file given with ``--config``), else the nearest directory above them
    holding a project marker (``pyproject.toml``, ``setup.py``, ``setup.cfg``,
    ``.git``); ``None`` when there is none."""
    try:
        common = Path(os.path.commonpath([os.path.abspath(path) for path in files]))
    except ValueError:  # paths on different drives
        return None
    configured = Path(config.root).absolute()
    # A configuration named with --config may lie anywhere (a home folder): its
    # folder is a root only when it was found above the files, like a project's.
    inside = common == configured or configured in common.parents
    if config.source is not None and config.discovered and inside:
        return configured
    if common.is_file():
        common = common.parent
    return project_folder(common)
