"""Test rules (RNK6xx): apply to files matching `test-patterns` only."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import libcst as cst

from ranklint.analysis.context import FileContext
from ranklint.analysis.names import dotted_name
from ranklint.findings import Severity
from ranklint.rules.base import PendingFinding, Rule
from ranklint.rules.portability import string_value


class _TestRule(Rule):
    example_path: ClassVar[str] = "tests/test_example.py"

    def __init__(self, ctx: FileContext, sink: Callable[[PendingFinding], None]) -> None:
        super().__init__(ctx, sink)
        self.active = ctx.is_test


# qualified name -> number of positional parameters before rtol, atol
_TOLERANT = {
    "torch.allclose": 2,
    "torch.isclose": 2,
    "torch.testing.assert_close": None,
    "torch.testing.assert_allclose": 2,
    "numpy.allclose": 2,
    "numpy.isclose": 2,
    "numpy.testing.assert_allclose": 2,
}


class TensorCompareWithoutTolerance(_TestRule):
    code = "RNK601"
    name = "tensor-compare-without-tolerance"
    severity = Severity.WARNING
    summary = "A tensor comparison in a test leaves rtol or atol implicit"
    what = """\
Reports, in test files, `torch.allclose`, `torch.isclose`,
`torch.testing.assert_close`, `torch.testing.assert_allclose`,
`numpy.allclose`, `numpy.isclose`, `numpy.testing.assert_allclose` and the
`.allclose()` / `.isclose()` tensor methods called without both `rtol` and
`atol` (by keyword or position).
"""
    why = """\
Default tolerances depend on the dtype and the function (`allclose` uses
`rtol=1e-5, atol=1e-8`, `assert_close` picks per dtype, numpy's
`assert_allclose` has `atol=0`): a sharded or reduced-precision result that
is fine fails, or one that is wrong passes, and nobody reading the test can
tell which tolerance was meant. Distributed results differ from single-process
ones by reduction order: the tolerance is part of what the test claims.
"""
    limits = """\
Calls through aliases of these functions are not recognised.
"""
    valid = (
        """
        import torch


        def test_sharded_matches_reference(got, expected):
            torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6)
            assert torch.allclose(got, expected, 1e-5, 1e-6)
        """,
    )
    invalid = (
        """
        import numpy as np
        import torch


        def test_sharded_matches_reference(got, expected):
            torch.testing.assert_close(got, expected)  # expect: RNK601
            assert torch.allclose(got, expected, atol=1e-6)  # expect: RNK601
            assert got.allclose(expected)  # expect: RNK601
            np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-5)  # expect: RNK601
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not self.active:
            return
        func = node.func
        name = self.ctx.names.resolve(func)
        if name is not None and name in _TOLERANT:
            before = _TOLERANT[name]
            label = name
        elif (
            name is None
            and isinstance(func, cst.Attribute)
            and func.attr.value in ("allclose", "isclose")
        ):
            before, label = 1, f".{func.attr.value}"
        else:
            return
        keywords = {arg.keyword.value for arg in node.args if arg.keyword is not None}
        positional = sum(1 for arg in node.args if arg.keyword is None and not arg.star)
        if any(arg.star == "**" for arg in node.args):
            return
        have = set(keywords)
        if before is not None:
            if positional > before:
                have.add("rtol")
            if positional > before + 1:
                have.add("atol")
        missing = [word for word in ("rtol", "atol") if word not in have]
        if missing:
            self.report(
                node,
                f"`{label}()` without explicit {' and '.join(f'`{m}`' for m in missing)}: the "
                f"defaults depend on the function and dtype, so the test's claim is unclear; "
                f"pass both `rtol=` and `atol=`",
            )


_PYTEST_SKIPS = frozenset({"pytest.mark.skip", "pytest.mark.skipif"})


