"""The option table's vocabulary: value kinds, their validation, and how an option is declared.

:class:`ranklint.config.Config` declares every option once as a field made by
:func:`option`; everything else (loader, validation, analysis settings, cache
fingerprint, docs) reads those declarations.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pathspec

from ranklint.findings import Confidence
from ranklint.registry import registered_codes

_RANK_NAME = re.compile(r"[A-Za-z_*?\[\]][A-Za-z0-9_*?\[\]!]*")
_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


class ConfigError(Exception):
    """A configuration problem the user can fix; the message is one clear line."""


# -- value kinds: how an option is typed, validated and documented -------------


@dataclass(frozen=True)
class ValueKind:
    """The type of an option's value: TOML form, validation, docs, a sample value."""

    label: str  # how the docs name the type
    toml: str  # "strings", "bool" or "table"
    # Raises ConfigError for a bad value; ``where``: "<file>: <key>".
    check: Callable[[Any, str], None]
    # A valid value that is not the default of any option of this kind.
    example: Any


def _check_nothing(value: object, where: str) -> None:
    """Booleans need no check beyond the loader's type check."""


def check_codes(codes: Sequence[str], where: str) -> None:
    known = [entry.code for entry in registered_codes()]
    for code in codes:
        if code == "ALL" or (code.startswith("RNK") and any(k.startswith(code) for k in known)):
            continue
        hint = _closest_code(code, known)
        suffix = f" (did you mean {hint!r}?)" if hint else ""
        raise ConfigError(f"{where}: unknown rule code or prefix {code!r}{suffix}")


# Characters typed for look-alike digits: `RNK1O1`, `RNKl02`.
_LOOK_ALIKES = str.maketrans({"O": "0", "o": "0", "I": "1", "l": "1", "i": "1"})


def _closest_code(code: str, known: Sequence[str]) -> str | None:
    """The code meant: the same after fixing look-alike digits and case, else the closest."""
    fixed = code.translate(_LOOK_ALIKES).upper()
    if fixed in known:
        return fixed
    # Only hint[0] is used: the count asked for is an equivalent mutant.
    hint = difflib.get_close_matches(code, known, n=1)  # pragma: no mutate
    return hint[0] if hint else None


def _check_optional_codes(codes: Sequence[str] | None, where: str) -> None:
    check_codes(codes or (), where)


def _check_patterns(patterns: Sequence[str], where: str) -> None:
    for pattern in patterns:
        try:
            compile_patterns((pattern,))
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"{where}: bad pattern {pattern!r}: {exc}") from None


def _check_per_file_ignores(table: Mapping[str, Sequence[str]], where: str) -> None:
    for pattern, codes in table.items():
        _check_patterns([pattern], where)
        check_codes(codes, f"{where}[{pattern!r}]")


def _check_identifiers(names: Sequence[str], where: str) -> None:
    for name in names:
        if not _IDENTIFIER.fullmatch(name):
            raise ConfigError(f"{where}: {name!r} is not an identifier")


def _check_globs(names: Sequence[str], where: str) -> None:
    for name in names:
        if not _RANK_NAME.fullmatch(name):
            raise ConfigError(
                f"{where}: {name!r} is not a name or glob pattern of names "
                f"(letters, digits, _, *, ?, [...])"
            )


def _check_dotted(entries: Sequence[str], where: str, *, examples: str) -> None:
    for entry in entries:
        if not _DOTTED.fullmatch(entry):
            raise ConfigError(f"{where}: {entry!r} is not a dotted name such as {examples}")


# The `confidence` values, surest first (the tiers of ranklint.findings.Confidence).
CONFIDENCE_LEVELS = tuple(level.value for level in Confidence)


def check_confidence(value: object, where: str) -> None:
    if value not in CONFIDENCE_LEVELS:
        choices = ", ".join(repr(level) for level in CONFIDENCE_LEVELS)
        raise ConfigError(f"{where}: expected one of {choices}, got {value!r}")


def _check_prefixes(prefixes: Sequence[str], where: str) -> None:
    for prefix in prefixes:
        if not prefix or prefix in ("/", "\\"):
            raise ConfigError(f"{where}: {prefix!r} would match every absolute path")


