"""Configuration: ``[tool.ranklint]`` in ``pyproject.toml``, validated on construction.

Keys (TOML spelling):

``select``          codes or prefixes to enable, replacing the default set
                    (``"RNK1"``, ``"RNK101"``, ``"ALL"``)
``extend-select``   codes or prefixes to enable on top of the selection
``ignore``          codes or prefixes to disable
``per-file-ignores`` table: gitignore-style glob -> codes to disable there
``exclude``         gitignore-style patterns never walked into (replaces defaults)
``extend-exclude``  patterns excluded on top of ``exclude``
``rank-names``      glob patterns of names whose value is the caller's rank or a
                    predicate on it (replaces the defaults)
``extend-rank-names`` patterns added to ``rank-names``
``extra-collectives`` project wrappers that issue a collective: qualified
                    function names (``pkg.comm.all_reduce_mean``) or
                    ``Class.method`` (matches ``.method(...)`` calls)
``hot-functions``   glob patterns of function names that run once per step
                    (replaces the defaults, see ``DEFAULT_HOT_FUNCTIONS``)
``extend-hot-functions`` patterns added to ``hot-functions``
``allow-periodic-sync`` boolean, default true: code under ``if step % N == 0:``
                    is not hot (a deliberate, amortised sync)
``test-patterns``   gitignore-style patterns of test files (RNK6xx apply there;
                    several RNK3xx/RNK5xx rules do not)
``script-patterns`` patterns of scripts, examples and CLI entry modules (where
                    `print`, literal topologies and loopback endpoints are fine)
``heavy-modules``   top-level modules too heavy or optional to import at module
                    level in library code (RNK302); ``extend-heavy-modules`` adds
``blocking-functions`` qualified names of project functions that block (RNK401)
``machine-path-prefixes`` absolute path prefixes that tie code to one machine (RNK503)
``mesh-axes``       the declared DeviceMesh dimension names (RNK507); ``extend-mesh-axes`` adds
``distributed-markers`` pytest markers that mark a test distributed or accelerator-bound (RNK603)

Patterns are matched against paths relative to the directory of the
configuration file. CLI options override the file: ``--select`` replaces the
file's selection, ``--extend-select`` and ``--ignore`` apply after it.
"""

from __future__ import annotations

import difflib
import functools
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pathspec

from ranklint.analysis.hot import DEFAULT_HOT_FUNCTIONS
from ranklint.analysis.rank import DEFAULT_RANK_NAMES
from ranklint.rules import Rule, all_rules

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

DEFAULT_EXCLUDE: tuple[str, ...] = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".hg",
    ".ipynb_checkpoints",
    ".mypy_cache",
    ".nox",
    ".pytest_cache",
    ".ranklint_cache",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".venv",
    "__pycache__",
    "__pypackages__",
    "_build",
    "buck-out",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
)

