"""Analysis settings derived once per run from the configuration."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ranklint.analysis.catalog import CallSpec, extra_spec
from ranklint.analysis.rank import DEFAULT_RANK_NAMES, RankNames


@dataclass
class AnalysisSettings:
    rank_names: RankNames = field(default_factory=lambda: RankNames(DEFAULT_RANK_NAMES))
    # extra-collectives: qualified name -> spec, method name -> spec
    extra: dict[str, CallSpec] = field(default_factory=dict)
    extra_methods: dict[str, CallSpec] = field(default_factory=dict)

    @classmethod
    def build(cls, rank_names: Sequence[str], extra_collectives: Sequence[str]) -> AnalysisSettings:
        extra: dict[str, CallSpec] = {}
        methods: dict[str, CallSpec] = {}
        for entry in extra_collectives:
            spec = extra_spec(entry)
            if spec.methods:
                methods[spec.methods[0]] = spec
            else:
                extra[entry] = spec
        return cls(RankNames(rank_names), extra, methods)
