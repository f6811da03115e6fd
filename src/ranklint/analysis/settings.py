"""Analysis settings derived once per run from the configuration."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ranklint.analysis.catalog import CallSpec, extra_spec
from ranklint.analysis.hot import DEFAULT_HOT_FUNCTIONS
from ranklint.analysis.rank import DEFAULT_RANK_NAMES, RankNames


@dataclass
class AnalysisSettings:
    rank_names: RankNames = field(default_factory=lambda: RankNames(DEFAULT_RANK_NAMES))
    # extra-collectives: qualified name -> spec, method name -> spec
    extra: dict[str, CallSpec] = field(default_factory=dict)
    extra_methods: dict[str, CallSpec] = field(default_factory=dict)
    # hot-functions: names of functions that run once per step (glob patterns).
    hot_functions: RankNames = field(default_factory=lambda: RankNames(DEFAULT_HOT_FUNCTIONS))
    # allow-periodic-sync: code under `if step % N == 0:` is not hot.
    allow_periodic_sync: bool = True
    # Engineering rules (RNK3xx-RNK6xx): see Config for the keys.
    heavy_modules: frozenset[str] = frozenset()
    blocking_functions: frozenset[str] = frozenset()
    machine_path_prefixes: tuple[str, ...] = ()
    mesh_axes: frozenset[str] = frozenset()
    distributed_markers: frozenset[str] = frozenset()

    @classmethod
    def build(
        cls,
        rank_names: Sequence[str],
        extra_collectives: Sequence[str],
        hot_functions: Sequence[str] = DEFAULT_HOT_FUNCTIONS,
        *,
        allow_periodic_sync: bool = True,
        heavy_modules: Sequence[str] = (),
        blocking_functions: Sequence[str] = (),
        machine_path_prefixes: Sequence[str] = (),
        mesh_axes: Sequence[str] = (),
        distributed_markers: Sequence[str] = (),
    ) -> AnalysisSettings:
        extra: dict[str, CallSpec] = {}
        methods: dict[str, CallSpec] = {}
        for entry in extra_collectives:
            spec = extra_spec(entry)
            if spec.methods:
                methods[spec.methods[0]] = spec
            else:
                extra[entry] = spec
        return cls(
            RankNames(rank_names),
            extra,
            methods,
            RankNames(hot_functions),
            allow_periodic_sync,
            frozenset(heavy_modules),
            frozenset(blocking_functions),
            tuple(machine_path_prefixes),
            frozenset(mesh_axes),
            frozenset(distributed_markers),
        )
