"""Configuration: ``[tool.ranklint]`` in ``pyproject.toml``, validated on construction.

Every option is declared once, as a field of :class:`Config` made with
:func:`option`: its TOML key (the field name with ``-`` for ``_``), type,
default, one-line doc, validation and the rules or analyses that read it. The
TOML loader, validation with "did you mean", the analysis settings, the cache
fingerprint and the options tables of the docs are all derived from those
fields. Adding an option is one field here plus the code that reads it.

Patterns are matched against paths relative to the directory of the
configuration file. CLI options override the file: ``--select`` replaces the
file's selection, ``--extend-select`` and ``--ignore`` apply after it.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pathspec

from ranklint.analysis.project.layout import layout_fingerprint, project_folder
from ranklint.analysis.walk.defaults import (
    DEFAULT_DISTRIBUTED_MARKERS,
    DEFAULT_HEAVY_MODULES,
    DEFAULT_HOT_FUNCTIONS,
    DEFAULT_MACHINE_PATH_PREFIXES,
    DEFAULT_MESH_AXES,
    DEFAULT_RANK_NAMES,
)
from ranklint.findings import Confidence, Finding
from ranklint.options import (
    BOOLEAN,
    CODE_TABLE,
    CODES,
    CONFIDENCE,
    FUNCTIONS,
    GLOBS,
    IDENTIFIERS,
    PATTERNS,
    PREFIXES,
    WRAPPERS,
    ConfigError,
    DeclaredOption,
    check_codes,
    check_confidence,
    compile_patterns,
    matching_codes,
    option,
)
from ranklint.registry import registered_codes

if TYPE_CHECKING:
    from ranklint.analysis.walk.settings import AnalysisSettings

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib


# The analysis (and libcst) is imported only when settings are compiled for a
# walk: a run served wholly from the cache never needs them.
def _compile_name_patterns(values: Sequence[str]) -> Any:
    from ranklint.analysis.walk.settings import compile_name_patterns

    return compile_name_patterns(values)


def _compile_extra_collectives(values: Any) -> Any:
    from ranklint.analysis.walk.settings import compile_extra_collectives

    return compile_extra_collectives(values)


# Folders never walked into: version control, virtual environments, builds, caches
# (words, not a literal list: one name a line would be 25 lines).
DEFAULT_EXCLUDE: tuple[str, ...] = tuple(
    """.bzr .direnv .eggs .git .hg .ipynb_checkpoints .mypy_cache .nox .pytest_cache
    .ranklint_cache .ruff_cache .svn .tox .venv __pycache__ __pypackages__ _build buck-out
    build dist node_modules site-packages venv""".split()  # noqa: SIM905
)

DEFAULT_TEST_PATTERNS: tuple[str, ...] = (
    "test_*.py",
    "*_test.py",
    "tests/",
    "test/",
    "testing/",
    "conftest.py",
)
DEFAULT_SCRIPT_PATTERNS: tuple[str, ...] = (
    "scripts/",
    "examples/",
    "example/",
    "tools/",
    "bin/",
    "bench/",
    "benchmarks/",
    "docs/",
    "notebooks/",
    "__main__.py",
    "cli.py",
    "main.py",
    "setup.py",
    "*.ipynb",
)
# Codes that do not apply in test files: step-time costs are not what a test
# measures, and fake addresses and CI data paths are a test's own business.
DEFAULT_TEST_IGNORES: tuple[str, ...] = ("RNK2", "RNK501", "RNK503")
# Benchmarks, profilers and standalone verification scripts, whose point is the
# measurement: a host sync there is how the time or the value is read.
DEFAULT_BENCHMARK_PATTERNS: tuple[str, ...] = (
    "bench/",
    "benchmarks/",
    "benchmark/",
    "bench_*.py",
    "benchmark_*.py",
    "*_bench.py",
    "*_benchmark.py",
    "profile_*.py",
    "verify_*.py",
)
DEFAULT_BENCHMARK_IGNORES: tuple[str, ...] = ("RNK2",)


@dataclass(frozen=True)
class SelectionLayer:
    """One layer of rule selection; later layers win over earlier ones."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()


