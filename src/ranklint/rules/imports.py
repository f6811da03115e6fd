"""Imports and logging rules (RNK3xx)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import libcst as cst

from ranklint.analysis.context import FileContext
from ranklint.analysis.guards import is_main_guard
from ranklint.analysis.names import dotted_name, import_from_module
from ranklint.findings import Severity
from ranklint.rules.base import PendingFinding, Rule


class WildcardImport(Rule):
    code = "RNK301"
    name = "wildcard-import"
    severity = Severity.WARNING
    summary = "`from module import *` hides which names a module uses"
    what = """\
Reports every `from module import *`, in any module, `__init__.py` included.
"""
    why = """\
A wildcard import makes it impossible to tell, by reading the file, where a
name such as `all_reduce` or `init_process_group` comes from, which module a
patch must target, or which names a refactor of the source module breaks. On a
cluster the failure surfaces late: a name silently rebound by a later wildcard
import calls the wrong collective, or a removed name fails only on the rank
that reaches the code. It also defeats static analysis, ranklint's included:
with two wildcard imports ranklint can no longer resolve bare names.
"""
    limits = """\
None known. Re-exports in a package's `__init__.py` are better written as
explicit imports with an `__all__`.
"""
    valid = (
        """
        from torch.distributed import all_reduce, init_process_group
        """,
        """
        import torch.distributed as dist
        from . import utils
        """,
    )
    invalid = (
        """
        from torch.distributed import *  # expect: RNK301
        """,
        """
        from .collectives import *  # expect: RNK301


        def helper():
            return 1
        """,
        """
        try:
            from apex.optimizers import *  # expect: RNK301
        except ImportError:
            pass
        """,
    )

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            module = import_from_module(node)
            advice = f"import the names you use explicitly (`from {module} import a, b`)"
            if not module.startswith("."):
                advice += f" or import the module (`import {module}`)"
            self.report(
                node,
                f"`from {module} import *` hides which names this module uses and where "
                f"they come from; {advice}",
            )


class HeavyImportAtModuleLevel(Rule):
    code = "RNK302"
    name = "heavy-import-at-module-level"
    severity = Severity.WARNING
    summary = "A heavy or optional dependency is imported when the module is imported"
    what = """\
Reports module-level imports of the modules named in `heavy-modules` (by
default `vllm`, `sglang`, `deepspeed`, `apex`, `transformer_engine`,
`flash_attn`, `wandb`, `tensorboard` / `tensorboardX` /
`torch.utils.tensorboard`, `mlflow`, `megatron`, `triton`, `xformers`,
`bitsandbytes`, `comet_ml`, `neptune`; `extend-heavy-modules` adds more) in
library code. Not reported: imports under `if TYPE_CHECKING:`, inside
`try`/`except ImportError`, under any other module-level `if`, in
`__main__` blocks, in functions, in files matching `test-patterns` or
`script-patterns`, a package's imports of itself (`deepspeed/...`
importing `deepspeed`), and imports in a module or package named after the
dependency (`wandb_logger.py`, `sglang_rollout/`, `models/mcore/` for
megatron, `kernels.py` for triton, any module that defines `@triton.jit`
kernels: the integration point, imported only where the dependency is wanted).
"""
    why = """\
Every process that imports the module pays for the dependency: seconds of
import time (CUDA extensions, JIT kernels, telemetry clients that open
network connections) on every rank, every data-loader worker and every unit
test, and a hard failure where the optional package is not installed (the CPU
CI job, the evaluation node without vLLM). Importing it inside the function or
code path that needs it keeps the cost and the failure where the feature is
used.
"""
    limits = """\
Only the listed modules are known to be heavy. An import in a module that is
itself only imported lazily is reported anyway.
"""
    valid = (
        """
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            import deepspeed


        def log_metrics(metrics):
            import wandb

            wandb.log(metrics)
        """,
        """
        try:
            import flash_attn
        except ImportError:
            flash_attn = None
        """,
    )
    invalid = (
        """
        import torch
        import wandb  # expect: RNK302
        from vllm import LLM  # expect: RNK302
        from torch.utils.tensorboard import SummaryWriter  # expect: RNK302
        """,
    )

    def __init__(self, ctx: FileContext, sink: Callable[[PendingFinding], None]) -> None:
        super().__init__(ctx, sink)
        self._optional_depth = 0
        path = Path(ctx.path)
        # The package itself, and modules or packages named after the dependency
        # (the integration point: `wandb_logger.py`, `models/mcore/`, `kernels.py`
        # for triton): they exist to use it and are imported only where it is wanted.
        words = " ".join(part.lower() for part in (*path.parent.parts, path.stem))
        self._own = {
            name
            for name in ctx.settings.heavy_modules
            if any(alias in words for alias in (name.lower(), *_ALIASES.get(name, ())))
        }
        self._active = not (ctx.is_test or ctx.is_script)
        if "triton" in ctx.settings.heavy_modules and _defines_triton_kernels(ctx.module):
            self._own.add("triton")  # a kernel module: triton is what it is made of

    def visit_Try(self, node: cst.Try) -> None:
        if _catches_import_error(node):
            self._optional_depth += 1

    def leave_Try(self, node: cst.Try) -> None:
        if _catches_import_error(node):
            self._optional_depth -= 1

    def visit_Import(self, node: cst.Import) -> None:
        if not self._checked():
            return
        for alias in node.names:
            self._check(node, dotted_name(alias.name) or "")

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or not self._checked():
            return
        self._check(node, import_from_module(node))

    def _checked(self) -> bool:
        ctx = self.ctx
        return (
            self._active
            and ctx.import_time
            and ctx.reachable
            and not ctx.conditions
            and self._optional_depth == 0
        )

    def _check(self, node: cst.CSTNode, module: str) -> None:
        heavy = self.ctx.settings.heavy_modules
        top = module.split(".", 1)[0]
        name = top if top in heavy else None
        if module.startswith("torch.utils.tensorboard") and "tensorboard" in heavy:
            name = "tensorboard"
        if name is None or name in self._own:
            return
        self.report(
            node,
            f"`{module}` is imported when this module is imported: every rank, data-loader "
            f"worker and test that imports it pays for `{name}` and fails where it is not "
            f"installed; import it inside the function that uses it (or under "
            f"`if TYPE_CHECKING:` for annotations)",
        )


# Other names under which projects name their integration with a dependency.
_ALIASES: dict[str, tuple[str, ...]] = {
    "megatron": ("mcore",),
    "transformer_engine": ("te_",),
    "triton": ("kernel",),
}


def _defines_triton_kernels(module: cst.Module) -> bool:
    """A module-level ``@triton.jit`` / ``@triton.autotune`` function."""
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef):
            for decorator in statement.decorators:
                callee = decorator.decorator
                if isinstance(callee, cst.Call):
                    callee = callee.func
                if (dotted_name(callee) or "").startswith("triton."):
                    return True
    return False


def _catches_import_error(node: cst.Try) -> bool:
    for handler in node.handlers:
        kind = handler.type
        names = [kind] if not isinstance(kind, cst.Tuple) else [e.value for e in kind.elements]
        for name in names:
            if dotted_name(name) in ("ImportError", "ModuleNotFoundError", "Exception"):
                return True
    return False


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
