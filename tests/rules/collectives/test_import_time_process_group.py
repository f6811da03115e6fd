"""RNK101: what counts as import time, through every import form."""

from __future__ import annotations

import pytest

from tests.conftest import codes_by_line

SELECT = ("RNK101",)


@pytest.mark.parametrize(
    ("import_line", "call"),
    [
        ("import torch.distributed as dist", "dist.new_group([0, 1])"),
        ("from torch import distributed as d", "d.new_group([0, 1])"),
        ("from torch.distributed import new_group as ng", "ng([0, 1])"),
        ("import torch", "torch.distributed.new_group([0, 1])"),
        ("import torch.distributed", "torch.distributed.new_group([0, 1])"),
        ("from torch.distributed.distributed_c10d import new_group", "new_group([0, 1])"),
        ("from torch.distributed import *", "new_group([0, 1])"),
    ],
)
def test_module_level_call_with_any_import_form_is_reported(import_line: str, call: str) -> None:
    source = f"{import_line}\n{call}\n"

    assert codes_by_line(source, select=SELECT) == [(2, "RNK101")]


@pytest.mark.parametrize(
    "wrapper",
    [
        "if True:\n    {call}",
        "try:\n    {call}\nexcept RuntimeError:\n    pass",
        "with open('x') as f:\n    {call}",
        "for _ in range(1):\n    {call}",
        "while False:\n    {call}",
        "class Holder:\n    group = {call}",
        "class Outer:\n    class Inner:\n        group = {call}",
        "def f(group={call}):\n    pass",
        "f = lambda group={call}: group",
        "@decorate({call})\ndef f():\n    pass",
        "@decorate({call})\nclass C:\n    pass",
        "class C:\n    def method(self, group={call}):\n        pass",
        "groups = [{call} for _ in range(2)]",
        "if __name__ != '__main__':\n    {call}",
        "if __name__ == '__main__':\n    pass\nelse:\n    {call}",
    ],
)
def test_call_in_import_time_context_is_reported(wrapper: str) -> None:
    body = wrapper.format(call="dist.new_group([0, 1])")
    source = f"import torch.distributed as dist\n{body}\n"

    findings = codes_by_line(source, select=SELECT)

    assert [code for _, code in findings] == ["RNK101"]


@pytest.mark.parametrize(
    "wrapper",
    [
        "def setup():\n    {call}",
        "async def setup():\n    {call}",
        "class C:\n    def method(self):\n        {call}",
        "def outer():\n    class Local:\n        group = {call}",
        "make = lambda: {call}",
        "if __name__ == '__main__':\n    {call}",
        "if '__main__' == __name__:\n    {call}",
        "if __name__ != '__main__':\n    pass\nelse:\n    {call}",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    {call}",
        "import typing\nif typing.TYPE_CHECKING:\n    {call}",
    ],
)
def test_call_outside_import_time_is_not_reported(wrapper: str) -> None:
    body = wrapper.format(call="dist.new_group([0, 1])")
    source = f"import torch.distributed as dist\n{body}\n"

    assert codes_by_line(source, select=SELECT) == []


@pytest.mark.parametrize(
    "call",
    [
        "dist.init_process_group('nccl')",
        "dist.new_group([0])",
        "dist.new_subgroups()",
        "dist.new_subgroups_by_enumeration([[0, 1]])",
        "torch.distributed.device_mesh.init_device_mesh('cuda', (2,))",
        "torch.distributed.device_mesh.DeviceMesh('cuda', [0, 1])",
        "torch.distributed.device_mesh.DeviceMesh.from_group(g, 'cuda')",
        "deepspeed.init_distributed()",
        "deepspeed.comm.init_distributed()",
    ],
)
def test_every_catalogued_group_creation_call_is_reported(call: str) -> None:
    source = f"import torch\nimport torch.distributed as dist\nimport deepspeed\n{call}\n"

    assert codes_by_line(source, select=SELECT) == [(4, "RNK101")]


@pytest.mark.parametrize(
    "source",
    [
        # shadowed by a local definition
        "from torch.distributed import new_group\ndef new_group(r):\n    return r\nnew_group([0])",
        # shadowed by an assignment
        "import torch.distributed as dist\ndist = FakeDist()\ndist.new_group([0])",
        # not torch at all
        "import mylib\nmylib.new_group([0])",
        # a free name without any import
        "new_group([0])",
        # rank-invariant queries are not group creation
        "import torch.distributed as dist\nREADY = dist.is_initialized()",
    ],
)
def test_unrelated_or_shadowed_names_are_not_reported(source: str) -> None:
    assert codes_by_line(source, select=SELECT) == []


def test_optional_import_idiom_still_resolves_to_torch() -> None:
    source = (
        "try:\n"
        "    import torch.distributed as dist\n"
        "except ImportError:\n"
        "    dist = None\n"
        "dist.init_process_group('gloo')\n"
    )

    assert codes_by_line(source, select=SELECT) == [(5, "RNK101")]


def test_message_names_the_call_and_the_fix() -> None:
    from tests.conftest import findings_of

    (finding,) = findings_of(
        "from torch.distributed import init_process_group as ipg\nipg()\n", select=SELECT
    )

    assert "`torch.distributed.init_process_group()`" in finding.message
    assert "imported" in finding.message
    assert "main()" in finding.message
    assert (finding.line, finding.col, finding.end_line, finding.end_col) == (2, 1, 2, 6)