@dataclass(frozen=True)
class Config:
    """Validated ranklint configuration. All fields are optional."""

    # -- common ------------------------------------------------------------
    select: tuple[str, ...] | None = option(
        None, CODES, 'codes or prefixes to enable, replacing the default set (`"ALL"`: every rule)'
    )
    extend_select: tuple[str, ...] = option((), CODES, "codes or prefixes to enable on top")
    ignore: tuple[str, ...] = option((), CODES, "codes or prefixes to disable")
    per_file_ignores: Mapping[str, tuple[str, ...]] = option(
        {}, CODE_TABLE, 'codes disabled in files matching a pattern, e.g. `"tests/**" = ["RNK101"]`'
    )
    confidence: str = option(
        "high",
        CONFIDENCE,
        "the least confidence a reported finding has: `high` (the default run), `medium` adds "
        "findings whose evidence has a weaker link (a rank guessed from a name, a group whose "
        "members are guessed), `low` everything",
    )
    # -- rare ----------------------------------------------------------------
    exclude: tuple[str, ...] = option(
        DEFAULT_EXCLUDE,
        PATTERNS,
        "never walked into (VCS folders, virtual environments, `build`, `dist`, caches); replaces "
        "the defaults",
    )
    extend_exclude: tuple[str, ...] = option(
        (), PATTERNS, "patterns excluded on top of `exclude`", extends="exclude"
    )
    respect_gitignore: bool = option(
        True,
        BOOLEAN,
        "skip the files git ignores (`.gitignore` files and `.git/info/exclude` of the "
        "repository holding the walked folders) when walking folders; files named on the "
        "command line are checked anyway, unless `--force-exclude`",
    )
    rank_names: tuple[str, ...] = option(
        DEFAULT_RANK_NAMES,
        GLOBS,
        "names (variables, attributes, called functions) whose value is the caller's rank or a "
        "predicate on it; replaces the defaults",
        ("rank-taint",),
        setting=_compile_name_patterns,
    )
    extend_rank_names: tuple[str, ...] = option(
        (), GLOBS, 'added to `rank-names`, e.g. `["leader_*", "is_driver"]`', extends="rank_names"
    )
    extra_collectives: tuple[str, ...] = option(
        (),
        WRAPPERS,
        "project wrappers that issue a collective: `pkg.comm.all_reduce_mean` (a function, "
        "through any import) or `Engine.sync` (`.sync(...)` calls on any object)",
        ("call classifier",),
        setting=_compile_extra_collectives,
    )
    hot_functions: tuple[str, ...] = option(
        DEFAULT_HOT_FUNCTIONS,
        GLOBS,
        "names of functions that run once per step (their whole body, and what they call, is "
        "hot); replaces the defaults",
        ("hot regions", "RNK201", "RNK202", "RNK203"),
        setting=_compile_name_patterns,
    )
    extend_hot_functions: tuple[str, ...] = option(
        (),
        GLOBS,
        'added to `hot-functions`, e.g. `["update_policy", "*_microbatch"]`',
        extends="hot_functions",
    )
    allow_periodic_sync: bool = option(
        True,
        BOOLEAN,
        "code under `if step % N == 0:` (and after `if step % N: continue`) is not hot: a "
        "deliberate sync once per log interval; `false` reports it too",
        ("hot regions", "RNK201", "RNK202", "RNK203"),
        setting=bool,
    )
    test_patterns: tuple[str, ...] = option(
        DEFAULT_TEST_PATTERNS,
        PATTERNS,
        "test files: RNK6xx apply there only; RNK302, RNK303, RNK502 (by name), RNK504 and RNK505 "
        "do not, RNK501 allows loopback",
        (
            *("RNK302", "RNK303", "RNK501", "RNK502", "RNK504", "RNK505"),
            *("RNK601", "RNK602", "RNK603", "RNK604"),
        ),
    )
    script_patterns: tuple[str, ...] = option(
        DEFAULT_SCRIPT_PATTERNS,
        PATTERNS,
        "scripts, examples and CLI entry modules: RNK302, RNK303 and RNK504 do not apply, "
        "RNK501 allows loopback",
        ("RNK302", "RNK303", "RNK501", "RNK504"),
    )
    test_ignores: tuple[str, ...] = option(
        DEFAULT_TEST_IGNORES,
        CODES,
        "codes or prefixes that do not apply in test files (`test-patterns`): hot-path costs, "
        "fake addresses, CI data paths; `[]` applies them there too",
    )
    benchmark_patterns: tuple[str, ...] = option(
        DEFAULT_BENCHMARK_PATTERNS,
        PATTERNS,
        "benchmarks, profilers and verification scripts, whose point is the measurement; "
        "replaces the defaults",
    )
    benchmark_ignores: tuple[str, ...] = option(
        DEFAULT_BENCHMARK_IGNORES,
        CODES,
        "codes or prefixes that do not apply in files matching `benchmark-patterns`; `[]` "
        "applies them there too",
    )
    heavy_modules: tuple[str, ...] = option(
        DEFAULT_HEAVY_MODULES,
        IDENTIFIERS,
        "top-level modules not to import at module level in library code; replaces the defaults",
        ("RNK302",),
        setting=frozenset,
    )
    extend_heavy_modules: tuple[str, ...] = option(
        (), IDENTIFIERS, "modules added to `heavy-modules`", extends="heavy_modules"
    )
    blocking_functions: tuple[str, ...] = option(
        (),
        FUNCTIONS,
        "project functions that block, reported when called inside `async def`",
        ("RNK401",),
        setting=frozenset,
    )
    machine_path_prefixes: tuple[str, ...] = option(
        DEFAULT_MACHINE_PATH_PREFIXES,
        PREFIXES,
        "absolute path prefixes that tie code to one machine",
        ("RNK503",),
        setting=tuple,
    )
    mesh_axes: tuple[str, ...] = option(
        DEFAULT_MESH_AXES,
        IDENTIFIERS,
        "the DeviceMesh dimension names the project uses; replaces the defaults",
        ("RNK507",),
        setting=frozenset,
    )
    extend_mesh_axes: tuple[str, ...] = option(
        (), IDENTIFIERS, "names added to `mesh-axes`", extends="mesh_axes"
    )
    distributed_markers: tuple[str, ...] = option(
        DEFAULT_DISTRIBUTED_MARKERS,
        IDENTIFIERS,
        "pytest markers that mark a test as distributed or accelerator-bound",
        ("RNK603",),
        setting=frozenset,
    )
    # -- internal ------------------------------------------------------------
    # Directory that patterns are relative to (the config file's directory).
    root: Path = field(default_factory=Path.cwd)
    # The file this came from, for messages; None for defaults.
    source: Path | None = None
    # Whether this was found by looking above the checked files (``source``, or
    # defaults where none was found), not given with --config or built in code:
    # only then is ``source``'s folder the project root, and only then do the
    # configuration files of folders below it apply to their files.
    discovered: bool = False
    # Selection layers from the command line, applied after the file's.
    overrides: tuple[SelectionLayer, ...] = ()
    # `--confidence` from the command line, over every configuration file's.
    confidence_override: str | None = None

    def __post_init__(self) -> None:
        where = f"{self.source}: " if self.source is not None else ""
        for declared in declared_options():
            declared.spec.kind.check(getattr(self, declared.name), f"{where}{declared.key}")
        for layer in self.overrides:
            for codes in (layer.select or (), layer.extend_select, layer.ignore):
                check_codes(codes, "command line")
        if self.confidence_override is not None:
            check_confidence(self.confidence_override, "command line: --confidence")

    # -- derived -----------------------------------------------------------
    def with_overrides(
        self,
        *,
        select: Sequence[str] | None = None,
        extend_select: Sequence[str] = (),
        ignore: Sequence[str] = (),
    ) -> Config:
        """A copy with one more selection layer (from the command line)."""
        layer = SelectionLayer(
            None if select is None else tuple(select), tuple(extend_select), tuple(ignore)
        )
        return replace(self, overrides=(*self.overrides, layer))

    def reported_confidence(self) -> Confidence:
        """The least confidence a reported finding has (the command line's, else the option)."""
        return Confidence(self.confidence_override or self.confidence)

    def reports(self, finding: Finding) -> bool:
        """A finding of this confidence is reported (the others are still found and
        still use their suppressions: only the output leaves them out)."""
        return self.reported_confidence().admits(finding.confidence)

    def enabled_codes(self) -> tuple[str, ...]:
        """The codes of the enabled rules, sorted."""
        known = registered_codes()
        enabled = {entry.code for entry in known if entry.default_enabled}
        layers = (SelectionLayer(self.select, self.extend_select, self.ignore), *self.overrides)
        for layer in layers:
            if layer.select is not None:
                enabled = matching_codes(layer.select)
            enabled |= matching_codes(layer.extend_select)
            enabled -= matching_codes(layer.ignore)
        return tuple(entry.code for entry in known if entry.code in enabled)

    def exclude_spec(self) -> pathspec.GitIgnoreSpec:
        return compile_patterns((*self.exclude, *self.extend_exclude))

    def per_file_ignore_specs(self) -> list[tuple[pathspec.GitIgnoreSpec, frozenset[str]]]:
        return [
            (compile_patterns((pattern,)), frozenset(matching_codes(codes)))
            for pattern, codes in self.per_file_ignores.items()
        ]

    def kind_ignore_specs(self) -> list[tuple[pathspec.GitIgnoreSpec, frozenset[str]]]:
        """(test files, `test-ignores`) and (benchmarks, `benchmark-ignores`), where not empty."""
        pairs = ((self.test_patterns, self.test_ignores),)
        pairs += ((self.benchmark_patterns, self.benchmark_ignores),)
        return [
            (compile_patterns(patterns), frozenset(matching_codes(codes)))
            for patterns, codes in pairs
            if patterns and codes
        ]

    def test_spec(self) -> pathspec.GitIgnoreSpec:
        return compile_patterns(self.test_patterns)

    def script_spec(self) -> pathspec.GitIgnoreSpec:
        return compile_patterns(self.script_patterns)

    def analysis_settings(self) -> AnalysisSettings:
        """The option values the analysis and the rules read, compiled."""
        from ranklint.analysis.walk.settings import AnalysisSettings

        values: dict[str, object] = {}
        options = declared_options()
        for declared in options:
            compile_value = declared.spec.setting
            if compile_value is None:
                continue
            value = getattr(self, declared.name)
            if isinstance(value, tuple):
                for extension in options:
                    if extension.spec.extends == declared.name:
                        value = (*value, *getattr(self, extension.name))
            values[declared.name] = compile_value(value)
        # The rank names this project declared (not the defaults): a match is
        # the user's word that the value is a rank, evidence rather than a guess.
        declared = (*self.rank_names, *self.extend_rank_names)
        declared = tuple(name for name in declared if name not in DEFAULT_RANK_NAMES)
        values["declared_rank_names"] = _compile_name_patterns(declared)
        return AnalysisSettings(values)

    def fingerprint_parts(self) -> list[str]:
        """Every option's value and the root, one ``key=value`` line each (for the cache)."""
        parts = [f"root={Path(self.root).absolute()}"]
        # The project's own packages and required dependencies (RNK302).
        parts.append(f"layout={layout_fingerprint(self.root)}")
        for declared in declared_options():
            value = getattr(self, declared.name)
            if isinstance(value, Mapping):
                value = sorted(value.items())
            parts.append(f"{declared.key}={value!r}")
        return parts

    def relative_path(self, path: str | Path) -> str:
        """``path`` relative to :attr:`root` in POSIX form, for pattern matching
        (``.`` for the root itself; a path outside it without its leading ``/``).
        String operations: discovery asks this for every file and folder it walks."""
        absolute = os.path.abspath(path)
        root = _absolute(self.root)
        if absolute == root:
            return "."
        inside = absolute.startswith(root if root.endswith(os.sep) else root + os.sep)
        relative = absolute[len(root) :].lstrip(os.sep) if inside else absolute.lstrip(os.sep)
        return relative.replace(os.sep, "/")


