"""The project a file belongs to, as its files on disk describe it: its own packages
and its required dependencies.

Read once per project folder (cached) from the project's metadata, never from
the code being linted:

- the project folder: the nearest folder above the file holding a project marker
  (``pyproject.toml``, ``setup.py``, ``setup.cfg``, ``.git``);
- its own top-level modules: packages and modules directly in that folder and
  in its ``src/`` folder, the ``[project] name`` of ``pyproject.toml``, the
  ``name=`` of ``setup.py`` (a string literal) and of ``setup.cfg``;
- its required dependencies: ``[project] dependencies`` and the Poetry
  dependencies of ``pyproject.toml``, files named by
  ``[tool.setuptools.dynamic] dependencies``, ``install_requires`` of ``setup.py``
  (a literal list, a module-level name bound to one, or a call whose string
  arguments name requirements files), ``install_requires`` of ``setup.cfg``,
  and ``requirements.txt`` (in the folder, or ``requirements/requirements.txt``,
  ``requirements/base.txt``). Other files of ``requirements/`` are usually
  extras and are not read.

Distribution names are mapped to the dotted module prefix they provide
(``megatron-core`` -> ``megatron.core``, ``neptune-client`` -> ``neptune``).
"""

from __future__ import annotations

import ast
import configparser
import functools
import hashlib
import logging
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

logger = logging.getLogger(__name__)

PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
# pip's comment: `#` at the start of a line or after whitespace.
_COMMENT = re.compile(r"(?:^|\s+)#")
# Requirements files read when present: the conventional names of the base set.
_BASE_REQUIREMENTS = ("requirements.txt", "requirements/requirements.txt", "requirements/base.txt")
# Distributions whose import name is not their normalized name (lower case, `_`).
_DISTRIBUTION_MODULES: dict[str, str] = {
    "megatron_core": "megatron.core",
    "megatron_energon": "megatron.energon",
    "megatron_lm": "megatron",
    "neptune_client": "neptune",
    "mlflow_skinny": "mlflow",
    "tb_nightly": "tensorboard",
    "pytorch_triton": "triton",
    "transformer_engine_torch": "transformer_engine",
    "flash_attn_3": "flash_attn_interface",
}
# `name [extras] (version) ; marker`, `name @ url`: the name is the leading token.
_REQUIREMENT_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_EGG = re.compile(r"[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)")
# Requirements files may include others; a bound keeps a cycle finite.
_MAX_INCLUDES = 8


@dataclass(frozen=True)
class ProjectLayout:
    """What a project's metadata says about it (see the module docstring)."""

    folder: Path | None
    # Top-level module names of the project itself.
    own_modules: frozenset[str]
    # Dotted module prefixes its required dependencies provide, lower case.
    required_modules: frozenset[str]

    def is_own(self, module: str) -> bool:
        return module.split(".", 1)[0] in self.own_modules

    def is_required(self, module: str) -> bool:
        """``module`` (dotted) is provided by a required dependency."""
        lowered = module.lower()
        return any(
            lowered == prefix or lowered.startswith(prefix + ".")
            for prefix in self.required_modules
        )


EMPTY_LAYOUT = ProjectLayout(None, frozenset(), frozenset())


def layout_of(path: str | Path) -> ProjectLayout:
    """The layout of the project holding the file ``path`` (which need not exist).

    Its own modules also hold those beside the file's top-level package (the
    folder above the last ``__init__.py`` going up): a checkout without any
    project marker still knows its own packages.
    """
    start = Path(path).absolute().parent
    folder = project_folder(start)
    layout = EMPTY_LAYOUT if folder is None else read_layout(folder, _stamp(folder))
    beside = import_root_modules(start)
    if beside <= layout.own_modules:  # pragma: no mutate (`<` builds an equal layout)
        return layout
    return ProjectLayout(layout.folder, layout.own_modules | beside, layout.required_modules)


@functools.lru_cache(maxsize=256)
def import_root_modules(start: Path) -> frozenset[str]:
    """Top-level modules in the folder from which the package holding ``start`` is imported."""
    root = start
    while (root / "__init__.py").is_file() and root.parent != root:
        root = root.parent
    return frozenset(_top_level_modules(root))


