"""Option values as the analysis and the rules read them, compiled once per run.

The values come from the option table (:class:`ranklint.config.Config`): each
option that the analysis or a rule reads names how its value is compiled
(glob matchers, sets, catalog rows), and ``extend-*`` options are merged into
the option they extend. Read them as attributes named after the option:
``settings.hot_functions`` is the compiled ``hot-functions`` plus
``extend-hot-functions``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ranklint.analysis.walk.catalog import CallSpec, extra_spec
from ranklint.analysis.walk.names import NamePatterns


@dataclass(frozen=True)
class ExtraCollectives:
    """``extra-collectives``: project wrappers by qualified name, and by method name."""

    functions: dict[str, CallSpec] = field(default_factory=dict)
    methods: dict[str, CallSpec] = field(default_factory=dict)


def compile_extra_collectives(entries: Sequence[str]) -> ExtraCollectives:
    extra = ExtraCollectives()
    for entry in entries:
        spec = extra_spec(entry)
        if spec.methods:
            extra.methods[spec.methods[0]] = spec
        else:
            extra.functions[entry] = spec
    return extra


def compile_name_patterns(patterns: Sequence[str]) -> NamePatterns:
    return NamePatterns(patterns)


class AnalysisSettings:
    """Compiled option values as attributes; see the module docstring."""

    def __init__(self, values: Mapping[str, object]) -> None:
        # Plain instance attributes: read on every call node of every file.
        self.__dict__.update(values)

    def __getattr__(self, name: str) -> Any:
        # Only reached for names that are not settings.
        raise AttributeError(f"no analysis setting {name!r}")
