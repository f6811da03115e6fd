"""Name resolution through imports, shadowing and scopes."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ranklint.analysis.walk.names import (
    NamePatterns,
    NameTable,
    ScopeKind,
    import_from_module,
    imported_modules,
    last_name,
)


def _bind_in_order(source: str) -> tuple[NameTable, cst.Call | None]:
    """A table with the module's imports and assignments bound in order, and its last call."""
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
    return table, call


def resolve_last_call(source: str) -> str | None:
    """Bind the module's imports and assignments in order, then resolve the last call's target."""
    table, call = _bind_in_order(source)
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


def test_is_bound_sees_names_of_every_enclosing_scope_but_not_of_enclosing_classes() -> None:
    table = NameTable()
    table.bind_other("module_name")
    table.push(ScopeKind.CLASS)
    table.bind_other("class_attribute")
    assert table.is_bound("class_attribute")  # in the class body itself

    table.push(ScopeKind.FUNCTION)
    table.bind_other("local")
    table.push(ScopeKind.FUNCTION)

    assert table.is_bound("local")  # an enclosing function's
    assert table.is_bound("module_name")  # the module's
    assert not table.is_bound("class_attribute")  # the enclosing class body's is not visible
    assert not table.is_bound("print")  # never bound: the builtin


def test_is_bound_after_leaving_the_scope_that_bound_the_name_is_false() -> None:
    table = NameTable()
    table.push(ScopeKind.FUNCTION)
    table.bind_other("x")
    table.pop()

    assert not table.is_bound("x")


def test_is_bound_locally_only_for_names_bound_in_a_function_scope() -> None:
    table = NameTable()
    table.bind_other("at_module")
    table.push(ScopeKind.CLASS)
    table.bind_other("in_class")
    table.push(ScopeKind.FUNCTION)
    table.bind_other("in_method")
    table.push(ScopeKind.FUNCTION)

    assert table.is_bound_locally("in_method")  # an enclosing function's
    outer = NameTable()
    outer.push(ScopeKind.FUNCTION)
    outer.bind_other("local")
    assert outer.is_bound_locally("local")  # a top-level function's own
    assert not table.is_bound_locally("in_class")
    assert not table.is_bound_locally("at_module")
    assert not table.is_bound_locally("unbound")


def test_pop_of_the_module_scope_raises_a_runtime_error() -> None:
    table = NameTable()

    with pytest.raises(RuntimeError, match=r"^cannot pop the module scope$"):
        table.pop()


def test_current_kind_follows_pushes_and_pops() -> None:
    table = NameTable()
    kinds = [table.current_kind]
    table.push(ScopeKind.CLASS)
    kinds.append(table.current_kind)
    table.push(ScopeKind.FUNCTION)
    kinds.append(table.current_kind)
    table.pop()
    kinds.append(table.current_kind)

    assert kinds == [ScopeKind.MODULE, ScopeKind.CLASS, ScopeKind.FUNCTION, ScopeKind.CLASS]


@pytest.mark.parametrize(
    "target",
    ["dist, other", "[dist, other]", "(other, (x, dist))", "other, *dist", "[*dist]"],
)
def test_assignment_to_a_name_inside_a_tuple_list_or_starred_target_shadows_the_import(
    target: str,
) -> None:
    source = f"import torch.distributed as dist\n{target} = values\ndist.new_group()"

    assert resolve_last_call(source) is None


def test_none_unpacked_into_a_tuple_target_still_shadows_the_import() -> None:
    # Only `name = None` itself is the optional-import fallback.
    source = "import torch.distributed as dist\ndist, x = None, None\ndist.new_group()"

    assert resolve_last_call(source) is None


def test_attribute_and_subscript_targets_bind_no_name() -> None:
    source = "import torch.distributed as dist\ndist.x = 1\ndist[0] = 1\ndist.new_group()"

    assert resolve_last_call(source) == "torch.distributed.new_group"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # `import a.b.c` binds `a` only, to the top package.
        ("import torch.distributed.c10d\ntorch.distributed.barrier()", "torch.distributed.barrier"),
        ("import torch.distributed.c10d\nc10d.barrier()", None),
        ("import a.b.c\na.b.c.f()", "a.b.c.f"),
        # Every name of a multi-name import binds.
        ("import os, torch.distributed as dist\ndist.barrier()", "torch.distributed.barrier"),
        ("from .. import comm\ncomm.setup()", "..comm.setup"),
        ("from ..pkg import comm\ncomm.setup()", "..pkg.comm.setup"),
        ("from pkg import a as b, c\nc()", "pkg.c"),
        ("from pkg import a as b, c\nb()", "pkg.a"),
    ],
)
def test_resolve_through_each_import_spelling_binds_the_documented_name(
    source: str, expected: str | None
) -> None:
    assert resolve_last_call(source) == expected


def test_module_imports_lists_only_module_level_import_bindings() -> None:
    table = NameTable()
    table.bind_import("dist", "torch.distributed")
    table.bind_other("helper")
    table.push(ScopeKind.FUNCTION)
    table.bind_import("inner", "pkg.inner")

    assert table.module_imports() == {"dist": "torch.distributed"}


