"""RNK604 mocked-sharding-internals."""

from __future__ import annotations

import libcst as cst

from ranklint.analysis.walk.literals import string_value
from ranklint.analysis.walk.names import dotted_name
from ranklint.findings import Severity
from ranklint.rules.testsuite._test_rule import _TestRule

_DISTRIBUTED = "torch.distributed."

# Modules whose private parts are the sharding machinery: a patch anywhere
# under a `_` component there replaces what FSDP / DTensor / DeviceMesh do.
_SHARDING_MODULES = (
    "torch.distributed.fsdp",
    "torch.distributed.tensor",
    "torch.distributed._tensor",
    "torch.distributed._composable",
    "torch.distributed.device_mesh",
)

# Where torch kept public APIs before they moved (`torch.distributed._tensor.DTensor`
# before 2.4, `torch.distributed._composable.fsdp.fully_shard` before 2.6): a
# private first component there still names a public object.
_LEGACY_PUBLIC_HOMES = frozenset({"_tensor", "_composable"})

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
    summary = "A test mocks private FSDP, DTensor or DeviceMesh internals"
    default_enabled = False
    what = """\
Reports, in test files, `mock.patch(...)` / `mock.patch.object(...)` /
`monkeypatch.setattr(...)` whose target is a private part of
`torch.distributed`: a `_`-prefixed attribute of any `torch.distributed`
module or class (`DTensor._op_dispatcher`,
`torch.distributed.distributed_c10d._get_default_group`), or anything inside a
private module of the sharding packages (`torch.distributed.fsdp._*`,
`torch.distributed.tensor._*`, `torch.distributed._composable.fsdp._*`,
`torch.distributed.device_mesh._*`), by string or by object and attribute
name.

Stubbing a public entry point or method (`fully_shard`,
`FullyShardedDataParallel`, `init_device_mesh`, `DistributedDataParallel`,
`init_process_group`, `DeviceMesh.get_group`) to test the project's own
orchestration (which arguments it passes, that it calls it at all) is fine
and not reported.

A convention, off by default: opt in with `extend-select = ["RNK604"]` in
`[tool.ranklint]`. On the review corpus (docs/dev/ecosystem-review.md) all 8
findings of the earlier version were stubs of public FSDP entry points.
"""
    why = """\
A test that patches the private sharding machinery tests the mock: the
semantics under test (what is gathered when, which placements result, which
group a collective uses) are exactly what the mock replaces, and private names
change between torch releases without deprecation, so the test keeps passing
against behaviour torch no longer has, or breaks for no reason. Unit-level
distributed behaviour runs fine on the fake process group (construction,
shapes, plumbing) or on a few gloo processes (values).
"""
    limits = """\
Patches through helper fixtures of the project are not recognised. Dunder
attributes (`__init__`) count as public: patching a constructor stubs the
entry point. Public functions that torch keeps only in a private module
outside the sharding packages
(`torch.distributed.algorithms._checkpoint.checkpoint_wrapper.apply_activation_checkpointing`)
are not reported: there is no public path to patch instead.
"""
    runtime_check = """\
Instead of mocking FSDP2 or DTensor internals, run the real thing on simulated
CPU ranks: threads mode moves real data between ranks, in milliseconds.

```python
import torch
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from ranklint.runtime import run_ranks


# Instead of mocking FSDP2's internals, shard a real model on simulated ranks.
def shard(rank, world_size):
    mesh = init_device_mesh("cpu", (world_size,))
    model = torch.nn.Linear(8, 4)
    fully_shard(model, mesh=mesh)
    return tuple(model.weight.to_local().shape)


assert run_ranks(shard, 2) == [(2, 8), (2, 8)]
```
"""
    valid = (
        """
        from unittest import mock


        def test_strategy_wraps_the_model():
            with mock.patch("torch.distributed.fsdp.fully_shard") as shard:
                pass
            assert shard.called
        """,
        """
        from unittest import mock

        from torch.distributed.device_mesh import DeviceMesh


        # pytorch-lightning tests/tests_fabric/strategies/test_fsdp.py: public entry
        # points stubbed to check the arguments the strategy passes.
        def test_fsdp_gets_the_device(monkeypatch):
            with mock.patch("torch.distributed.fsdp.FullyShardedDataParallel", new=mock.MagicMock):
                pass
            with mock.patch("torch.distributed.fsdp.wrap.enable_wrap"):
                pass
            with mock.patch.object(DeviceMesh, "get_group"):
                pass
            monkeypatch.setattr("torch.distributed.init_process_group", mock.Mock())
        """,
        """
        from unittest import mock

        from torch.distributed.algorithms._checkpoint import checkpoint_wrapper


        # pytorch-lightning tests/tests_fabric/strategies/test_fsdp.py: a public
        # function that torch keeps only in a private module.
        def test_activation_checkpointing_is_applied():
            with mock.patch.object(checkpoint_wrapper, "apply_activation_checkpointing"):
                pass
        """,
    )
    invalid = (
        """
        from unittest import mock

        from torch.distributed.tensor import DTensor


        def test_sharding(monkeypatch):
            with mock.patch("torch.distributed.fsdp._runtime_utils._lazy_init"):  # expect: RNK604
                pass
            with mock.patch.object(DTensor, "_op_dispatcher"):  # expect: RNK604
                pass
            monkeypatch.setattr("torch.distributed.distributed_c10d._world", None)  # expect: RNK604
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not self.active or not node.args:
            return
        func = node.func
        name = self.ctx.names.resolve(func)
        dotted = dotted_name(func) or ""
        is_patch = name in _PATCHERS or dotted in ("patch", "patch.object")
        is_setattr = dotted.endswith("monkeypatch.setattr")
        if not (is_patch or is_setattr or (name or "").endswith("mock.patch.object")):
            return
        target = self._target(node)
        if target is not None and _private_sharding_target(target):
            self.report(
                node,
                f"the test patches `{target}`, a private part of torch.distributed: it tests "
                f"the mock, not the sharding semantics it replaces, and breaks or passes "
                f"wrongly when torch changes its internals; run the code on the fake process "
                f"group or a few gloo ranks instead",
            )

    def _target(self, node: cst.Call) -> str | None:
        """The dotted name patched: `"a.b.c"`, or `obj, "attr"` resolved to `a.b.obj.attr`."""
        first = node.args[0].value
        target = string_value(first)
        if target is not None:
            return target
        owner = self.ctx.names.resolve(first)
        if owner is None:
            return None
        if len(node.args) > 1 and node.args[1].keyword is None:
            attribute = string_value(node.args[1].value)
            if attribute is not None:
                return f"{owner}.{attribute}"
        return owner


def _private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def _private_sharding_target(target: str) -> bool:
    if not target.startswith(_DISTRIBUTED):
        return False
    parts = target[len(_DISTRIBUTED) :].split(".")
    if _private(parts[-1]):
        return True  # `_get_default_group`, `DTensor._op_dispatcher`
    if not target.startswith(_SHARDING_MODULES):
        return False
    inner = parts[1:] if parts[0] in _LEGACY_PUBLIC_HOMES else parts
    return any(_private(part) for part in inner)