CODES = ValueKind("list of codes or prefixes", "strings", _check_optional_codes, ("RNK1",))
CODE_TABLE = ValueKind(
    "table: pattern -> codes", "table", _check_per_file_ignores, {"tests/*.py": ("RNK2",)}
)
PATTERNS = ValueKind("list of gitignore-style patterns", "strings", _check_patterns, ("zz_x/",))
GLOBS = ValueKind("list of name glob patterns", "strings", _check_globs, ("zz_*",))
IDENTIFIERS = ValueKind("list of identifiers", "strings", _check_identifiers, ("zz_x",))
FUNCTIONS = ValueKind(
    "list of dotted names",
    "strings",
    functools.partial(_check_dotted, examples="'pkg.io.fetch_weights'"),
    ("zz.fetch",),
)
WRAPPERS = ValueKind(
    "list of dotted names",
    "strings",
    functools.partial(_check_dotted, examples="'pkg.comm.all_reduce_mean' or 'Trainer.sync'"),
    ("zz.comm.sync",),
)
PREFIXES = ValueKind("list of path prefixes", "strings", _check_prefixes, ("/zz/",))
BOOLEAN = ValueKind("boolean", "bool", _check_nothing, None)
CONFIDENCE = ValueKind("`high`, `medium` or `low`", "string", check_confidence, "medium")


@dataclass(frozen=True)
class Option:
    """One option's declaration (the metadata of its :class:`Config` field)."""

    kind: ValueKind
    doc: str
    # Rule codes and analyses (`rank-taint`, `hot regions`, ...) that read it.
    readers: tuple[str, ...] = ()
    # ``extend-x``: the field name of the option it adds to.
    extends: str | None = None
    # Compiles the value (with its ``extend-*`` additions) into the analysis
    # settings; None: the analysis and the rules do not read it through them.
    setting: Callable[[Any], object] | None = None


@dataclass(frozen=True)
class DeclaredOption:
    """An option with its field: what the loader, docs and fingerprint iterate."""

    name: str  # field name: hot_functions
    key: str  # TOML key: hot-functions
    default: Any
    spec: Option


# pragma: no mutate start (option() runs at import, before any mutant can be active)
def option(
    default: Any,
    kind: ValueKind,
    doc: str,
    readers: Sequence[str] = (),
    *,
    extends: str | None = None,
    setting: Callable[[Any], object] | None = None,
) -> Any:
    """Declare a :class:`Config` field as an option (see the module docstring)."""
    metadata = {"option": Option(kind, doc, tuple(readers), extends, setting)}
    if isinstance(default, dict):
        return field(default_factory=lambda: dict(default), metadata=metadata)
    return field(default=default, metadata=metadata)


# pragma: no mutate end


def matching_codes(selectors: Sequence[str]) -> set[str]:
    codes = [entry.code for entry in registered_codes()]
    out: set[str] = set()
    for selector in selectors:
        out |= set(codes) if selector == "ALL" else {c for c in codes if c.startswith(selector)}
    return out


@functools.lru_cache(maxsize=256)
def compile_patterns(patterns: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    """gitignore-style patterns, compiled once per distinct tuple."""
    return pathspec.GitIgnoreSpec.from_lines(patterns)


def options_table(options: Iterable[DeclaredOption]) -> str:
    """The options as a Markdown table (key, type, default, meaning, read by)."""
    rows = [
        "| key | type | default | meaning | read by |",
        "| --- | --- | --- | --- | --- |",
    ]
    for declared in options:
        rows.append(
            f"| `{declared.key}` | {declared.spec.kind.label} | {_default_text(declared)} | "
            f"{declared.spec.doc} | {_readers(declared)} |"
        )
    return "\n".join(rows)


def _default_text(declared: DeclaredOption) -> str:
    default = declared.default
    if default is None:
        return "the default set"
    if isinstance(default, bool):
        return "`true`" if default else "`false`"
    if not default:
        return "none"
    if isinstance(default, tuple):
        return ", ".join(f"`{item}`" for item in default)
    return f"`{default}`"


def _readers(declared: DeclaredOption) -> str:
    if declared.spec.extends is not None:
        return f"as `{declared.spec.extends.replace('_', '-')}`"
    return ", ".join(declared.spec.readers) or "-"
