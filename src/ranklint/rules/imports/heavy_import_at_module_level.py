"""RNK302 heavy-import-at-module-level."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import libcst as cst

from ranklint.analysis.project.layout import ProjectLayout, layout_of
from ranklint.analysis.walk.context import FileContext
from ranklint.analysis.walk.names import dotted_name, import_from_module
from ranklint.findings import Severity
from ranklint.rules.base import PendingFinding, Rule


class HeavyImportAtModuleLevel(Rule):
    code = "RNK302"
    name = "heavy-import-at-module-level"
    severity = Severity.WARNING
    # Off by default: on the review corpus almost every finding was a module
    # built on a dependency its package needs anyway (docs/dev/ecosystem-review.md).
    default_enabled = False
    summary = "A heavy or optional dependency is imported when the module is imported"
    what = """\
Off by default (opt in with `extend-select = ["RNK302"]`): on the review
corpus almost all of its findings were modules of a package that needs the
dependency anyway, which one file cannot tell.

Reports module-level imports of the modules named in `heavy-modules` (by
default `vllm`, `sglang`, `deepspeed`, `apex`, `transformer_engine`,
`flash_attn`, `wandb`, `tensorboard` / `tensorboardX` /
`torch.utils.tensorboard`, `mlflow`, `megatron`, `triton`, `xformers`,
`bitsandbytes`, `comet_ml`, `neptune`; `extend-heavy-modules` adds more) in
library code. Not reported:

- imports under `if TYPE_CHECKING:`, under any other module-level `if`, in
  `__main__` blocks and in functions;
- imports inside a `try` whose handlers catch a failed import: `except
  ImportError`, `ModuleNotFoundError`, `Exception`, `BaseException` or a bare
  `except:` (an optional-import guard);
- files matching `test-patterns` or `script-patterns`;
- the project's own packages, found from its layout: packages and modules in
  the project folder (the nearest folder above the file with `pyproject.toml`,
  `setup.py`, `setup.cfg` or `.git`) and in its `src/`, those beside the file's
  top-level package, and the `[project] name` / `setup(name=...)` /
  `setup.cfg` name (a checkout of Megatron-LM or DeepSpeed imports itself);
