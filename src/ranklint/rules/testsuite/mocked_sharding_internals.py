"""RNK604 mocked-sharding-internals."""

from __future__ import annotations

import libcst as cst

from ranklint.analysis.literals import string_value
from ranklint.analysis.names import dotted_name
from ranklint.findings import Severity
from ranklint.rules.testsuite.test_rules import _TestRule

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
