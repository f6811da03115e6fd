"""RNK503 machine-specific-path."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ranklint.analysis.context import FileContext
from ranklint.analysis.literals import string_value
from ranklint.findings import Severity
from ranklint.rules.base import PendingFinding
from ranklint.rules.portability.string_rules import _StringRule


class MachineSpecificPath(_StringRule):
    code = "RNK503"
    name = "machine-specific-path"
    severity = Severity.WARNING
    summary = "An absolute path under a home directory or mount point is written in code"
    what = """\
Reports string literals that start with one of `machine-path-prefixes`
(default `/home/`, `/Users/`, `/mnt/`, `/data/`, `/scratch/`, `/nfs/`,
`/fsx/`, `/lustre/`, `/gpfs/`, `/root/`, `/workspace/`, `C:\\Users\\`).
Docstrings, strings in decorators (URL routes such as
`@app.put("/data/<id>")`) and templates with `<...>` are not reported.
"""
    why = """\
`/home/alice/ckpt` exists on Alice's workstation; on the cluster the job runs
for an hour and fails at its first checkpoint, or every rank of a 64-node job
writes to a path that only one node mounts. Paths come from configuration,
arguments or the environment.
"""
    limits = """\
Paths built by joining pieces (`"/mnt" + "/x"`, f-strings) are not reported.
"""
    valid = (
        """
        import os
        from pathlib import Path

        CHECKPOINTS = Path(os.environ.get("CKPT_DIR", "checkpoints"))
        TMP = "/tmp/ranklint"
        """,
    )
    invalid = (
        """
        from pathlib import Path

        CHECKPOINTS = Path("/home/alice/experiments/ckpt")  # expect: RNK503
        DATA = "/mnt/shared/tokens"  # expect: RNK503
        """,
    )

    def __init__(self, ctx: FileContext, sink: Callable[[PendingFinding], None]) -> None:
        super().__init__(ctx, sink)
        self._decorators = 0

    def visit_Decorator(self, node: cst.Decorator) -> None:
        self._decorators += 1

    def leave_Decorator(self, node: cst.Decorator) -> None:
        self._decorators -= 1

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if self.skipped(node) or self._decorators:
            return  # `@app.route("/data/<id>")`: a URL route, not a file
        value = string_value(node)
        if value is None or "\n" in value or len(value) > 300 or "<" in value:
            return
        for prefix in self.ctx.settings.machine_path_prefixes:
            if value.startswith(prefix) and len(value) > len(prefix):
                self.report(
                    node,
                    f"`{prefix}...` is a path on one machine: other nodes and other users do "
                    f"not have it; take it from configuration, an argument or the environment",
                )
                return
