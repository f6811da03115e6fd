"""RNK111 import-time-distributed-state."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ranklint.analysis.walk.context import FileContext
from ranklint.analysis.walk.definitions import self_attribute
from ranklint.analysis.walk.dist_state import (
    ModuleHelpers,
    is_init_call,
    runs_as_script,
    state_read,
)
from ranklint.findings import Evidence, Severity
from ranklint.rules.base import PendingFinding, Rule
from ranklint.rules.collectives._evidence import entry_context_link

# (simple statement line, module-level statement) of a call, for a later report.
_Place = tuple[cst.CSTNode | None, cst.CSTNode | None]


class ImportTimeDistributedState(Rule):
    code = "RNK111"
    name = "import-time-distributed-state"
    severity = Severity.WARNING
    default_enabled = False
    summary = "The rank or world size is read once, before the run has one"
    what = """\
Reports two ways of reading distributed state too early:

- a module-level (or class-level) assignment in an importable module that
  stores the rank, the world size or whether a group exists: from
  `os.environ["RANK"]` / `LOCAL_RANK` / `WORLD_SIZE` (also `.get`, `getenv`,
  `"WORLD_SIZE" in os.environ`), from `dist.get_rank()`,
  `dist.get_world_size()`, `dist.is_initialized()`, or from a function of the
  same module that reads them (`rank_zero_only.rank = _get_rank()`);
- a call, before `init_process_group()` in the same function, of a helper of
  the same module that falls back to a default rank when no group exists
  (`dist.get_rank() if dist.is_initialized() else 0`);
- such a helper's answer stored on the object in `__init__` of a dataset or
  data module (a class named `...Dataset` or `...DataModule`), which the
  launching script builds before the trainer creates the group.
"""
    why = """\