@functools.lru_cache(maxsize=64)
def _absolute(root: Path) -> str:
    """``root`` made absolute, as a string (asked once per file walked)."""
    return os.path.abspath(root)


@functools.cache
def declared_options() -> tuple[DeclaredOption, ...]:
    """Every option of :class:`Config`, in declaration order."""
    found = []
    for item in dataclasses.fields(Config):
        spec = item.metadata.get("option")
        if spec is None:
            continue
        default = item.default_factory() if item.default is dataclasses.MISSING else item.default  # type: ignore[misc]
        found.append(DeclaredOption(item.name, item.name.replace("_", "-"), default, spec))
    return tuple(found)


# -- loading ---------------------------------------------------------------


def load_config(path: str | Path | None = None, *, cwd: Path | None = None) -> Config:
    """Load the configuration.

    With ``path``: that file (``pyproject.toml`` uses its ``[tool.ranklint]``
    table, any other TOML file its top level). Without: the nearest
    configuration file walking up from ``cwd`` (:func:`config_file_in`);
    defaults when there is none, rooted at the project holding ``cwd`` (the
    nearest folder with a project marker, see :func:`project_folder`), so that
    every run over one project has one root whatever paths it is given. A
    table's ``extend = "FILE"`` (a path relative to it) inherits FILE's table;
    the table's own keys win.
    """
    start = (cwd or Path.cwd()).absolute()
    if path is not None:
        return load_config_file(Path(path), discovered=False)
    for directory in (start, *start.parents):
        file = config_file_in(directory)
        if file is not None:
            return load_config_file(file, discovered=True)
    return Config(root=project_folder(start) or start, discovered=True)


