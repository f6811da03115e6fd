"""Which files a run checks."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

import pathspec

from ranklint.config import Config

#: The files a folder walk checks: Python sources, stubs and Jupyter notebooks
#: (their code cells; exclude them with ``extend-exclude = ["*.ipynb"]``).
PYTHON_SUFFIXES = (".py", ".pyi", ".ipynb")


@dataclass
class Discovery:
    files: list[str] = field(default_factory=list)
    # Arguments that name nothing on disk.
    missing: list[str] = field(default_factory=list)
    # Arguments named on the command line that are not checked, with why.
    skipped: list[tuple[str, str]] = field(default_factory=list)


def discover(paths: Sequence[str], config: Config, *, force_exclude: bool = False) -> Discovery:
    """Expand ``paths`` into the files to check, in a deterministic order.

    Directories are walked for ``*.py``/``*.pyi``/``*.ipynb``; excluded directories are
    not entered and directory symlinks are not followed (no loops). A file
    named explicitly is checked even when excluded, unless ``force_exclude``;
    likewise a directory named explicitly is walked, and only patterns that do
    not match the directory itself apply inside it.
    """
    spec = config.exclude_spec()
    result = Discovery()
    seen: set[str] = set()

    def add(path: str) -> None:
        key = os.path.abspath(path)
        if key not in seen:
            seen.add(key)
            result.files.append(path)

    for raw in paths:
        path = os.path.normpath(raw)
        if not os.path.lexists(path):
            result.missing.append(raw)
            continue
        excluded = _matches(spec, config.relative_path(path), os.path.isdir(path))
        if excluded and force_exclude:
            continue
        if os.path.isdir(path):
            # When the directory is not excluded no pattern matches it: stripping
            # them anyway would change nothing (equivalent mutants).
            narrowed = _without_patterns_matching(spec, config.relative_path(path))
            walk_spec = narrowed if excluded else spec  # pragma: no mutate
            for file in _walk(path, walk_spec, config):
                add(file)
        else:
            add(path)
    return result


class _GitIgnores:
    """The ``.gitignore`` files that apply in a walk: the repository's (its
    ``info/exclude`` and every ``.gitignore`` from its root down), deeper files
    overriding shallower ones, as git reads them. Outside a repository: none."""

    def __init__(self, top: str) -> None:
        top = os.path.abspath(top)
        self.repository = next(
            (d for d in (top, *_parents(top)) if os.path.exists(os.path.join(d, ".git"))), None
        )
        self._chains: dict[str, tuple[tuple[str, pathspec.GitIgnoreSpec], ...]] = {}
        if self.repository is not None:
            base = _read_spec(os.path.join(self.repository, ".git", "info", "exclude"))
            chain = ((self.repository, base),) if base is not None else ()
            self._chains[self.repository] = chain + self._own(self.repository)
            if top != self.repository and self.ignored(top, True):
                # A folder named explicitly that its repository ignores (a vendored
                # copy, a corpus under .cache/): walked as a repository of its own,
                # with only the .gitignore files inside it, as ripgrep and ruff do.
                self.repository = top
                self._chains = {top: self._own(top)}

    @staticmethod
    def _own(directory: str) -> tuple[tuple[str, pathspec.GitIgnoreSpec], ...]:
        spec = _read_spec(os.path.join(directory, ".gitignore"))
        return ((directory, spec),) if spec is not None else ()

    def chain(self, directory: str) -> tuple[tuple[str, pathspec.GitIgnoreSpec], ...]:
        """The specs that apply in ``directory`` (absolute), shallowest first."""
        known = self._chains.get(directory)
        if known is None:
            parent = os.path.dirname(directory)
            inherited = self.chain(parent) if parent != directory else ()
            known = self._chains[directory] = inherited + self._own(directory)
        return known

    def ignored(self, path: str, is_dir: bool) -> bool:
        """Whether git ignores ``path`` (absolute) in its folder's specs."""
        if self.repository is None or not path.startswith(self.repository + os.sep):
            return False
        verdict = None
        for base, spec in self.chain(os.path.dirname(path)):
            relative = os.path.relpath(path, base).replace(os.sep, "/")
            result = spec.check_file(relative + "/" if is_dir else relative)
            if result.include is not None:
                verdict = result.include
        return bool(verdict)


def _parents(path: str) -> list[str]:
    """The folders above ``path``, nearest first."""
    found = []
    while (parent := os.path.dirname(path)) != path:
        found.append(parent)
        path = parent
    return found


def _read_spec(file: str) -> pathspec.GitIgnoreSpec | None:
    try:
        with open(file, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines) if lines else None


def _walk(top: str, spec: pathspec.GitIgnoreSpec, config: Config) -> list[str]:
    found: list[str] = []
    git = _GitIgnores(top) if config.respect_gitignore else None
    for directory, dirnames, filenames in os.walk(top):
        here = os.path.abspath(directory)
        # os.walk never descends into directory links (no loops). Not entering
        # excluded directories saves the walk; the files inside are excluded by
        # the file check too (so these mutants are equivalent).
        kept = []
        for name in sorted(dirnames):
            relative = config.relative_path(os.path.join(directory, name))
            if _matches(spec, relative, True):  # pragma: no mutate
                continue
            if git is None or not git.ignored(os.path.join(here, name), True):
                kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            if not name.endswith(PYTHON_SUFFIXES):
                continue
            file = os.path.join(directory, name)
            if _matches(spec, config.relative_path(file), False):
                continue
            if git is None or not git.ignored(os.path.join(here, name), False):
                found.append(os.path.normpath(file))
    return found


def is_excluded(path: str, config: Config) -> bool:
    """Whether the file ``path`` (which need not exist) matches the exclude patterns."""
    return _matches(config.exclude_spec(), config.relative_path(path), False)


def _matches(spec: pathspec.GitIgnoreSpec, relative: str, is_dir: bool) -> bool:
    return spec.match_file(relative + "/" if is_dir else relative)


def _without_patterns_matching(
    spec: pathspec.GitIgnoreSpec, relative_dir: str
) -> pathspec.GitIgnoreSpec:
    kept = [
        pattern
        for pattern in spec.patterns
        if not (pattern.include and pattern.match_file(relative_dir + "/") is not None)
    ]
    return pathspec.GitIgnoreSpec(kept)