class SkipWithoutReason(_TestRule):
    code = "RNK602"
    name = "skip-without-reason"
    severity = Severity.WARNING
    summary = "A test is skipped without saying why"
    what = """\
Reports, in test files, `@pytest.mark.skip` / `@pytest.mark.skipif(...)`
without `reason=`, `pytest.skip()` without a message, and bare
`@unittest.skip` (without a reason).
"""
    why = """\
A skip without a reason reads as "broken, ignore": nobody knows whether the
test can run again, on which machine, or after which fix. Distributed tests
are skipped for concrete reasons (no GPU, fewer than 8 ranks, no NCCL): say
which, so that the CI report tells what was not tested.
"""
    limits = """\
Skips through helper decorators of the project are not recognised.
"""
    valid = (
        """
        import pytest
        import torch


        @pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
        def test_on_gpu():
            pytest.skip("NCCL is not built in")
        """,
    )
    invalid = (
        """
        import unittest

        import pytest


        @pytest.mark.skip  # expect: RNK602
        def test_later():
            pytest.skip()  # expect: RNK602


        @pytest.mark.skipif(True)  # expect: RNK602
        def test_flaky():
            pass


        class Test(unittest.TestCase):
            @unittest.skip  # expect: RNK602
            def test_old(self):
                pass
        """,
    )

    def visit_Decorator(self, node: cst.Decorator) -> None:
        if not self.active:
            return
        decorator = node.decorator
        call = decorator if isinstance(decorator, cst.Call) else None
        name = self.ctx.names.resolve(call.func if call is not None else decorator)
        if name in _PYTEST_SKIPS:
            reason = call is not None and any(
                arg.keyword is not None and arg.keyword.value == "reason" for arg in call.args
            )
            if name == "pytest.mark.skip" and call is not None:
                reason = reason or any(arg.keyword is None for arg in call.args)
            if not reason:
                self._report(node.decorator, f"`@{name}`")
        elif name == "unittest.skip" and call is None:
            self._report(node.decorator, "`@unittest.skip`")

    def visit_Call(self, node: cst.Call) -> None:
        if not self.active:
            return
        if self.ctx.names.resolve(node.func) == "pytest.skip" and not node.args:
            self._report(node, "`pytest.skip()`")

    def _report(self, node: cst.CSTNode, what: str) -> None:
        self.report(
            node,
            f"{what} without a reason: the report cannot say what was not tested or when it "
            f'can run again; give the reason (`reason="needs 8 GPUs"`)',
        )


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


_SHARDING_MODULES = (
    "torch.distributed.fsdp",
    "torch.distributed.tensor",
    "torch.distributed._tensor",
    "torch.distributed._composable",
    "torch.distributed.device_mesh",
)
_PATCHERS = frozenset(
    {
        "unittest.mock.patch",
        "unittest.mock.patch.object",
        "mock.patch",
        "mock.patch.object",
        "pytest.MonkeyPatch.setattr",
    }
)


class MockedShardingInternals(_TestRule):
    code = "RNK604"
    name = "mocked-sharding-internals"
    severity = Severity.WARNING
    summary = "A test mocks FSDP, DTensor or DeviceMesh internals"
    what = """\
Reports, in test files, `mock.patch(...)` / `mock.patch.object(...)` /
`monkeypatch.setattr(...)` whose target is in `torch.distributed.fsdp`,
`torch.distributed.tensor` (DTensor), `torch.distributed._composable` or
`torch.distributed.device_mesh` (`DeviceMesh`), by string or by object.
"""
    why = """\
A test that patches the sharding machinery tests the mock: the semantics under
test (what is gathered when, which placements result, which group a collective
uses) are exactly what the mock replaces, and the test keeps passing when torch
changes them. Unit-level distributed behaviour runs fine on the fake process
group (construction, shapes, plumbing) or on a few gloo processes (values).
"""
    limits = """\
Patches through helper fixtures of the project are not recognised.
"""
    valid = (
        """
        from unittest import mock


        def test_retries_on_timeout():
            with mock.patch("mypkg.io.fetch", side_effect=[TimeoutError, b"ok"]):
                pass
        """,
    )
    invalid = (
        """
        from unittest import mock

        from torch.distributed.device_mesh import DeviceMesh


        def test_sharding(monkeypatch):
            with mock.patch("torch.distributed.fsdp.fully_shard"):  # expect: RNK604
                pass
            with mock.patch.object(DeviceMesh, "get_group"):  # expect: RNK604
                pass
            target = "torch.distributed.tensor.DTensor.full_tensor"
            monkeypatch.setattr(target, None)
            monkeypatch.setattr("torch.distributed.fsdp.FSDPModule.reshard", None)  # expect: RNK604
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not self.active or not node.args:
            return
        func = node.func
        name = self.ctx.names.resolve(func)
        dotted = dotted_name(func) or ""
        is_patch = name in _PATCHERS or dotted in ("patch", "patch.object")
        is_setattr = dotted.endswith("monkeypatch.setattr") or dotted == "monkeypatch.setattr"
        if not (is_patch or is_setattr or (name or "").endswith("mock.patch.object")):
            return
        first = node.args[0].value
        target = string_value(first)
        if target is None:
            target = self.ctx.names.resolve(first)
        if target is None:
            return
        if target.startswith(_SHARDING_MODULES) or target.rsplit(".", 1)[-1] == "DeviceMesh":
            self.report(
                node,
                f"the test patches `{target}`: it tests the mock, not the sharding semantics "
                f"it replaces; run the code on the fake process group or a few gloo ranks "
                f"instead",
            )
