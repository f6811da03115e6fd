"""Which project files the findings of some files can depend on, found without parsing.

The project phase resolves calls across files through imports (see
:mod:`ranklint.analysis.callgraph`): a call in a file can only lead into
modules that file imports, and on through what those import. So the findings
located in some files depend only on those files and, transitively, on the
project modules they import; :func:`import_closure` finds them with a scan
of each file's text for import statements (no parse), so that a run over a
few files of a large project parses only what their findings need.

The scan errs towards more files, never fewer: an import in a string or a
comment counts; ``from pkg import name`` counts ``pkg`` and ``pkg.name``; a
dotted name counts every module whose name it could mean under the call
graph's own matching (the same module named from a shorter or longer package
root). What no import shows stays out: findings that need a file's *callers*
(an entry script imported by another file, a value passed in by a caller)
and checks that need every file of the project.

A leaf module (no libcst): the API uses it before anything is parsed.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

logger = logging.getLogger(__name__)

# `import a.b as c, d` and `from .a.b import (x, y as z)`, at the start of a
# line or after a `;`, indented or not. A name list in parentheses or continued
# with backslashes may span lines.
_IMPORT = re.compile(r"(?:^|;)[ \t]*import[ \t]+([\w. \t,]+)", re.MULTILINE)
_FROM = re.compile(
    r"(?:^|;)[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|(?:[^\n;#\\]|\\\n)*)",
    re.MULTILINE,
)
_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def module_name(path: str) -> str:
    """Dotted module name of a file: its package chain by ``__init__.py`` files."""
    file = Path(path)
    parts = [] if file.stem == "__init__" else [file.stem]
    directory = file.parent
    while (directory / "__init__.py").is_file() and directory.name:
        parts.append(directory.name)
        if directory.parent == directory:
            break
        directory = directory.parent
    return ".".join(reversed(parts)) or file.stem


def imported_names(text: str, module: str, is_package: bool) -> set[str]:
    """Every dotted name the import statements of ``text`` may refer to.

    ``module``: the file's own dotted name, for relative imports;
    ``is_package``: the file is an ``__init__.py`` (its dots count from itself).
    """
    names: set[str] = set()
    for match in _IMPORT.finditer(text):
        for item in match.group(1).split(","):
            words = item.split()
            if words and _NAME.fullmatch(words[0]):
                names.add(words[0])
    package = module.split(".") if is_package else module.split(".")[:-1]
    for match in _FROM.finditer(text):
        source = match.group(1)
        dots = len(source) - len(source.lstrip("."))
        base = source[dots:]
        if dots:
            kept = package[: len(package) - (dots - 1)] if dots > 1 else package
            base = ".".join(part for part in (*kept, base) if part)
        if not base:
            continue
        names.add(base)
        for item in match.group(2).strip("()").replace("\\", " ").split(","):
            words = item.split()
            if words and _NAME.fullmatch(words[0]):
                names.add(f"{base}.{words[0]}")
    return names


class ModuleMap:
    """The project's files by dotted module name, matched as the call graph matches."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.names: dict[str, str] = {}  # path -> module name
        self._by_last: dict[str, list[tuple[str, str]]] = {}
        for path in paths:
            name = module_name(path)
            self.names[path] = name
            self._by_last.setdefault(name.rsplit(".", 1)[-1], []).append((name, path))

    def files_for(self, dotted: str) -> set[str]:
        """Files whose module a dotted name (or any of its prefixes) may mean."""
        found: set[str] = set()
        parts = dotted.split(".")
        for end in range(1, len(parts) + 1):
            prefix = ".".join(parts[:end])
            for name, path in self._by_last.get(parts[end - 1], ()):
                if name == prefix or name.endswith("." + prefix) or prefix.endswith("." + name):
                    found.add(path)
        return found


def import_closure(given: Sequence[str], project: Sequence[str]) -> list[str]:
    """The files of ``project`` that ``given`` import, directly or through others.

    ``given`` need not be part of ``project``; the answer never includes them
    and keeps the order of ``project``. A file that cannot be read imports
    nothing (linting it reports why).
    """
    modules = ModuleMap([*project, *given])
    in_project = set(project)
    queue_start = set(given)
    seen = set(given)
    queue = list(given)
    while queue:
        path = queue.pop()
        try:
            text = Path(path).read_bytes().decode("utf-8", errors="replace")
        except OSError:
            continue
        name = modules.names.get(path) or module_name(path)
        for dotted in imported_names(text, name, Path(path).name == "__init__.py"):
            for found in modules.files_for(dotted):
                if found not in seen and found in in_project:
                    seen.add(found)
                    queue.append(found)
    logger.debug("import closure of %d files: %d files", len(given), len(seen) - len(given))
    return [path for path in project if path in seen and path not in queue_start]
