"""The project's facts: every file's summary joined, for the project-phase rules to read.

:class:`ProjectFacts` is built once per run from the summaries of all files
(never from source: the cache holds the summaries). Each fact is computed on
first use, so a run whose rules need none of them pays nothing for it:

- ``index``: the call graph (:mod:`ranklint.analysis.project.callgraph`);
- ``divergences``: collectives and group creations that only some ranks reach
  (:mod:`ranklint.analysis.project.divergences`);
- ``hot_costs``: host costs that run every step
  (:mod:`ranklint.analysis.project.hot_regions`);
- ``discarded_coroutines``: calls of project coroutine functions whose
  coroutine is thrown away;
- ``mesh``: the DeviceMesh dimension names the project declares and indexes.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass

from ranklint.analysis.project.callgraph import ProjectIndex, call_events
from ranklint.analysis.project.divergences import CollectiveAnalysis, Divergence
from ranklint.analysis.project.hot_regions import HotCost, HotRegions
from ranklint.analysis.walk.settings import AnalysisSettings
from ranklint.model.events import ModuleSummary, Site


@dataclass(frozen=True)
class DiscardedCoroutine:
    """A call of a project ``async def`` function whose result is not used."""

    path: str
    site: Site
    label: str  # the callee as written: `self.fetch`
    callee: str  # the coroutine function's qualname


@dataclass(frozen=True)
class MeshUse:
    """``mesh["name"]``: a dimension looked up by name."""

    path: str
    site: Site
    name: str


@dataclass(frozen=True)
class MeshFacts:
    """The DeviceMesh dimension names of the whole project."""

    # Names some mesh construction (or `_flatten`) of the project declares.
    declared: frozenset[str]
    # Some mesh of the project is built with literal names.
    constructed: bool
    # Some mesh is built from names computed at run time: the set is not known.
    dynamic: bool
    uses: tuple[MeshUse, ...]


class ProjectFacts:
    """The facts of every file of a run, joined; see the module docstring."""

    def __init__(self, summaries: Iterable[ModuleSummary], settings: AnalysisSettings) -> None:
        self.summaries = list(summaries)
        self.settings = settings

    @functools.cached_property
    def index(self) -> ProjectIndex:
        return ProjectIndex(self.summaries)

    @functools.cached_property
    def divergences(self) -> list[Divergence]:
        return CollectiveAnalysis(self.index).run()

    @functools.cached_property
    def hot_costs(self) -> list[HotCost]:
        return HotRegions(self.index).run()

    @functools.cached_property
    def discarded_coroutines(self) -> list[DiscardedCoroutine]:
        index = self.index
        found: list[DiscardedCoroutine] = []
        for module in index.summaries:
            for function in (module.module, *module.functions.values()):
                for event in call_events(function.events):
                    if not event.discarded:
                        continue
                    callee = index.resolve(event.target, module, function)
                    if callee is None or not callee.function.is_async:
                        continue
                    found.append(
                        DiscardedCoroutine(
                            module.path, event.site, event.label, callee.function.qualname
                        )
                    )
        return found

    @functools.cached_property
    def mesh(self) -> MeshFacts:
        declared: set[str] = set()
        constructed = dynamic = False
        uses: list[MeshUse] = []
        for module in self.summaries:
            dynamic = dynamic or module.mesh_dynamic
            declared |= module.mesh_names
            constructed = constructed or bool(module.mesh_names)
            uses.extend(MeshUse(module.path, site, name) for site, name in module.mesh_uses)
        return MeshFacts(frozenset(declared), constructed, dynamic, tuple(uses))