@functools.lru_cache(maxsize=256)
def project_folder(start: Path) -> Path | None:
    """The nearest folder from ``start`` up holding a project marker."""
    for directory in (start, *start.parents):
        if any((directory / marker).exists() for marker in PROJECT_MARKERS):
            return directory
    return None


def _stamp(folder: Path) -> tuple[tuple[int, int], ...]:
    """Size and time of the metadata files: an edited file is read again."""
    stamp = []
    for name in ("pyproject.toml", "setup.py", "setup.cfg", *_BASE_REQUIREMENTS, "requirements"):
        try:
            status = (folder / name).stat()
        except OSError:
            stamp.append((-1, -1))  # pragma: no mutate (any value unlike a real stat)
        else:
            stamp.append((status.st_size, status.st_mtime_ns))
    return tuple(stamp)


@functools.lru_cache(maxsize=64)
def read_layout(folder: Path, stamp: tuple[tuple[int, int], ...] = ()) -> ProjectLayout:
    """The layout of the project in ``folder``; unreadable metadata counts as absent.

    ``stamp`` only keys the cache (see :func:`_stamp`).
    """
    pyproject = _read_toml(folder / "pyproject.toml")
    setup_py = _parse_python(folder / "setup.py")
    setup_cfg = _read_cfg(folder / "setup.cfg")
    own = set(_top_level_modules(folder))
    own.update(_top_level_modules(folder / "src"))
    names = [_project_table(pyproject).get("name"), _setup_keyword(setup_py, "name")]
    names.append(setup_cfg.get("metadata", "name", fallback=None))
    own.update(_normalized(name) for name in names if isinstance(name, str) and name)
    return ProjectLayout(
        folder,
        frozenset(own),
        frozenset(_module_of(name) for name in _required(folder, pyproject, setup_py, setup_cfg)),
    )


def layout_fingerprint(root: Path) -> str:
    """A digest of the layout of the project holding ``root`` (for the result cache)."""
    folder = project_folder(Path(root).absolute())
    if folder is None:
        return "none"  # pragma: no mutate (any constant that is not a digest)
    layout = read_layout(folder, _stamp(folder))
    text = repr((str(folder), sorted(layout.own_modules), sorted(layout.required_modules)))
    return hashlib.sha256(text.encode()).hexdigest()[:16]  # pragma: no mutate (any length)


# -- own modules -------------------------------------------------------------


def _top_level_modules(folder: Path) -> Iterable[str]:
    try:
        entries = list(folder.iterdir())
    except OSError:
        return
    for entry in entries:
        name = entry.name
        if entry.is_dir():
            if name.isidentifier() and _holds_python(entry):
                yield name
        elif name.endswith(".py") and name[:-3].isidentifier():
            yield name[:-3]


def _holds_python(folder: Path) -> bool:
    """A package, or a namespace package (Python files directly inside)."""
    try:
        return any(child.suffix == ".py" for child in folder.iterdir())
    except OSError:
        return False


# -- required dependencies ---------------------------------------------------


def _required(
    folder: Path,
    pyproject: dict[str, Any],
    setup_py: ast.Module | None,
    setup_cfg: configparser.ConfigParser,
) -> Iterable[str]:
    project = _project_table(pyproject)
    yield from _requirement_names(_strings(project.get("dependencies")))
    poetry = _table(pyproject, "tool", "poetry", "dependencies")
    yield from (name for name in poetry if name != "python")
    dynamic = _table(pyproject, "tool", "setuptools", "dynamic", "dependencies")
    for file in _strings(dynamic.get("file")):
        yield from _requirements_file(folder, file)
    if setup_py is not None:
        value = _setup_keyword_node(setup_py, "install_requires")
        if value is not None:
            yield from _install_requires(folder, setup_py, value)
    cfg_requires = setup_cfg.get("options", "install_requires", fallback="")
    yield from _requirement_names(cfg_requires.splitlines())
    for file in _BASE_REQUIREMENTS:
        yield from _requirements_file(folder, file)


