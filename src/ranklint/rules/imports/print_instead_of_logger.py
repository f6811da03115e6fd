"""RNK303 print-instead-of-logger."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ranklint.analysis.walk.context import FileContext
from ranklint.analysis.walk.guards import is_main_guard
from ranklint.findings import Severity
from ranklint.rules.base import PendingFinding, Rule


class PrintInsteadOfLogger(Rule):
    code = "RNK303"
    name = "print-instead-of-logger"
    severity = Severity.INFO
    default_enabled = False
    summary = "`print()` in library code instead of a logger"
    what = """\
Reports `print()` calls in library code: not in files matching
`test-patterns` or `script-patterns` (scripts, examples, CLI entry modules
such as `cli.py`, `__main__.py`), not in modules with an
`if __name__ == "__main__":` block (they are programs), and not in
`__main__` blocks. Off by default (`extend-select = ["RNK303"]`): research
code prints on purpose more often than not.
"""
    why = """\
On a cluster every rank prints: 512 interleaved copies of each line, with no
timestamp, no rank, no component and no level to filter on, and writes that
can block on a full pipe. A module logger (`logging.getLogger(__name__)`)
carries the component, lets the launcher add the rank, and can be silenced
per module or per rank.
"""
    limits = """\
`print(..., file=sys.stderr)` is reported too. Calls through an alias of
`print` are not.
"""
    valid = (
        """
        import logging

        logger = logging.getLogger(__name__)


        def report(loss):
            logger.info("loss %.4f", loss)
        """,
        """
        def main():
            print("done")


        if __name__ == "__main__":
            main()
        """,
    )
    invalid = (
        """
        def report(loss):
            print(f"loss {loss:.4f}")  # expect: RNK303
        """,
    )

    def __init__(self, ctx: FileContext, sink: Callable[[PendingFinding], None]) -> None:
        super().__init__(ctx, sink)
        self._active = not (ctx.is_test or ctx.is_script or _has_main_block(ctx.module))

    def visit_Call(self, node: cst.Call) -> None:
        if not self._active:
            return
        func = node.func
        if (
            isinstance(func, cst.Name)
            and func.value == "print"
            and not self.ctx.names.is_bound("print")
        ):
            self.report(
                node,
                "`print()` in library code: every rank prints, with no rank, component or "
                "level to filter on; use a module logger (`logging.getLogger(__name__)`)",
            )


def _has_main_block(module: cst.Module) -> bool:
    return any(
        isinstance(statement, cst.If) and is_main_guard(statement.test) for statement in module.body
    )
