"""RNK603 unmarked-distributed-test."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ranklint.analysis.context import FileContext
from ranklint.analysis.literals import string_value
from ranklint.analysis.names import dotted_name
from ranklint.findings import Severity
from ranklint.rules.base import PendingFinding
from ranklint.rules.testsuite.test_rules import _TestRule

_SPAWNS = frozenset(
    {
        "torch.distributed.init_process_group",
        "torch.distributed.distributed_c10d.init_process_group",
        "torch.distributed.device_mesh.init_device_mesh",
        "torch.distributed.init_device_mesh",
        "torch.multiprocessing.spawn",
        "torch.multiprocessing.start_processes",
        "torch.distributed.launcher.api.elastic_launch",
    }
)

_CUDA_FINE = frozenset({"torch.cuda.is_available", "torch.cuda.device_count"})

_SKIP_CALLS = frozenset({"pytest.skip", "pytest.importorskip", "unittest.SkipTest"})


class UnmarkedDistributedTest(_TestRule):
    code = "RNK603"
    name = "unmarked-distributed-test"
    severity = Severity.WARNING
    summary = "A test starts process groups or uses an accelerator without a marker or skip"
    what = """\
Reports test functions (`test_*`) in test files that initialise a process
group or device mesh, spawn ranks (`torch.multiprocessing.spawn` /
`start_processes`), or use an accelerator (`torch.cuda.*` calls other than
`is_available`/`device_count`, `.cuda()`, `"cuda"` devices), with none of:
a marker named in `distributed-markers` (default `distributed`, `gpu`,
`cuda`, `multigpu`, ...) on the function, its class or the module
(`pytestmark`); a skip condition (`skipif`, `skipIf`/`skipUnless`, a decorator
named `skip*`, `requires*` or `*gpu*`); a harness decorator whose name
mentions `dist` (`@dist_init`); a test class deriving from a multi-process or
distributed test case (`MultiProcessTestCase`, `DistributedTestBase`,
`FSDPTest`, `DTensorTestBase`); or a
skip in the body (`pytest.skip`, `self.skipTest`, a check of
`torch.cuda.is_available()`).
"""
    why = """\
CI picks suites by marker: an unmarked distributed test runs in the CPU unit
job, where it hangs until the job's timeout or fails for want of a GPU, and is
then skipped wholesale or deleted. A marker or an explicit skip condition
keeps it running where it can.
"""
    limits = """\
Only what the test function itself calls is seen, not its helpers. Torch's own
test decorators are recognised by name (`skip_if_lt_x_gpu`, `requires_nccl`).
"""
    valid = (
        """
        import pytest
        import torch
        import torch.distributed as dist


        @pytest.mark.distributed
        def test_all_reduce(tmp_path):
            dist.init_process_group("gloo", init_method=f"file://{tmp_path}/s", rank=0)


        @pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
        def test_on_gpu():
            torch.ones(2).cuda()
        """,
    )
    invalid = (
        """
        import torch
        import torch.distributed as dist


        def test_all_reduce(tmp_path):  # expect: RNK603
            dist.init_process_group("gloo", init_method=f"file://{tmp_path}/s", rank=0)


        def test_on_gpu():  # expect: RNK603
            torch.ones(2, device="cuda")
        """,
    )

    def __init__(self, ctx: FileContext, sink: Callable[[PendingFinding], None]) -> None:
        super().__init__(ctx, sink)
        self._module_marked = self.active and _module_marked(ctx)
        self._tests: list[tuple[cst.FunctionDef, tuple[cst.CSTNode | None, ...], list[str]]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if not self.active or self._module_marked or self._tests:
            return
        if not node.name.value.startswith("test"):
            return
        classes = self.ctx.classes
        decorators = [*node.decorators, *(d for c in classes[-1:] for d in c.decorators)]
        if any(self._marks(d.decorator) for d in decorators):
            return
        if classes and any(_distributed_base(arg.value) for arg in classes[-1].bases):
            return  # a multi-process test case class runs its tests in ranks it manages
        self._tests.append((node, self.here(), []))

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        if not self._tests or self._tests[-1][0] is not node:
            return
        test, where, uses = self._tests.pop()
        if uses and "skip" not in uses:
            self.report(
                test.name,
                f"`{test.name.value}` {uses[0]} but has no `distributed`/accelerator marker or "
                f"skip condition: the CPU unit job runs it and it hangs or fails there; mark it "
                f"(`@pytest.mark.distributed`) or skip it when the hardware is missing",
                where=where,  # type: ignore[arg-type]
            )

    def visit_Call(self, node: cst.Call) -> None:
        if not self._tests:
            return
        uses = self._tests[-1][2]
        func = node.func
        name = self.ctx.names.resolve(func) or ""
        if (
            name in _SKIP_CALLS
            or name in _CUDA_FINE
            or (isinstance(func, cst.Attribute) and func.attr.value == "skipTest")
        ):
            uses.append("skip")
        elif name in _SPAWNS:
            uses.append(f"starts ranks (`{name.rsplit('.', 1)[-1]}`)")
        elif name.startswith("torch.cuda."):
            uses.append(f"uses the accelerator (`{name}`)")
        elif isinstance(func, cst.Attribute) and func.attr.value == "cuda" and not node.args:
            uses.append("uses the accelerator (`.cuda()`)")
        else:
            for arg in node.args:
                value = string_value(arg.value)
                if (
                    value is not None
                    and value.startswith("cuda")
                    and (arg.keyword is None or arg.keyword.value == "device")
                    and (arg.keyword is not None or name in ("torch.device",) or _is_to(func))
                ):
                    uses.append('uses the accelerator (`"cuda"`)')
                    break

    def _marks(self, decorator: cst.BaseExpression) -> bool:
        target = decorator.func if isinstance(decorator, cst.Call) else decorator
        name = dotted_name(target) or ""
        last = name.rsplit(".", 1)[-1]
        markers = self.ctx.settings.distributed_markers
        lowered = last.lower()
        return (
            last in markers
            or lowered.startswith(("skip", "requires", "require_"))
            or "gpu" in lowered
            or "dist" in lowered  # harness decorators: `@dist_init`, `@with_dist`
        )


def _distributed_base(node: cst.BaseExpression) -> bool:
    name = (dotted_name(node) or "").rsplit(".", 1)[-1].lower()
    return any(word in name for word in _DISTRIBUTED_BASE_WORDS)


# Test case base classes that run their tests in ranks they start themselves
# (`MultiProcessTestCase`, `DistributedTestBase`, `FSDPTest`, `DTensorTestBase`).
_DISTRIBUTED_BASE_WORDS = ("multiprocess", "multithread", "distributed", "fsdp", "dtensor")


def _is_to(func: cst.BaseExpression) -> bool:
    return isinstance(func, cst.Attribute) and func.attr.value == "to"


def _module_marked(ctx: FileContext) -> bool:
    """``pytestmark = ...`` at module level naming a marker or a skip condition."""
    for statement in ctx.module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assign) and any(
                isinstance(t.target, cst.Name) and t.target.value == "pytestmark"
                for t in small.targets
            ):
                text = ctx.module.code_for_node(small.value)
                markers = ctx.settings.distributed_markers
                if "skip" in text or any(f".{marker}" in text for marker in markers):
                    return True
    return False
