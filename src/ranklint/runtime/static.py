"""Ties a runtime divergence to ranklint's static findings at the same lines.

When a diverging collective's line, or a line of the waiting rank's stack,
carries a finding of the collective-analysis family (RNK102-RNK110), the
divergence's text says so: the static finding predicted the hang that just
happened. The files are linted with the configuration found from the working
folder, with the collective rules selected.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable

from ranklint.runtime.report import DivergenceError

logger = logging.getLogger(__name__)

#: The static rules whose findings predict a runtime divergence (RNK106, a reduce
#: op left implicit, and RNK107, a barrier used to pass data, predict wrong values
#: or races, not a divergence).
DIVERGENCE_CODES = tuple(f"RNK{n}" for n in range(102, 111) if n not in (106, 107))


def _sites(error: DivergenceError) -> set[tuple[str, int]]:
    sites: set[tuple[str, int]] = set()
    for collective in error.divergence.at.values():
        for site in (collective.site, *collective.callers):
            if site is not None:
                sites.add((site.file, site.line))
    for view in error.views:
        waiting = view.waiting_in
        if waiting is not None and waiting.site is not None:
            sites.add((waiting.site.file, waiting.site.line))
    return sites


def notes_for(error: DivergenceError) -> dict[tuple[str, int], str]:
    """``(file, line) -> "RNK102 rank-divergent-collective: ..."`` for the sites that have one."""
    sites = _sites(error)
    files = sorted({file for file, _ in sites if os.path.isfile(file)})
    if not files:
        return {}
    return findings_at(files, sites)


def findings_at(files: Iterable[str], sites: set[tuple[str, int]]) -> dict[tuple[str, int], str]:
    """The static findings of :data:`DIVERGENCE_CODES` in ``files`` at ``sites``."""
    from dataclasses import replace

    from ranklint.api import lint_paths
    from ranklint.config import ConfigError, load_config

    try:
        # Every tier: a run that hangs there proves what the static analysis guessed.
        config = replace(load_config(), select=DIVERGENCE_CODES, confidence_override="low")
    except ConfigError as error:
        logger.debug("no static notes: %s", error)
        return {}
    # One process: a handful of files. (Any number of jobs gives the same findings.)
    result = lint_paths(list(files), config, jobs=1, whole_project=True)  # pragma: no mutate
    notes: dict[tuple[str, int], str] = {}
    wanted = {(os.path.realpath(file), line): (file, line) for file, line in sites}
    for finding in result.findings:
        for line in range(finding.line, finding.end_line + 1):
            key = wanted.get((os.path.realpath(finding.path), line))
            if key is not None and key not in notes:
                notes[key] = f"{finding.code} {finding.name}: {finding.message}"
    return notes