_KEYS = (
    "select",
    "extend-select",
    "ignore",
    "per-file-ignores",
    "exclude",
    "extend-exclude",
    "rank-names",
    "extend-rank-names",
    "extra-collectives",
    "hot-functions",
    "extend-hot-functions",
    "allow-periodic-sync",
    "test-patterns",
    "script-patterns",
    "heavy-modules",
    "extend-heavy-modules",
    "blocking-functions",
    "machine-path-prefixes",
    "mesh-axes",
    "extend-mesh-axes",
    "distributed-markers",
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
DEFAULT_HEAVY_MODULES: tuple[str, ...] = (
    "vllm",
    "sglang",
    "deepspeed",
    "apex",
    "transformer_engine",
    "flash_attn",
    "wandb",
    "tensorboard",
    "tensorboardX",
    "mlflow",
    "megatron",
    "triton",
    "xformers",
    "bitsandbytes",
    "comet_ml",
    "neptune",
)
DEFAULT_MACHINE_PATH_PREFIXES: tuple[str, ...] = (
    "/home/",
    "/Users/",
    "/mnt/",
    "/data/",
    "/scratch/",
    "/nfs/",
    "/fsx/",
    "/lustre/",
    "/gpfs/",
    "/root/",
    "/workspace/",
    "C:\\Users\\",
)
DEFAULT_MESH_AXES: tuple[str, ...] = (
    "dp_replicate",
    "dp_shard",
    "dp",
    "cp",
    "tp",
    "pp",
    "ep",
    "etp",
    "sp",
    "dp_shard_cp",
    "dp_cp",
    "ep_tp",
    "fsdp",
    "ddp",
    "hsdp",
    "replicate",
    "shard",
)
DEFAULT_DISTRIBUTED_MARKERS: tuple[str, ...] = (
    "distributed",
    "multigpu",
    "multi_gpu",
    "gpu",
    "cuda",
    "accelerator",
    "requires_gpu",
    "requires_cuda",
)
_RANK_NAME = re.compile(r"[A-Za-z_*?\[\]][A-Za-z0-9_*?\[\]!]*")
_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


class ConfigError(Exception):
    """A configuration problem the user can fix; the message is one clear line."""


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
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # -- rare ----------------------------------------------------------------
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    rank_names: tuple[str, ...] = DEFAULT_RANK_NAMES
    extend_rank_names: tuple[str, ...] = ()
    extra_collectives: tuple[str, ...] = ()
    hot_functions: tuple[str, ...] = DEFAULT_HOT_FUNCTIONS
    extend_hot_functions: tuple[str, ...] = ()
    allow_periodic_sync: bool = True
    test_patterns: tuple[str, ...] = DEFAULT_TEST_PATTERNS
    script_patterns: tuple[str, ...] = DEFAULT_SCRIPT_PATTERNS
    heavy_modules: tuple[str, ...] = DEFAULT_HEAVY_MODULES
    extend_heavy_modules: tuple[str, ...] = ()
    blocking_functions: tuple[str, ...] = ()
    machine_path_prefixes: tuple[str, ...] = DEFAULT_MACHINE_PATH_PREFIXES
    mesh_axes: tuple[str, ...] = DEFAULT_MESH_AXES
    extend_mesh_axes: tuple[str, ...] = ()
    distributed_markers: tuple[str, ...] = DEFAULT_DISTRIBUTED_MARKERS
    # -- internal ------------------------------------------------------------
    # Directory that patterns are relative to (the config file's directory).
    root: Path = field(default_factory=Path.cwd)
    # The file this came from, for messages; None for defaults.
    source: Path | None = None
    # Selection layers from the command line, applied after the file's.
    overrides: tuple[SelectionLayer, ...] = ()

    def __post_init__(self) -> None:
        where = f"{self.source}: " if self.source is not None else ""
        for key, codes in (
            ("select", self.select or ()),
            ("extend-select", self.extend_select),
            ("ignore", self.ignore),
        ):
            _check_codes(codes, f"{where}{key}")
        for pattern, codes in self.per_file_ignores.items():
            _check_patterns([pattern], f"{where}per-file-ignores")
            _check_codes(codes, f"{where}per-file-ignores[{pattern!r}]")
        _check_patterns(self.exclude, f"{where}exclude")
        _check_patterns(self.extend_exclude, f"{where}extend-exclude")
        _check_patterns(self.test_patterns, f"{where}test-patterns")
        _check_patterns(self.script_patterns, f"{where}script-patterns")
        for key, names in (
            ("heavy-modules", self.heavy_modules),
            ("extend-heavy-modules", self.extend_heavy_modules),
            ("mesh-axes", self.mesh_axes),
            ("extend-mesh-axes", self.extend_mesh_axes),
            ("distributed-markers", self.distributed_markers),
        ):
            for name in names:
                if not _IDENTIFIER.fullmatch(name):
                    raise ConfigError(f"{where}{key}: {name!r} is not an identifier")
        for entry in self.blocking_functions:
            if not _DOTTED.fullmatch(entry):
                raise ConfigError(
                    f"{where}blocking-functions: {entry!r} is not a dotted name such as "
                    f"'pkg.io.fetch_weights'"
                )
        for prefix in self.machine_path_prefixes:
            if not prefix or prefix in ("/", "\\"):
                raise ConfigError(
                    f"{where}machine-path-prefixes: {prefix!r} would match every absolute path"
                )
        for key, names in (
            ("rank-names", self.rank_names),
            ("extend-rank-names", self.extend_rank_names),
            ("hot-functions", self.hot_functions),
            ("extend-hot-functions", self.extend_hot_functions),
        ):
            for name in names:
                if not _RANK_NAME.fullmatch(name):
                    raise ConfigError(
                        f"{where}{key}: {name!r} is not a name or glob pattern of names "
                        f"(letters, digits, _, *, ?, [...])"
                    )
        for entry in self.extra_collectives:
            if not _DOTTED.fullmatch(entry):
                raise ConfigError(
                    f"{where}extra-collectives: {entry!r} is not a dotted name such as "
                    f"'pkg.comm.all_reduce_mean' or 'Trainer.sync'"
                )
        for layer in self.overrides:
            for codes in (layer.select or (), layer.extend_select, layer.ignore):
                _check_codes(codes, "command line")

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

    def enabled_rules(self) -> tuple[type[Rule], ...]:
        rules = all_rules()
        enabled = {rule.code for rule in rules if rule.default_enabled}
        layers = (SelectionLayer(self.select, self.extend_select, self.ignore), *self.overrides)
        for layer in layers:
            if layer.select is not None:
                enabled = _matching(layer.select)
            enabled |= _matching(layer.extend_select)
            enabled -= _matching(layer.ignore)
        return tuple(rule for rule in rules if rule.code in enabled)

    def exclude_spec(self) -> pathspec.GitIgnoreSpec:
        return compile_patterns((*self.exclude, *self.extend_exclude))

    def per_file_ignore_specs(self) -> list[tuple[pathspec.GitIgnoreSpec, frozenset[str]]]:
        return [
            (compile_patterns((pattern,)), frozenset(_matching(codes)))
            for pattern, codes in self.per_file_ignores.items()
        ]

    def test_spec(self) -> pathspec.GitIgnoreSpec:
        return compile_patterns(self.test_patterns)

    def script_spec(self) -> pathspec.GitIgnoreSpec:
        return compile_patterns(self.script_patterns)

    def relative_path(self, path: str | Path) -> str:
        """``path`` relative to :attr:`root` in POSIX form, for pattern matching."""
        absolute = Path(path).absolute()
        try:
            return absolute.relative_to(self.root.absolute()).as_posix()
        except ValueError:
            return absolute.as_posix().lstrip("/")


def _matching(selectors: Sequence[str]) -> set[str]:
    codes = [rule.code for rule in all_rules()]
    out: set[str] = set()
    for selector in selectors:
        out |= set(codes) if selector == "ALL" else {c for c in codes if c.startswith(selector)}
    return out


def _check_codes(codes: Sequence[str], where: str) -> None:
    known = [rule.code for rule in all_rules()]
    for code in codes:
        if code == "ALL" or (code.startswith("RNK") and any(k.startswith(code) for k in known)):
            continue
        hint = difflib.get_close_matches(code, known, n=1)
        suffix = f" (did you mean {hint[0]!r}?)" if hint else ""
        raise ConfigError(f"{where}: unknown rule code or prefix {code!r}{suffix}")


@functools.lru_cache(maxsize=256)
def compile_patterns(patterns: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    """gitignore-style patterns, compiled once per distinct tuple."""
    return pathspec.GitIgnoreSpec.from_lines(patterns)


def _check_patterns(patterns: Sequence[str], where: str) -> None:
    for pattern in patterns:
        try:
            compile_patterns((pattern,))
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"{where}: bad pattern {pattern!r}: {exc}") from None


# -- loading ---------------------------------------------------------------


def load_config(path: str | Path | None = None, *, cwd: Path | None = None) -> Config:
    """Load the configuration.

    With ``path``: that file (``pyproject.toml`` uses its ``[tool.ranklint]``
    table, any other TOML file its top level). Without: the nearest
    ``pyproject.toml`` with a ``[tool.ranklint]`` table, walking up from
    ``cwd``; defaults when there is none.
    """
    start = (cwd or Path.cwd()).absolute()
    if path is not None:
        file = Path(path)
        data = _read_toml(file)
        if file.name == "pyproject.toml" or "tool" in data:
            table = data.get("tool", {}).get("ranklint", {})
        else:
            table = data
        return config_from_table(table, source=file, root=file.absolute().parent)
    for directory in (start, *start.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            data = _read_toml(candidate)
            tool = data.get("tool", {})
            if isinstance(tool, dict) and "ranklint" in tool:
                return config_from_table(tool["ranklint"], source=candidate, root=directory)
    return Config(root=start)


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
    where = f"{source}: [tool.ranklint]" if source is not None else "[tool.ranklint]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table")
    for key in table:
        if key not in _KEYS:
            hint = difflib.get_close_matches(key.replace("_", "-"), _KEYS, n=1)
            suffix = f" (did you mean {hint[0]!r}?)" if hint else ""
            raise ConfigError(f"{where}: unknown key {key!r}{suffix}")
    kwargs: dict[str, Any] = {"root": root, "source": source}
    for key in (
        "select",
        "extend-select",
        "ignore",
        "exclude",
        "extend-exclude",
        "rank-names",
        "extend-rank-names",
        "extra-collectives",
        "hot-functions",
        "extend-hot-functions",
        "test-patterns",
        "script-patterns",
        "heavy-modules",
        "extend-heavy-modules",
        "blocking-functions",
        "machine-path-prefixes",
        "mesh-axes",
        "extend-mesh-axes",
        "distributed-markers",
    ):
        if key in table:
            kwargs[key.replace("-", "_")] = _string_list(table[key], f"{where} {key}")
    if "allow-periodic-sync" in table:
        value = table["allow-periodic-sync"]
        if not isinstance(value, bool):
            raise ConfigError(
                f"{where} allow-periodic-sync: expected true or false, got {_type_name(value)}"
            )
        kwargs["allow_periodic_sync"] = value
    if "per-file-ignores" in table:
        raw = table["per-file-ignores"]
        if not isinstance(raw, dict):
            raise ConfigError(
                f"{where} per-file-ignores: expected a table of pattern = [codes], "
                f"got {_type_name(raw)}"
            )
        kwargs["per_file_ignores"] = {
            pattern: _string_list(codes, f"{where} per-file-ignores[{pattern!r}]")
            for pattern, codes in raw.items()
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
