"""Shared by the hot-path rules: a hot cost's finding, worded with where its code is hot."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ranklint.analysis.project.callgraph import Hop
from ranklint.analysis.project.facts import ProjectFacts
from ranklint.analysis.project.hot_regions import HotCost, HotRegion
from ranklint.analysis.walk.hot_markers import FORWARD_HELPER, TRAINER_HOOK
from ranklint.findings import Evidence
from ranklint.model.events import CostKind, HostCost, HotKind, HotReason
from ranklint.rules.base import ProjectFinding

# (label for the call chain, what the code does, how to fix it)
Description = tuple[str, str, str]

SYNC_ADVICE = (
    "keep the value on the device (accumulate `x.detach()`) and read it on the host once "
    "per log interval (`if step % log_every == 0:`)"
)


def hot_cost_findings(
    project: ProjectFacts,
    kinds: frozenset[CostKind],
    describe: Callable[[HostCost], Description],
    evidence: Callable[[HotCost], Evidence] | None = None,
) -> Iterator[ProjectFinding]:
    """A finding at each host cost of one of ``kinds`` in hot code: ``{text}, every step: ...``.

    ``evidence``: why a finding believes it (None: certain, high).
    """
    for hot in project.hot_costs:
        cost = hot.cost
        if cost.kind not in kinds:
            continue
        label, text, advice = describe(cost)
        region = hot.region
        where = _where(region)
        if region.chain:
            where = where.replace("it is in", "it is reached from", 1) + ": {chain}"
        chain = (*region.chain, Hop(hot.path, cost.site, label))
        message = f"{text}, every step: {where}; {advice}"
        yield ProjectFinding(
            hot.path,
            cost.site,
            message,
            chain,
            anchor=-1,
            evidence=None if evidence is None else evidence(hot),
        )


def _where(region: HotRegion) -> str:
    if region.reason is not None:
        return f"it is in `{region.function}`, which {_reason(region.reason)}"
    owner = region.function
    place = "at module level" if owner == "<module>" else f"of `{owner}`"
    return f"it is in a step loop {place} (the loop calls `{region.marker}`)"


def _reason(reason: HotReason) -> str:
    if reason.kind is HotKind.MARKED:
        return "is marked `# ranklint: hot`"
    if reason.kind is HotKind.COMPILED:
        return f"is compiled with `@{reason.detail}`"
    if reason.kind is HotKind.MODULE_FORWARD:
        if reason.detail == FORWARD_HELPER:
            return "is a forward helper of an `nn.Module`"
        return "is an `nn.Module`'s forward"
    if reason.detail == TRAINER_HOOK:
        return "is a step hook of a `Trainer` subclass (the framework calls it every step)"
    return "runs once per step (its name matches `hot-functions`)"
