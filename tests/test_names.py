"""Name resolution through imports, shadowing and scopes."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ranklint.analysis.names import NameTable, ScopeKind


def resolve_last_call(source: str) -> str | None:
    """Bind the module's imports and assignments in order, then resolve the last call's target."""
    module = cst.parse_module(textwrap.dedent(source))
    table = NameTable()
    call: cst.Call | None = None
    for statement in module.body:
        assert isinstance(statement, cst.SimpleStatementLine)
        small = statement.body[0]
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            table.bind_import_statement(small)
        elif isinstance(small, cst.Assign):
            for target in small.targets:
                table.bind_target(target.target, small.value)
        elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
            call = small.value
    assert call is not None
    return table.resolve(call.func)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import torch.distributed as dist\ndist.new_group()", "torch.distributed.new_group"),
        ("from torch import distributed as d\nd.new_group()", "torch.distributed.new_group"),
        (
            "from torch.distributed import init_process_group as ipg\nipg()",
            "torch.distributed.init_process_group",
        ),
        ("import torch\ntorch.distributed.new_group()", "torch.distributed.new_group"),
        ("import torch.distributed\ntorch.distributed.new_group()", "torch.distributed.new_group"),
        ("from torch.distributed import *\nnew_group()", "torch.distributed.new_group"),
        ("from . import comm\ncomm.setup()", ".comm.setup"),
    ],
)
def test_resolve_with_import_form_yields_the_qualified_name(source: str, expected: str) -> None:
    assert resolve_last_call(source) == expected


def test_resolve_after_assignment_shadows_the_import() -> None:
    source = "import torch.distributed as dist\ndist = object()\ndist.new_group()"

    assert resolve_last_call(source) is None


def test_resolve_after_none_fallback_keeps_the_import() -> None:
    source = "import torch.distributed as dist\ndist = None\ndist.new_group()"

    assert resolve_last_call(source) == "torch.distributed.new_group"


def test_resolve_with_two_wildcard_imports_is_unknown() -> None:
    source = "from torch.distributed import *\nfrom mylib import *\nnew_group()"

    assert resolve_last_call(source) is None


def test_lookup_from_nested_function_skips_enclosing_class_scope() -> None:
    table = NameTable()
    table.bind_import("dist", "torch.distributed")
    table.push(ScopeKind.CLASS)
    table.bind_other("dist")
    assert table.lookup("dist") is None  # in the class body itself: shadowed

    table.push(ScopeKind.FUNCTION)

    assert table.lookup("dist") == "torch.distributed"


def test_lookup_of_parameter_shadows_module_import() -> None:
    table = NameTable()
    table.bind_import("new_group", "torch.distributed.new_group")
    table.push(ScopeKind.FUNCTION)
    table.bind_other("new_group")

    assert table.lookup("new_group") is None
