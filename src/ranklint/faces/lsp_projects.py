"""What the language server knows of each project: every file's per-file result,
the editor's unsaved texts, and the project phase run over both.

No LSP here (the server, :mod:`ranklint.faces.server`, speaks it): a
:class:`Project` is the files under one configuration, as ``ranklint check``
groups them (:func:`ranklint.api.config_groups`). It is indexed once, through
the same cache as the CLI's (a warm cache parses nothing); then an edited
file is linted alone from its text and the project phase runs again over
every file, so that a helper's change reaches its callers' findings in other
files. Paths are absolute.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from ranklint.api import config_groups, project_root
from ranklint.cache import Cache, default_cache_dir
from ranklint.config import Config, load_config
from ranklint.discovery import discover, is_excluded
from ranklint.findings import Finding
from ranklint.results import FileResult

logger = logging.getLogger(__name__)

# How many files one step of the first index lints (a progress report each).
INDEX_STEP = 100

# (files done, files in all): the first index's progress.
Progress = Callable[[int, int], None]


class Project:
    """The files of one configuration; see the module's docstring."""

    def __init__(self, config: Config, root: Path, cache_dir: Path | None) -> None:
        from ranklint.engine import Linter

        self.config = config
        self.root = root
        self.cache = Cache.for_config(config, cache_dir) if cache_dir is not None else None
        self.linter = Linter(config)
        # Every file's own result (no project-phase finding), by path.
        self.base: dict[str, FileResult] = {}
        # The editor's texts of the open files of this project, by path.
        self.texts: dict[str, str] = {}
        self.indexed = False
        # The findings of each file after the last project phase.
        self.findings: dict[str, list[Finding]] = {}

    def files(self) -> list[str]:
        """The project's files on disk, as a check of its root would lint them under
        this configuration (a folder with a configuration of its own is another project)."""
        found = discover([str(self.root)], self.config, force_exclude=True).files
        groups = config_groups(found, self.config, named=[str(self.root)])
        return [
            os.path.abspath(path) for own, paths in groups if own is self.config for path in paths
        ]

    def index(self, progress: Progress | None = None) -> None:
        """Lint every file of the project (through the cache), ``INDEX_STEP`` at a time."""
        from ranklint.engine import lint_files

        files = self.files()
        known = self.cache.lookup(files) if self.cache is not None else [None] * len(files)
        # The open files' results come from the editor's texts (set_text), kept.
        for path, hit in zip(files, known, strict=True):
            if hit is not None and path not in self.texts:
                self.base[path] = hit
        missing = [
            path
            for path, hit in zip(files, known, strict=True)
            if hit is None and path not in self.texts
        ]
        done = len(files) - len(missing)
        if progress is not None:
            progress(done, len(files))
        for start in range(0, len(missing), INDEX_STEP):
            step = missing[start : start + INDEX_STEP]
            for result in lint_files(step, self.config, jobs=None, cache=self.cache):
                self.base[os.path.abspath(result.path)] = result
            done += len(step)
            if progress is not None:
                progress(done, len(files))
        self.indexed = True

    def set_text(self, path: str, text: str) -> None:
        """The editor holds ``text`` for ``path`` (opened or changed)."""
        if self.texts.get(path) == text and path in self.base:
            return
        self.texts[path] = text
        self.base[path] = self.linter.lint_source(text, path)

    def saved(self, path: str) -> None:
        """``path`` was written: its result comes from the disk and goes to the cache,
        where the next ``ranklint check`` finds it."""
        self._from_disk(path)

    def close(self, path: str) -> None:
        """The editor closed ``path``: what counts now is the file on disk."""
        if self.texts.pop(path, None) is not None:
            self._from_disk(path)

    def changed_on_disk(self, path: str, *, deleted: bool) -> None:
        """A file of the project changed outside the editor (not an open one)."""
        if path in self.texts:
            return
        if deleted:
            self.base.pop(path, None)
        elif path in self.base or path in self.files():
            self._from_disk(path)

    def _from_disk(self, path: str) -> None:
        if not os.path.isfile(path):
            self.base.pop(path, None)
            return
        result = self.linter.lint_file_cached(path, self.cache)
        self.base[path] = result

    def run_phase(self) -> dict[str, list[Finding]]:
        """Run the project phase over every file (the editor's texts where open); the
        findings of every file, as a check of the project reports them."""
        results = []
        for result in self.base.values():
            result.module_summary()  # unpacked once; the copies share it
            # A copy: the phase adds its findings to the results it is given. The
            # placed call sites are shared: they hold as long as the file's text.
            results.append(
                dataclasses.replace(
                    result,
                    findings=list(result.findings),
                    unused_candidates=list(result.unused_candidates),
                )
            )
        sources: dict[str, str | bytes] = dict(self.texts)
        self.linter.project_phase(
            results,
            sources,
            cache=self.cache,
            jobs=1,
            judge_suppressions=True,
            complete=True,
        )
        self.findings = {
            result.path: [f for f in result.findings if self.config.reports(f)]
            for result in results
        }
        return self.findings


class Projects:
    """The projects of the files the editor opened, each found as the CLI finds a
    file's configuration and project (the nearest configuration above the file)."""

    def __init__(self, cache: bool = True) -> None:
        self._cache = cache
        self._by_key: dict[tuple[str, str], Project] = {}
        self._of_path: dict[str, Project | None] = {}
        # The server lints on one thread at a time; requests read under it too.
        self.lock = threading.RLock()

    def project_of(self, path: str) -> Project | None:
        """The project ``path`` belongs to; ``None`` when its configuration excludes it."""
        if path in self._of_path:
            return self._of_path[path]
        folder = Path(path).parent
        config = load_config(cwd=folder)
        root = project_root([path], config) or folder
        key = (str(config.source), str(root))
        project = self._by_key.get(key)
        if project is None:
            cache_dir = default_cache_dir(root) if self._cache else None
            project = Project(config, root, cache_dir)
            self._by_key[key] = project
        # As with `--force-exclude`: an editor hands over every buffer it opens.
        excluded = is_excluded(path, project.config)
        self._of_path[path] = None if excluded else project
        return self._of_path[path]

    def projects(self) -> Sequence[Project]:
        return list(self._by_key.values())

    def forget_configuration(self) -> None:
        """A configuration file changed: find every file's project again (texts kept)."""
        texts = {
            path: text for project in self._by_key.values() for path, text in project.texts.items()
        }
        self._by_key.clear()
        self._of_path.clear()
        for path, text in texts.items():
            project = self.project_of(path)
            if project is not None:
                project.texts[path] = text
