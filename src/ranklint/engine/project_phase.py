"""The project phase: the findings that need every file's facts (the call
graph), placed in the files they point into, suppressed, and cached."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from ranklint.analysis.project.facts import ProjectFacts
from ranklint.cache import Cache
from ranklint.engine.linter import FileLinter
from ranklint.engine.locate import Located, project_finding
from ranklint.engine.pool import locate_files
from ranklint.engine.stack import deep_recursion, run_with_large_stack
from ranklint.findings import Finding
from ranklint.model.events import Site
from ranklint.results import FileResult, add_project_findings
from ranklint.rules import Rule
from ranklint.rules.base import ProjectFinding
from ranklint.source import SourceError, python_text
from ranklint.suppressions import NO_SUPPRESSIONS, parse_suppressions

logger = logging.getLogger(__name__)


class Linter(FileLinter):
    """Lints a run's files (see :class:`FileLinter`) and runs its project phase."""

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

        With ``cache``, the phase keeps what it made there (:class:`PhaseCache`);
        when every result came from a file, a run over the same files with the
        same bytes takes the findings from there. ``jobs``: processes for the walks that place call
        sites whose positions are not known yet (one file each).

        ``judge_suppressions``: the results are the whole project, so the unused-suppression
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
        # Keyed only when every result came from a file (no source held in memory).
        kept = PhaseCache(cache, results, keyed=not sources, judged=judged, complete=complete)
        made = kept.findings()
        if made is None:
            made, used = self._project_findings(results, sources or {}, kept, jobs, rules)
            if judged:
                _add_unused(made, results, used)
            kept.keep_findings(made)
        add_project_findings(results, made)

    def _project_findings(
        self,
        results: Sequence[FileResult],
        sources: dict[str, str | bytes],
        kept: PhaseCache,
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
        located = self._all_located(wanted, sources, by_path, kept, jobs)
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
        kept: PhaseCache,
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
                    text = python_text(source, path)
                except SourceError:
                    located[path] = Located(None, {})
                    continue
                located[path] = Located(text, {site: known[site] for site in sites})
            else:
                walks.append((path, sites, source))
        for (path, _, source), place in zip(walks, locate_files(self, walks, jobs), strict=True):
            located[path] = place
            result = by_path.get(path)
            if result is not None and place.sites:
                result.located.update(place.sites)
                kept.keep_sites(path, source, result)
        return {path: located[path] for path in wanted}


class PhaseCache:
    """The cache as the project phase sees it; without a cache, it keeps nothing.

    It keeps the phase's findings under one key of all the run's files (a run
    over the same files with the same bytes takes them from there, unpacks no
    summary and builds no call graph), and each file's call-site positions that
    the phase placed, with that file's result.
    """

    def __init__(
        self,
        cache: Cache | None,
        results: Sequence[FileResult],
        *,
        keyed: bool,
        judged: bool,
        complete: bool,
    ) -> None:
        self._cache = cache
        self._key = (
            cache.project_key(results, judged=judged, complete=complete)
            if cache is not None and keyed
            else None
        )

    def findings(self) -> dict[str, list[Finding]] | None:
        """The findings an earlier run of the same phase kept, if any."""
        if self._cache is None or self._key is None:
            return None
        return self._cache.get_project(self._key)

    def keep_findings(self, made: dict[str, list[Finding]]) -> None:
        if self._cache is not None and self._key is not None:
            self._cache.put_project(self._key, made)

    def keep_sites(self, path: str, source: str | bytes, result: FileResult) -> None:
        """Store ``result`` again, now with the positions placed in ``path``."""
        if self._cache is not None and isinstance(source, bytes):
            self._cache.put(path, source, result)


def _add_unused(
    made: dict[str, list[Finding]],
    results: Sequence[FileResult],
    used: set[tuple[str, int, str]],
) -> None:
    """Add to ``made`` the unused-suppression candidates of ``results`` whose code the project
    phase suppressed nothing with, on their line."""
    for result in results:
        for code, finding in result.unused_candidates:
            if (result.path, finding.line, code) not in used:
                made.setdefault(result.path, []).append(finding)


def _check_project_deeply(
    rules: Sequence[type[Rule]], facts: ProjectFacts
) -> list[tuple[type[Rule], ProjectFinding]]:
    """Every project rule's findings; the analysis recurses over branches and call chains."""
    with deep_recursion():
        return [(rule, finding) for rule in rules for finding in rule.check_project(facts)]