def config_file_in(directory: Path) -> Path | None:
    """The configuration file of ``directory``: its ``ranklint.toml``, else its
    ``pyproject.toml`` if that has a ``[tool.ranklint]`` table; ``None`` if neither."""
    own = directory / CONFIG_FILE
    if own.is_file():
        return own
    candidate = directory / "pyproject.toml"
    if candidate.is_file():
        tool = _read_toml(candidate).get("tool")
        if isinstance(tool, dict) and "ranklint" in tool:
            return candidate
    return None


def load_config_file(file: Path, *, discovered: bool) -> Config:
    """The configuration of ``file``, its patterns relative to the file's folder;
    ``discovered``: it was found above the checked files (not named with --config)."""
    table = _extended(_table_of(file, _read_toml(file)), file, ())
    config = config_from_table(table, source=file, root=file.absolute().parent)
    return dataclasses.replace(config, discovered=discovered)


# A configuration file of its own, found before a folder's pyproject.toml (keys at the top).
CONFIG_FILE = "ranklint.toml"


def _table_of(file: Path, data: dict[str, Any]) -> Any:
    """``[tool.ranklint]`` of a ``pyproject.toml`` (or of a file with a ``tool`` table),
    else the file's top level."""
    if file.name == "pyproject.toml" or "tool" in data:
        return data.get("tool", {}).get("ranklint", {})
    return data


