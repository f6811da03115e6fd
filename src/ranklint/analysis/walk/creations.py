"""Import-time group creations in launched scripts, per file: judged across files.

A process group created at import time is a problem in a module that other
code imports; a script that a launcher runs creates its groups at module
level on purpose. Such a creation in a file that runs as a script (see
:func:`ranklint.analysis.walk.dist_state.runs_as_script`) is recorded in the file's
facts (``ModuleSummary.deferred_creations``), whatever rules are selected: the
project phase reports it only where another file imports the script. Code
under ``if __name__ != "__main__":`` runs on import whatever the file is, and
is not deferred.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from ranklint.analysis.walk import catalog
from ranklint.analysis.walk.dist_state import runs_as_script
from ranklint.analysis.walk.guards import guard_kind
from ranklint.analysis.walk.visitor import NodeVisitor
from ranklint.model.events import Site

if TYPE_CHECKING:
    from ranklint.analysis.walk.context import FileContext


def import_time_creation(ctx: FileContext, node: cst.Call) -> str | None:
    """The qualified name of a group-creating call run at import time, else None."""
    if not (ctx.import_time and ctx.reachable):
        return None
    qualified = ctx.resolve(node.func)
    spec = catalog.lookup(qualified)
    if spec is None or not spec.kind.creates_groups:
        return None
    return qualified


def only_when_imported(ctx: FileContext) -> bool:
    """Under ``if __name__ != "__main__":`` (or the ``else`` of the main guard):
    code written to run on import, whatever else the file is."""
    return any(
        guard_kind(c.test) == ("main" if not c.holds else "not-main") for c in ctx.conditions
    )


class CreationRecorder(NodeVisitor):
    """Records the import-time group creations of a launched script into its facts."""

    where = "analysis creations"

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        # Whether the file runs as a script: read at its first creation.
        self._script: bool | None = True if ctx.is_script else None

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        qualified = import_time_creation(ctx, node)
        if qualified is None:
            return
        if self._script is None:
            self._script = runs_as_script(ctx.module, ctx.resolve, ctx.path)
        if self._script and not only_when_imported(ctx):
            ctx.facts.defer_creation(Site(ctx.top_index, ctx.call_ordinal), qualified)