A module is imported once per process, often before the launcher's work is
done: `mp.spawn` children import the parent's modules with the parent's
environment, custom launchers and `init_method="tcp://..."` set no `RANK`,
and tests import everything in one process. The stored value is then the
import's, not the run's: every spawned rank keeps rank 0 and logs, saves
and downloads as the leader (Lightning#19030), or `distributed` stays
False for the whole job (apex#619). A rank helper with a "not initialized"
fallback called before `init_process_group` answers 0 on every rank
(torchtune#2964).

Fix: read the state when it is needed (a function that asks
`dist.get_rank()` each time, or a value set after `init_process_group`),
and initialise the group before the first call that needs the rank.
"""
    limits = """\
A stored read that is only the default of a value the run may already have
set (`rank_zero_only.rank = getattr(rank_zero_only, "rank", _get_rank())`)
is not reported. Entry scripts are not reported: files matching `script-patterns`
and modules with an `if __name__ == "__main__":` block, top-level argument
parsing, a top-level `sys.exit()` or backward pass, or a file name no `import`
can name (`test-t5.py`), where module-level code runs once per launched
process. Helpers are
followed within the same module only. A value captured in `__init__` of
other objects is not reported (they may well be built after the group
exists: the order is the run's, which a linter cannot tell).
"""
    tiers = """\
Each finding records where the module runs (**context**). Library code is
high. A test module (`test_*.py`, `*_test.py`, `conftest.py`) is medium: a
launcher may run it as its program (`torchrun -m pytest`), whose module level
then runs once per launched process, as the run.
"""
    valid = (
        """
        import torch.distributed as dist


        def get_rank() -> int:
            return dist.get_rank() if dist.is_initialized() else 0


        class CachedDataset:
            def __init__(self, labels, rank: int) -> None:
                self.rank = rank  # given by the trainer, after the group exists

            def shard(self) -> int:
                return get_rank()  # read when it is used


        class Logger:
            def __init__(self) -> None:
                self.rank = get_rank()  # not a dataset: may be built after init
        """,
        """
        import os

        import torch.distributed as dist


        def get_rank() -> int:
            # Read each time it is needed.
            if dist.is_available() and dist.is_initialized():
                return dist.get_rank()
            return int(os.environ.get("RANK", "0"))


        DEFAULT_TIMEOUT = int(os.environ.get("NCCL_TIMEOUT", "600"))
        """,
        """
        import os

        import torch.distributed as dist

        # An entry script: its module level runs once per launched process.
        LOCAL_RANK = int(os.environ["LOCAL_RANK"])


        def main() -> None:
            dist.init_process_group("nccl")


        if __name__ == "__main__":
            main()
        """,
        """
        import torch.distributed as dist


        def log_rank_zero(msg: str) -> None:
            rank = dist.get_rank() if dist.is_initialized() else 0
            if rank == 0:
                print(msg)


        def main(cfg) -> None:
            dist.init_process_group("nccl")
            log_rank_zero(str(cfg))
        """,
    )
    invalid = (
        """
        import os

        import torch.distributed as dist

        # https://github.com/NVIDIA/apex/issues/619
        distributed = False
        if "WORLD_SIZE" in os.environ:
            distributed = int(os.environ["WORLD_SIZE"]) > 1  # expect: RNK111
        RANK = dist.get_rank() if dist.is_initialized() else 0  # expect: RNK111
        """,
        """
        import os


        def _get_rank() -> int:
            return int(os.environ.get("RANK", 0))


        def rank_zero_only(fn):
            return fn if rank_zero_only.rank == 0 else (lambda *a, **k: None)


        # https://github.com/Lightning-AI/pytorch-lightning/pull/19030
        rank_zero_only.rank = _get_rank()  # expect: RNK111
        """,
        """
        import torch.distributed as dist


        def log_rank_zero(msg: str) -> None:
            rank = dist.get_rank() if dist.is_initialized() else 0
            if rank == 0:
                print(msg)


        def main(cfg) -> None:
            # https://github.com/meta-pytorch/torchtune/pull/2964
            log_rank_zero(str(cfg))  # expect: RNK111
            dist.init_process_group("nccl")
        """,
        """
        import torch.distributed as dist


        def get_rank() -> int:
            return dist.get_rank() if dist.is_initialized() else 0


        class CachedDataset:
            def __init__(self, labels) -> None:
                # https://github.com/talmolab/sleap-nn/pull/184
                self.rank = get_rank()  # expect: RNK111
        """,
    )

    def __init__(self, ctx: FileContext, sink: Callable[[PendingFinding], None]) -> None:
        super().__init__(ctx, sink)
        self._off: bool | None = True if ctx.is_script else None
        self._helpers: ModuleHelpers | None = None
        # Per enclosing function: calls of module functions by name, with their place.
        self._calls: list[list[tuple[cst.Call, str, _Place]]] = []

    def _module(self) -> ModuleHelpers | None:
        """The module's helpers (read once its imports are bound); None in entry scripts."""
        ctx = self.ctx
        if self._off is None:
            self._off = runs_as_script(ctx.module, ctx.resolve, ctx.path)
        if self._off:
            return None
        if self._helpers is None:
            self._helpers = ModuleHelpers(ctx.module, ctx.resolve)
        return self._helpers

    def visit_Assign(self, node: cst.Assign) -> None:
        self._stored(node.value)
        self._captured(node)

    def _captured(self, node: cst.Assign) -> None:
        """``self.rank = get_rank()`` in ``__init__`` of a dataset, through a 0 fallback.

        Datasets are built in the launching script or a data module's
        ``__init__``, before the trainer creates the process group: the helper
        answers 0 there, on every rank, and the object keeps it (sleap-nn#184).
        """
        frame = self.ctx.function
        if (
            frame is None
            or not isinstance(frame.node, cst.FunctionDef)
            or frame.node.name.value != "__init__"
            or not (frame.class_name or "").endswith(_BUILT_EARLY)
            or not isinstance(node.value, cst.Call)
            or not isinstance(node.value.func, cst.Name)
            or not any(self_attribute(target.target) is not None for target in node.targets)
        ):
            return
        helpers = self._module()
        name = node.value.func.value
        if helpers is not None and helpers.falls_back(name):
            self.report(
                node.value,
                f"`{name}()` is read once, when the {frame.class_name} is built, and falls back "
                f"to rank 0 when no group exists: a dataset built before `init_process_group` "
                f"(in the launching script, before the trainer starts) keeps rank 0 on every "
                f"rank; read the rank when it is used, or build the object after the group exists",
                evidence=Evidence(context=entry_context_link(self.ctx.path)),
            )

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._stored(node.value)

    def _stored(self, value: cst.BaseExpression) -> None:
        ctx = self.ctx
        if self._off or not (ctx.import_time and ctx.reachable) or ctx.functions:
            return
        helpers = self._module()
        if helpers is None or _keeps_run_value(value):
            return
        read = state_read(value, ctx.resolve, helpers)
        if read is None:
            return
        self.report(
            value,
            f"stores `{read}` when the module is imported: the value is the import's, not the "
            f"run's (0 or unset in `mp.spawn` children, under custom launchers and before "
            f"`init_process_group`); read it where it is needed, after the group exists",
            evidence=Evidence(context=entry_context_link(self.ctx.path)),
        )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._calls.append([])

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._calls.pop()

    def visit_Call(self, node: cst.Call) -> None:
        if not self._calls or self._off:
            return
        if isinstance(node.func, cst.Name):
            self._calls[-1].append((node, node.func.value, self.here()))
            return
        if not is_init_call(node, self.ctx.resolve):
            return
        helpers = self._module()
        if helpers is None:
            return
        # Calls made earlier in this function, of a helper that assumes rank 0.
        for call, name, where in self._calls[-1]:
            if helpers.falls_back(name):
                self.report(
                    call,
                    f"`{name}()` reads the rank before `init_process_group()` below, and falls "
                    f"back to rank 0 when no group exists: every rank acts as rank 0 here (logs, "
                    f"saves, downloads); initialise the group first, or fall back to "
                    f"`os.environ['RANK']`",
                    where=where,
                )
        self._calls[-1].clear()


# Classes built before the trainer creates the process group.
_BUILT_EARLY = ("Dataset", "DataModule")


def _keeps_run_value(value: cst.BaseExpression) -> bool:
    """``getattr(fn, "rank", _get_rank())``: the read is only a default for a value the run sets."""
    return (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Name)
        and value.func.value == "getattr"
        and len(value.args) == 3
    )
