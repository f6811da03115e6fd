"""``ranklint check --show-settings``: the settings in effect, as TOML that reads back.

The output is a ``[tool.ranklint]`` table: paste it into ``pyproject.toml``, or give
the file to ``--config`` (or name it ``ranklint.toml``) and the same settings apply.
Where the command line changed the rule selection, the table holds the codes in
effect as ``select``; an option the configuration leaves unset is left out, with
its effective value in a comment.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from pathlib import Path

from ranklint.config import Config, SelectionLayer, declared_options

logger = logging.getLogger(__name__)

_SELECTION = ("select", "extend-select", "ignore")
# Lists longer than this are written one group of items a line.
_LINE = 100


def render_settings(config: Config, paths: Iterable[str], project_root: Path | None) -> str:
    """The settings of ``config`` (with its command-line layers) as TOML."""
    layers = [layer for layer in config.overrides if _layer_flags(layer)]
    lines = [
        f"# configuration file: {config.source or 'none (defaults)'}",
        f"# patterns relative to: {config.root}",
        f"# project root of {' '.join(paths)}: {project_root}",
        *(f"# command line: {_layer_flags(layer)}" for layer in layers),
    ]
    if config.confidence_override is not None:
        lines.append(f"# command line: --confidence {config.confidence_override}")
    if layers:
        lines.append("# the selection with the command line's applied: the codes in effect")
    lines = [_comment(line) for line in lines]
    lines.append("[tool.ranklint]")
    for declared in declared_options():
        value = getattr(config, declared.name)
        if declared.key in _SELECTION and layers:
            value = list(config.enabled_codes()) if declared.key == "select" else []
        elif declared.key == "confidence":
            value = config.reported_confidence().value
        if value is None:  # `select` unset: the default set
            lines.append(f"# {declared.key}: unset (the default set: {_codes()})")
            continue
        lines.append(_key_value(declared.key, value))
    return "".join(line + "\n" for line in lines)


def _comment(line: str) -> str:
    """A comment line, whatever a path in it holds (a comment ends at a line end)."""
    return "".join("?" if _is_control(char) and char != "\t" else char for char in line)


def _is_control(char: str) -> bool:
    return char < " " or char == "\x7f"


def _codes() -> str:
    from ranklint.registry import registered_codes

    return ", ".join(entry.code for entry in registered_codes() if entry.default_enabled)


def _layer_flags(layer: SelectionLayer) -> str:
    """A command-line layer as the options that made it."""
    flags = []
    if layer.select is not None:
        flags.append(f"--select {','.join(layer.select)}")
    if layer.extend_select:
        flags.append(f"--extend-select {','.join(layer.extend_select)}")
    if layer.ignore:
        flags.append(f"--ignore {','.join(layer.ignore)}")
    return " ".join(flags)


def _key_value(key: str, value: object) -> str:
    """``key = value``; a long list one item group a line (TOML's multi-line array)."""
    line = f"{key} = {toml_value(value)}"
    if len(line) <= _LINE or isinstance(value, (str, bool, Mapping)):
        return line
    rows: list[str] = []
    for item in (toml_value(item) + "," for item in value):  # type: ignore[attr-defined]
        if rows and len(rows[-1]) + 1 + len(item) <= _LINE:
            rows[-1] += f" {item}"
        else:
            rows.append(f"    {item}")
    return "\n".join([f"{key} = [", *rows, "]"])


def toml_value(value: object) -> str:
    """A boolean, string, list of strings or table of lists of strings as TOML."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, Mapping):
        items = ", ".join(f"{toml_string(key)} = {toml_value(val)}" for key, val in value.items())
        return f"{{ {items} }}" if items else "{}"
    if isinstance(value, Iterable):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def toml_string(text: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped."""
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif _is_control(char):
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'