@pytest.mark.parametrize(
    ("patterns", "name", "expected"),
    [
        (("rank", "*_rank"), "rank", True),
        (("rank", "*_rank"), "tp_rank", True),
        (("rank", "*_rank"), "ranks", False),  # whole-name match
        (("rank", "*_rank"), "lora_rank_dim", False),
        (("is_main*",), "is_main_process", True),
        ((), "rank", False),  # no patterns match nothing
    ],
)
def test_name_patterns_match_whole_names_against_any_glob(
    patterns: tuple[str, ...], name: str, expected: bool
) -> None:
    matcher = NamePatterns(patterns)

    assert matcher.matches(name) is expected
    assert matcher.matches(name) is expected  # a second time, from its memory


def test_last_name_of_a_call_is_the_name_of_the_called_function() -> None:
    assert last_name(cst.parse_expression("self.model.forward(x)")) == "forward"
    assert last_name(cst.parse_expression("forward(x)")) == "forward"
    assert last_name(cst.parse_expression("f(x)(y)")) == "f"
    assert last_name(cst.parse_expression("x[0]")) is None


def test_import_from_module_of_an_absolute_and_a_relative_import() -> None:
    def module_of(code: str) -> str:
        statement = cst.parse_statement(code)
        assert isinstance(statement, cst.SimpleStatementLine)
        node = statement.body[0]
        assert isinstance(node, cst.ImportFrom)
        return import_from_module(node)

    assert module_of("from torch.distributed import barrier") == "torch.distributed"
    assert module_of("from . import x") == "."
    assert module_of("from ...a.b import x") == "...a.b"


def _instance_after(source: str, name: str) -> str | None:
    """Bind the module's imports and assignments in order, then ask what built ``name``."""
    table, _ = _bind_in_order(source)
    return table.instance_of(name)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from pkg.deploy import Server\nx = Server()\n", "pkg.deploy.Server"),
        ("import pkg.deploy as d\nx = d.Server(port=1)\n", "pkg.deploy.Server"),
        ("x = Server()\n", "@local:Server"),
        ("x = make_server()\n", None),
        ("x = MAX_SIZE(3)\n", None),
        ("x = obj.Server()\n", None),
        ("x = Server\n", None),
        ("x = Server()\nx = 3\n", None),
        ("x = Server()\nx, y = 1, 2\n", None),
        ("from pkg.deploy import Server\nx = Server()\nx = None\n", None),
    ],
)
def test_instance_of_names_the_class_a_local_was_last_built_from(
    source: str, expected: str | None
) -> None:
    assert _instance_after(source, "x") == expected


def test_instance_of_from_a_function_sees_the_module_level_instance() -> None:
    table = NameTable()
    table.bind_target(cst.Name("server"), cst.parse_expression("Server()"))
    table.push(ScopeKind.FUNCTION)

    assert table.instance_of("server") == "@local:Server"


def test_instance_of_a_local_that_shadows_a_module_level_instance_is_unknown() -> None:
    table = NameTable()
    table.bind_target(cst.Name("server"), cst.parse_expression("Server()"))
    table.push(ScopeKind.FUNCTION)
    table.bind_other("server")

    assert table.instance_of("server") is None


def test_instance_of_an_unbound_name_is_unknown() -> None:
    assert NameTable().instance_of("server") is None


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        ("import a.b", ["a.b"]),
        ("import a.b as c, d", ["a.b", "d"]),
        ("from . import launch", [".", ".launch"]),
        ("from .. import a, b", ["..", "..a", "..b"]),
        ("from .m import x", [".m", ".m.x"]),
        ("from pkg.mod import (x, y as z)", ["pkg.mod", "pkg.mod.x", "pkg.mod.y"]),
        ("from pkg import *", ["pkg"]),
    ],
)
def test_imported_modules_names_every_module_an_import_may_load(
    statement: str, expected: list[str]
) -> None:
    node = cst.parse_statement(statement).body[0]
    assert isinstance(node, (cst.Import, cst.ImportFrom))

    assert imported_modules(node) == expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\nx = FSDP(m)\n",
            "torch.distributed.fsdp.FullyShardedDataParallel",
        ),
        (
            "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n"
            "x = FSDP(m, auto_wrap_policy=p)\n",
            "torch.distributed.fsdp.FullyShardedDataParallel",
        ),
        (
            "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n"
            "x = FSDP(m, process_group=pg)\n",
            None,
        ),
        (
            "import torch.distributed.fsdp as fsdp\n"
            "x = fsdp.FullyShardedDataParallel(m, device_mesh=d)\n",
            None,
        ),
        ("from pkg import Helper\nx = Helper(m, process_group=pg)\n", "pkg.Helper"),
        ("from pkg import DDP\nx = DDP(m)\n", "pkg.DDP"),
        ("x = DDP(m)\n", None),
    ],
)
def test_instance_of_a_wrapper_needs_the_default_group(source: str, expected: str | None) -> None:
    assert _instance_after(source, "x") == expected


def test_mark_instance_sets_the_class_where_the_name_is_bound() -> None:
    table = NameTable()
    table.bind_other("model")
    table.push(ScopeKind.FUNCTION)

    table.mark_instance("model", "torch.distributed.fsdp.FSDPModule")
    table.mark_instance("unbound", "torch.distributed.fsdp.FSDPModule")

    assert table.instance_of("model") == "torch.distributed.fsdp.FSDPModule"
    assert table.instance_of("unbound") is None
