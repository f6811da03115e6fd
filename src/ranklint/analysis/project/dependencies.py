"""Project files by dotted module name, matched the way the call graph matches them.

:func:`module_name` names a file's module (its package chain by
``__init__.py`` files); :class:`ModuleMap` answers which files a dotted name
may lead into, without parsing anything, so that a run over a few files of a
project can load just the files their calls need (:mod:`ranklint.analysis.project.reach`).

A leaf module (no libcst).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path


def module_name(path: str) -> str:
    """Dotted module name of a file: its package chain by ``__init__.py`` files."""
    file = Path(path)
    parts = [] if file.stem == "__init__" else [file.stem]
    directory = file.parent
    while (directory / "__init__.py").is_file() and directory.name:
        parts.append(directory.name)
        directory = directory.parent
    return ".".join(reversed(parts)) or file.stem


class ModuleMap:
    """The project's files by dotted module name, matched as the call graph matches."""

    def __init__(self, paths: Iterable[str]) -> None:
        # The last part of each module name -> (module name, path).
        self._by_last: dict[str, list[tuple[str, str]]] = {}
        for path in paths:
            name = module_name(path)
            self._by_last.setdefault(name.rpartition(".")[2], []).append((name, path))

    def files_for(self, dotted: str, *, whole: bool = True) -> set[str]:
        """The files a dotted name may lead into, as the call graph looks a name up.

        It takes the longest prefix that names a module (exactly, or as the only
        module whose name it ends or is ended by: a package named from another
        root); shorter prefixes matter only while that match fails, so their
        candidates count only then. Every candidate of each prefix looked at
        counts, so that no match that is unique in the whole project looks
        unique (or absent) here. ``whole``: the whole name may be a module
        (else it is a call target, whose last part is what the module holds).
        """
        found: set[str] = set()
        parts = dotted.split(".")
        for end in range(len(parts) if whole else len(parts) - 1, 0, -1):
            prefix = ".".join(parts[:end])
            named = self._by_last.get(parts[end - 1], [])
            candidates = [
                path
                for name, path in named
                if name == prefix or name.endswith("." + prefix) or prefix.endswith("." + name)
            ]
            found.update(candidates)
            if len(candidates) == 1 or any(name == prefix for name, _ in named):
                break
        return found