- the project's required dependencies: `[project] dependencies` (and Poetry's)
  of `pyproject.toml`, `install_requires` of `setup.py` (a literal list, or the
  requirements files a call names) and of `setup.cfg`, and `requirements.txt`
  (also `requirements/requirements.txt`, `requirements/base.txt`): a
  dependency every install has is not optional (`megatron-core` provides
  `megatron.core`, `#egg=deepspeed` names a URL's project);
- a package's imports of itself (`deepspeed/...` importing `deepspeed`), and
  imports in a module or package named after the dependency (`wandb_logger.py`,
  `integrations/wandb.py`, `vllm_generator.py`, `sglang_rollout/`,
  `models/mcore/` for megatron, `flash_attention.py` for flash_attn,
  `kernels.py` for triton, any module that defines `@triton.jit` kernels);
- a dependency that the module uses when it is imported: a class base or
  keyword, a decorator, a default value or a module-level statement reads one
  of its names (`class Optimizer8bit(Optimizer2State):`). Such a module is
  built on the dependency and cannot import it later: it is an integration,
  like a module named after it.
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
Only the listed modules are known to be heavy. The rule sees one file: an
import in a module that is itself only imported lazily, or in a package whose
`__init__.py` already imports the dependency (NeMo's `nemo.collections.llm`
requires Megatron-core through its package imports: a recipe that imports
`megatron.core` adds nothing), is reported anyway; a module built on the
dependency is not reported even where a package `__init__.py` imports it
eagerly, which is where that problem lies. A dependency that most modules of
a package import is not treated as required: that needs the whole project,
and on NeMo no package passes a majority (`nemo/collections/llm`: 91 of 260
modules import Megatron-core at module level). Requirements are read only from
the files listed above: other files of `requirements/` are usually extras, and
`install_requires` computed by code other than a call naming `.txt` files is
not followed. The project's metadata is read from disk once per run; a result
cache notices edits to the metadata of the configuration root's project only.
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
        """
        # A bare `except:` guards an optional import too
        # (gpt-neox megatron/model/fused_layer_norm.py).
        try:
            from apex.contrib.layer_norm.layer_norm import FastLayerNormFN

            HAVE_PERSIST_LAYER_NORM = True
        except:
            HAVE_PERSIST_LAYER_NORM = False
        """,
        """
        # The module is built on the dependency: its class derives from one of
        # bitsandbytes' (colossalai colossalai/nn/optimizer/galore.py).
        from bitsandbytes.optim.optimizer import Optimizer2State


        class GaLoreAdamW8bit(Optimizer2State):
            pass
        """,
    )
    invalid = (
        """
        import torch
        import wandb  # expect: RNK302
        from vllm import LLM  # expect: RNK302
        from torch.utils.tensorboard import SummaryWriter  # expect: RNK302
        """,
        """
        # Used only inside a function, and only at import time in an annotation:
        # the import can move into the function (and under TYPE_CHECKING).
        from megatron.core import parallel_state  # expect: RNK302
        from megatron.core.transformer import TransformerConfig  # expect: RNK302


        def data_parallel_size(config: TransformerConfig) -> int:
            return parallel_state.get_data_parallel_world_size()
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
        # The project's own packages, and what its metadata says it requires (read
        # on the first candidate import: most files import nothing heavy).
        self._layout: ProjectLayout | None = None
        # Dependencies whose names the module's own import-time code uses (computed
        # on the first candidate import: most files import nothing heavy).
        self._built_on: set[str] | None = None
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
        name = _dependency(module, self.ctx.settings.heavy_modules)
        if name is None or name in self._own:
            return
        if self._layout is None:
            self._layout = layout_of(self.ctx.path)
        if self._layout.is_own(module) or self._layout.is_required(module):
            return
        if self._built_on is None:
            self._built_on = _built_on(self.ctx.module, self.ctx.settings.heavy_modules)
        if name in self._built_on:
            return
        self.report(
            node,
            f"`{module}` is imported when this module is imported: every rank, data-loader "
            f"worker and test that imports it pays for `{name}` and fails where it is not "
            f"installed; import it inside the function that uses it (or under "
            f"`if TYPE_CHECKING:` for annotations)",
        )


def _dependency(module: str, heavy: frozenset[str]) -> str | None:
    """The heavy dependency that importing ``module`` loads, if any."""
    if module.startswith("torch.utils.tensorboard") and "tensorboard" in heavy:
        return "tensorboard"
    top = module.split(".", 1)[0]
    return top if top in heavy else None


def _built_on(module: cst.Module, heavy: frozenset[str]) -> set[str]:
    """Dependencies a name of which the module uses when it is imported.

    Class bases and keywords, decorators, default values and module-level or
    class-level statements run at import: a module that subclasses a class of
    the dependency cannot import it later; it is an integration of it.
    """
    walk = _ImportTimeNames()
    walk.statements(module.body)
    found = (_dependency(walk.bound[name], heavy) for name in walk.used & walk.bound.keys())
    return {dependency for dependency in found if dependency is not None}


class _ImportTimeNames:
    """Names bound by import-time imports (to their module) and names import-time code reads."""

    def __init__(self) -> None:
        self.bound: dict[str, str] = {}
        self.used: set[str] = set()

    def statements(self, body: Sequence[cst.BaseStatement | cst.BaseSmallStatement]) -> None:
        for statement in body:
            if isinstance(statement, cst.SimpleStatementLine):
                self.statements(statement.body)
            elif isinstance(statement, (cst.Import, cst.ImportFrom)):
                self._bind(statement)
            elif isinstance(statement, cst.FunctionDef):
                self._read(*(d.decorator for d in statement.decorators))
                params = statement.params
                every = (*params.posonly_params, *params.params, *params.kwonly_params)
                self._read(*(p.default for p in every if p.default is not None))
            elif isinstance(statement, cst.ClassDef):
                self._read(*(d.decorator for d in statement.decorators))
                self._read(*(arg.value for arg in (*statement.bases, *statement.keywords)))
                self.statements(_body(statement.body))
            elif isinstance(statement, cst.AnnAssign):
                if statement.value is not None:  # the annotation can wait (TYPE_CHECKING)
                    self._read(statement.value)
            elif isinstance(statement, cst.Assign):
                # `wandb = None`: binding a name is no use of it.
                self._read(statement.value)
                targets = (target.target for target in statement.targets)
                self._read(*(t for t in targets if isinstance(t, (cst.Attribute, cst.Subscript))))
            elif isinstance(statement, cst.If):
                if "TYPE_CHECKING" not in (dotted_name(statement.test) or ""):
                    self._read(statement.test)
                    self.statements(_body(statement.body))
                if statement.orelse is not None:
                    self.statements([statement.orelse])
            elif isinstance(statement, cst.Else):
                self.statements(_body(statement.body))
            elif isinstance(statement, cst.Try):
                self.statements(_body(statement.body))
                for handler in statement.handlers:
                    self.statements(_body(handler.body))
                for part in (statement.orelse, statement.finalbody):
                    if part is not None:
                        self.statements(_body(part.body))
            elif isinstance(statement, cst.With):
                self._read(*(item.item for item in statement.items))
                self.statements(_body(statement.body))
            elif isinstance(statement, cst.CSTNode):
                self._read(statement)

    def _bind(self, node: cst.Import | cst.ImportFrom) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                module = dotted_name(alias.name) or ""
                if alias.asname is not None:
                    self.bound[dotted_name(alias.asname.name) or ""] = module
                else:
                    self.bound[module.split(".", 1)[0]] = module
        elif not node.relative and not isinstance(node.names, cst.ImportStar):
            module = import_from_module(node)
            for alias in node.names:
                target = alias.asname.name if alias.asname is not None else alias.name
                self.bound[dotted_name(target) or ""] = module

    def _read(self, *nodes: cst.CSTNode) -> None:
        collector = _NameCollector(self.used)
        for node in nodes:
            node.visit(collector)


class _NameCollector(cst.CSTVisitor):
    def __init__(self, into: set[str]) -> None:
        self.into = into

    def visit_Name(self, node: cst.Name) -> None:
        self.into.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)  # `obj.wandb` reads `obj`, not a name `wandb`
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)  # nor does a keyword `wandb=...`
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False  # its body runs when called

    def visit_Annotation(self, node: cst.Annotation) -> bool:
        return False


def _body(block: cst.BaseSuite) -> Sequence[cst.BaseStatement | cst.BaseSmallStatement]:
    """The statements of an indented block or of a one-line suite."""
    return block.body


# Other names under which projects name their integration with a dependency.
_ALIASES: dict[str, tuple[str, ...]] = {
    "flash_attn": ("flash",),
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


# Handlers that catch a failed import: the import is an optional-import guard.
_IMPORT_GUARDS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def _catches_import_error(node: cst.Try) -> bool:
    for handler in node.handlers:
        kind = handler.type
        if kind is None:  # a bare `except:`
            return True
        names = [kind] if not isinstance(kind, cst.Tuple) else [e.value for e in kind.elements]
        for name in names:
            if dotted_name(name) in _IMPORT_GUARDS:
                return True
    return False
