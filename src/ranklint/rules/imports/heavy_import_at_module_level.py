"""RNK302 heavy-import-at-module-level."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import libcst as cst

from ranklint.analysis.context import FileContext
from ranklint.analysis.names import dotted_name, import_from_module
from ranklint.findings import Severity
from ranklint.rules.base import PendingFinding, Rule


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