def _extended(table: Any, file: Path, seen: tuple[Path, ...]) -> Any:
    """``table`` with the table its ``extend`` names underneath (recursively)."""
    if not isinstance(table, dict) or "extend" not in table:
        return table
    target = table["extend"]
    if not isinstance(target, str):
        raise ConfigError(f"{file}: [tool.ranklint] extend: expected a path, got {target!r}")
    parent = (file.absolute().parent / target).resolve()
    chain = (*seen, file.absolute().resolve())
    if parent in chain:
        cycle = " -> ".join(str(p) for p in (*chain, parent))
        raise ConfigError(f"{file}: [tool.ranklint] extend: a cycle: {cycle}")
    inherited = _extended(_table_of(parent, _read_toml(parent)), parent, chain)
    if not isinstance(inherited, dict):
        raise ConfigError(f"{parent}: [tool.ranklint] must be a table")
    own = {key: value for key, value in table.items() if key != "extend"}
    return {**inherited, **own}


def _read_toml(file: Path) -> dict[str, Any]:
    try:
        with file.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(f"{file}: configuration file not found") from None
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read configuration: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: invalid TOML: {exc}") from None


def config_from_table(table: object, *, source: Path | None, root: Path) -> Config:
    """Build a :class:`Config` from a ``[tool.ranklint]`` table, checking keys and types."""
    where = "[tool.ranklint]" if source is None else f"{source}: [tool.ranklint]"
    if source is not None and source.name != "pyproject.toml":
        where = str(source)  # a file of its own (ranklint.toml, or one named with --config)
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table")
    options = {declared.key: declared for declared in declared_options()}
    for key in table:
        if key not in options:
            # Equivalent mutants: only the closest key is shown, and difflib pairs
            # `_` with `-` closely without the replacement.
            wanted = key.replace("_", "-")  # pragma: no mutate
            hint = difflib.get_close_matches(wanted, list(options), n=1)  # pragma: no mutate
            suffix = f" (did you mean {hint[0]!r}?)" if hint else ""
            raise ConfigError(f"{where}: unknown key {key!r}{suffix}")
    kwargs: dict[str, Any] = {"root": root, "source": source}
    for key, value in table.items():
        declared = options[key]
        form = declared.spec.kind.toml
        if form == "strings":
            kwargs[declared.name] = _string_list(value, f"{where} {key}")
        elif form == "string":
            if not isinstance(value, str):
                raise ConfigError(f"{where} {key}: expected a string, got {_type_name(value)}")
            kwargs[declared.name] = value
        elif form == "bool":
            if not isinstance(value, bool):
                raise ConfigError(f"{where} {key}: expected true or false, got {_type_name(value)}")
            kwargs[declared.name] = value
        else:
            if not isinstance(value, dict):
                raise ConfigError(
                    f"{where} {key}: expected a table of pattern = [codes], got {_type_name(value)}"
                )
            kwargs[declared.name] = {
                pattern: _string_list(codes, f"{where} {key}[{pattern!r}]")
                for pattern, codes in value.items()
            }
    return Config(**kwargs)


def _string_list(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{where}: expected a list of strings, got {_type_name(value)}")
    return tuple(value)


def _type_name(value: object) -> str:
    if isinstance(value, list):
        return "a list with non-string items"
    return {dict: "a table", str: "a string", bool: "a boolean", int: "an integer"}.get(
        type(value), type(value).__name__
    )