def _install_requires(folder: Path, module: ast.Module, value: ast.expr) -> Iterable[str]:
    """A literal list, a module-level name bound to one, or a call naming files."""
    if isinstance(value, ast.Name):
        bound = _module_assignment(module, value.id)
        if bound is None:
            return
        value = bound
    if isinstance(value, (ast.List, ast.Tuple)):
        yield from _requirement_names(
            element.value
            for element in value.elts
            if isinstance(element, ast.Constant) and isinstance(element.value, str)
        )
    elif isinstance(value, ast.Call):
        # `fetch_requirements("requirements/base.txt")`: the files it reads.
        for node in ast.walk(value):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and node.value.endswith(".txt")
            ):
                yield from _requirements_file(folder, node.value, under=("", "requirements"))


def _requirements_file(
    folder: Path, name: str, *, under: tuple[str, ...] = ("",), depth: int = 0
) -> Iterable[str]:
    for prefix in under:
        file = folder / prefix / name
        try:
            text = file.read_text(encoding="utf-8-sig", errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            line = _COMMENT.split(line, maxsplit=1)[0].strip()
            if line.startswith(("-r ", "--requirement ")) and depth < _MAX_INCLUDES:
                included = line.split(None, 1)[1].strip()
                yield from _requirements_file(file.parent, included, depth=depth + 1)
            elif line.startswith(("-e ", "--editable ")) or "://" in line.split("@", 1)[0]:
                egg = _EGG.search(line)  # a bare URL names the project in `#egg=`
                if egg is not None:
                    yield egg.group(1)
            elif not line.startswith(("-", "#")):  # pragma: no mutate (the name pattern skips both)
                yield from _requirement_names((line,))  # also `name @ git+https://...`
        return


def _requirement_names(lines: Iterable[str]) -> Iterable[str]:
    for line in lines:
        line = line.split("#", 1)[0]  # pragma: no mutate (the name pattern stops at "#")
        match = _REQUIREMENT_NAME.match(line)
        if match is not None:
            yield match.group(1)


def _module_of(distribution: str) -> str:
    name = _normalized(distribution)
    return _DISTRIBUTION_MODULES.get(name, name).lower()


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


# -- reading metadata files --------------------------------------------------


def _read_toml(file: Path) -> dict[str, Any]:
    try:
        with file.open("rb") as handle:
            return tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def _read_cfg(file: Path) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(file, encoding="utf-8-sig")
    except (configparser.Error, UnicodeDecodeError):
        logger.debug("cannot read %s", file, exc_info=True)
        return configparser.ConfigParser(interpolation=None)
    return parser


def _parse_python(file: Path) -> ast.Module | None:
    try:
        return ast.parse(file.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return None


def _project_table(pyproject: dict[str, Any]) -> dict[str, Any]:
    return _table(pyproject, "project")


def _table(document: dict[str, Any], *keys: str) -> dict[str, Any]:
    """``document[k1][k2]...`` where each is a table; ``{}`` where one is missing or not."""
    table: object = document
    for key in keys:
        table = table.get(key) if isinstance(table, dict) else None
    return table if isinstance(table, dict) else {}


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return []


def _setup_keyword_node(module: ast.Module, keyword: str) -> ast.expr | None:
    """The value of ``keyword=`` in a ``setup(...)`` call, or of a module-level name."""
    for node in ast.walk(module):
        if isinstance(node, ast.Call) and _called_name(node.func) == "setup":
            for item in node.keywords:
                if item.arg == keyword:
                    return item.value
    return _module_assignment(module, keyword)


def _setup_keyword(module: ast.Module | None, keyword: str) -> str | None:
    if module is None:
        return None
    value = _setup_keyword_node(module, keyword)
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return value.value
    return None


def _module_assignment(module: ast.Module, name: str) -> ast.expr | None:
    """The value of the last module-level ``name = ...``."""
    found = None  # pragma: no mutate (callers treat any non-AST value as unbound)
    for statement in module.body:
        if isinstance(statement, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == name for target in statement.targets
        ):
            found = statement.value
    return found


def _called_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None
