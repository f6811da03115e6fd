"""The rules' fixes at the edges the fix examples leave open: how RNK106 spells
`ReduceOp` with the names a module has, when RNK108 takes a parameter for a mesh,
which files RNK301 counts as a package's `__init__.py` and how it lays out the
names, which tolerances RNK601 writes out; and the exact messages of the
findings and fixes of RNK103, RNK106, RNK108, RNK301 and RNK601."""

from __future__ import annotations

import textwrap

import pytest

from ranklint import Config, lint_source
from ranklint.faces.fixing import fix_text
from ranklint.findings import Applicability, Finding

TEST_PATH = "tests/test_x.py"  # RNK601 looks at test files only


def _findings(code: str, source: str, path: str = "m.py") -> list[Finding]:
    result = lint_source(source, path, Config(select=(code,), confidence="low"))
    assert result.errors == []
    return [finding for finding in result.findings if finding.code == code]


def _fixed(code: str, source: str, path: str = "m.py") -> str:
    """``source`` with every fix of ``code`` applied (unsafe ones included)."""

    def relint(text: str) -> list[Finding]:
        return _findings(code, text, path)

    fixed, _ = fix_text(source, relint(source), relint, unsafe=True)
    return fixed


def _source(text: str) -> str:
    return textwrap.dedent(text).lstrip()


# -- RNK106 implicit-reduce-op: how the fix names ReduceOp ----------------------


@pytest.mark.parametrize(
    ("source", "call", "fixed_call"),
    [
        pytest.param(
            "from torch.distributed import distributed_c10d as c10d\n",
            "c10d.all_reduce(t)",
            "c10d.all_reduce(t, op=c10d.ReduceOp.SUM)",
            id="through-the-c10d-module-the-call-is-made-on",
        ),
        pytest.param(
            "import torch.distributed as dist\n",
            "(dist).all_reduce(t)",
            "(dist).all_reduce(t, op=dist.ReduceOp.SUM)",
            id="parenthesized-receiver-without-its-parentheses",
        ),
        pytest.param(
            "import torch\n",
            "(torch\n     .distributed).all_reduce(t)",
            "(torch\n     .distributed).all_reduce(t, op=torch.distributed.ReduceOp.SUM)",
            id="receiver-over-two-lines-through-the-imported-module",
        ),
        pytest.param(
            "import torch\n",
            "(torch  # the package\n     .distributed).all_reduce(t)",
            "(torch  # the package\n     .distributed).all_reduce(t, "
            "op=torch.distributed.ReduceOp.SUM)",
            id="receiver-with-a-comment-through-the-imported-module",
        ),
        pytest.param(
            "import torch.distributed as dist\nfrom torch.distributed import all_reduce\n",
            "all_reduce(t)",
            "all_reduce(t, op=dist.ReduceOp.SUM)",
            id="bare-name-through-an-imported-torch-distributed",
        ),
        pytest.param(
            "import torch\nfrom torch.distributed import all_reduce\n",
            "all_reduce(t)",
            "all_reduce(t, op=torch.distributed.ReduceOp.SUM)",
            id="bare-name-through-an-imported-torch",
        ),
    ],
)
def test_reduce_op_fix_names_reduce_op_through_a_name_the_module_has(
    source: str, call: str, fixed_call: str
) -> None:
    before = f"{source}\n\ndef total(t):\n    {call}\n"

    fixed = _fixed("RNK106", before)

    assert fixed == f"{source}\n\ndef total(t):\n    {fixed_call}\n"


@pytest.mark.parametrize(
    "source",
    [
        pytest.param(
            """
            import deepspeed.comm as dc
            import torch.distributed as dist


            def total(t):
                dc.all_reduce(t)
            """,
            id="deepspeed-call-although-torch-distributed-is-imported",
        ),
        pytest.param(
            """
            import torch.distributed as dist
            from torch.distributed import all_reduce


            def total(t, dist):
                all_reduce(t)
            """,
            id="module-alias-shadowed-by-a-parameter",
        ),
    ],
)
def test_reduce_op_fix_is_not_offered_where_no_visible_name_leads_to_torch_reduce_op(
    source: str,
) -> None:
    findings = _findings("RNK106", _source(source))

    assert len(findings) == 1
    assert findings[0].fix is None


def test_implicit_reduce_op_finding_and_fix_messages_name_the_default_sum() -> None:
    source = "import torch.distributed as dist\n\n\ndef total(t):\n    dist.reduce(t, dst=0)\n"

    (finding,) = _findings("RNK106", source)

    assert finding.message == (
        "`reduce` without `op` sums across ranks (the default, `ReduceOp.SUM`); if a mean "
        "is meant this is off by the world size: pass `op=ReduceOp.SUM` or `op=ReduceOp.AVG` "
        "explicitly"
    )
    assert finding.fix is not None
    assert finding.fix.message == "Write out the default: `op=dist.ReduceOp.SUM`"
    assert finding.fix.applicability is Applicability.SAFE


# -- RNK108 ignored-process-group: a process group for certain, or not ----------


@pytest.mark.parametrize(
    "source",
    [
        pytest.param(
            """
            import torch.distributed as dist
            from torch.distributed.device_mesh import DeviceMesh


            def sync(t, mesh: DeviceMesh):
                dist.all_reduce(t, group=mesh)
                dist.barrier()
            """,
            id="parameter-annotated-device-mesh",
        ),
        pytest.param(
            """
            import torch.distributed as dist
            from torch.distributed.device_mesh import DeviceMesh


            def sync(t: Tensor, mesh: DeviceMesh):
                dist.all_reduce(t, group=mesh)
                dist.barrier()
            """,
            id="device-mesh-annotation-after-another-annotated-parameter",
        ),
        pytest.param(
            """
            import deepspeed.comm as dc


            def sync(t, pg):
                dc.all_reduce(t, group=pg)
                dc.barrier()
            """,
            id="collective-outside-torch-distributed",
        ),
    ],
)
def test_group_fix_is_not_offered_unless_a_torch_collective_ignores_a_process_group(
    source: str,
) -> None:
    findings = _findings("RNK108", _source(source))

    assert len(findings) == 1
    assert findings[0].fix is None


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(
            "    print(pg.size())\n",
            id="other-attribute-of-the-parameter-is-no-mesh-use",
        ),
        pytest.param(
            "    sub = registry.get_group(0)\n",
            id="get-group-of-another-object-is-no-mesh-use",
        ),
        pytest.param(
            "    def inner(pg):\n        return pg.get_group(0)\n",
            id="get-group-in-a-nested-function-is-no-mesh-use",
        ),
    ],
)
def test_group_fix_passes_the_parameter_when_nothing_uses_it_as_a_mesh(body: str) -> None:
    head = "import torch.distributed as dist\n\n\ndef sync(t, pg):\n"
    head += "    dist.all_reduce(t, group=pg)\n" + body

    fixed = _fixed("RNK108", head + "    dist.barrier()\n")

    assert fixed == head + "    dist.barrier(group=pg)\n"


def test_ignored_process_group_messages_name_the_call_and_the_parameter() -> None:
    source = _source(
        """
        import torch.distributed as dist


        def average(t, dp_group):
            dist.all_reduce(t, group=dp_group)
            dist.barrier()
            return t / dist.get_world_size()
        """
    )

    barrier, division = _findings("RNK108", source)

    tail = (
        " uses the default group although this function takes `dp_group`: it runs over all "
        "ranks instead of the caller's group; pass `group=dp_group` (for a mesh, "
        "`group=dp_group.get_group(dim)`)"
    )
    assert barrier.message == "`barrier`" + tail
    assert barrier.fix is not None
    assert barrier.fix.message == "Pass the function's group: `group=dp_group`"
    assert division.message == "`get_world_size()`" + tail
    assert division.fix is None


# -- RNK103 missing-root: the messages of the fixed and the unfixed case -------


def test_missing_root_on_a_subgroup_says_rank_zero_is_wrong_and_offers_only_group_src() -> None:
    source = _source(
        """
        import torch.distributed as dist


        def share(objs, pg):
            dist.broadcast_object_list(objs, group=pg)
        """
    )

    (finding,) = _findings("RNK103", source)

    assert finding.message == (
        "`broadcast_object_list` on a group without `src`/`group_src`: torch uses global rank "
        "0, which is not a member of most groups (it raises there, or the wrong rank is the "
        "root); pass `group_src=0` for the group's first member, or the root's global rank "
        "as `src`"
    )
    assert finding.fix is not None
    assert finding.fix.applicability is Applicability.UNSAFE
    assert finding.fix.message == "Root the call at the group's first member: `group_src=0`"
    assert _fixed("RNK103", source) == source.replace("group=pg)", "group=pg, group_src=0)")


@pytest.mark.parametrize(
    "group", ["", ", group=None", ", group=dist.group.WORLD", ", group=GroupMember.WORLD"]
)
def test_missing_root_on_the_default_group_says_the_root_is_implicit_and_offers_src_zero(
    group: str,
) -> None:
    source = (
        "import torch.distributed as dist\nfrom torch.distributed import GroupMember\n\n\n"
        f"def share(out):\n    dist.gather_object(1, out{group})\n"
    )

    (finding,) = _findings("RNK103", source)

    assert finding.message == (
        "`gather_object` without `dst`: the root is implicitly global rank 0; name it "
        "(`dst=0`) so that every reader sees whose data is used"
    )
    assert finding.fix is not None
    assert finding.fix.applicability is Applicability.SAFE
    assert finding.fix.message == "Write out the implicit root: `dst=0` (global rank 0)"
    assert _fixed("RNK103", source) == source.replace(f"1, out{group})", f"1, out{group}, dst=0)")


def test_missing_root_through_deepspeed_is_reported_without_a_fix() -> None:
    source = "import deepspeed.comm as dc\n\n\ndef f(o):\n    dc.broadcast_object_list(o)\n"

    (finding,) = _findings("RNK103", source)

    assert finding.fix is None


def test_missing_root_that_raises_says_so_and_offers_no_fix() -> None:
    source = "import torch.distributed as dist\n\n\ndef gather(t):\n    dist.reduce(t)\n"

    (finding,) = _findings("RNK103", source)

    assert finding.message == (
        "`reduce` without `dst`/`group_dst`: torch raises at run time, on the cluster; pass "
        "the root explicitly (`dst=0`, or `group_dst=0` for a group's first member)"
    )
    assert finding.fix is None


# -- RNK301 wildcard-import ----------------------------------------------------

WILDCARD = "from helpers import *\n\n\ndef leader():\n    return get_rank() == is_initialized()\n"


@pytest.mark.parametrize(
    ("path", "offered"),
    [
        pytest.param("src/pkg/__init__.py", False, id="package-init-two-folders-down"),
        pytest.param("src\\pkg\\__init__.py", False, id="package-init-windows-separators"),
        pytest.param("src/pkg/__init__helpers.py", True, id="module-named-like-init"),
    ],
)
def test_wildcard_fix_is_offered_only_outside_a_package_init(path: str, offered: bool) -> None:
    (finding,) = _findings("RNK301", WILDCARD, path)

    assert (finding.fix is not None) is offered


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        pytest.param(
            "from helpers import *",
            "`from helpers import *` hides which names this module uses and where they come "
            "from; import the names you use explicitly (`from helpers import a, b`) or import "
            "the module (`import helpers`)",
            id="absolute-module-also-suggests-importing-it",
        ),
        pytest.param(
            "from .helpers import *",
            "`from .helpers import *` hides which names this module uses and where they come "
            "from; import the names you use explicitly (`from .helpers import a, b`)",
            id="relative-module-suggests-names-only",
        ),
    ],
)
def test_wildcard_message_suggests_importing_the_module_only_when_it_is_absolute(
    statement: str, message: str
) -> None:
    source = f"{statement}\n\n\ndef leader():\n    return get_rank() == is_initialized()\n"

    (finding,) = _findings("RNK301", source)

    assert finding.message == message


def test_wildcard_fix_message_lists_the_names_read_sorted() -> None:
    (finding,) = _findings("RNK301", WILDCARD)

    assert finding.fix is not None
    assert finding.fix.message == (
        "Import the names this module reads from it: `get_rank, is_initialized`"
    )
    assert finding.fix.applicability is Applicability.UNSAFE


def test_wildcard_fix_leaves_out_a_name_bound_by_a_starred_target() -> None:
    source = "from helpers import *\n\nfirst, *rest = items()\nprint(first, rest)\n"

    fixed = _fixed("RNK301", source)

    assert fixed == source.replace("import *", "import items")


_NAMES = [f"name_{i}" for i in range(8)]  # `from helpers import name_0, ..., name_7` is 82 long


@pytest.mark.parametrize(
    ("last", "expected"),
    [
        pytest.param(
            "zzzz",
            "from helpers import " + ", ".join([*_NAMES, "zzzz"]) + "\n",
            id="88-characters-stay-on-one-line",
        ),
        pytest.param(
            "zzzzz",
            "from helpers import (\n" + "".join(f"    {n},\n" for n in [*_NAMES, "zzzzz"]) + ")\n",
            id="89-characters-go-one-name-per-line",
        ),
    ],
)
def test_wildcard_fix_keeps_an_import_of_up_to_88_characters_on_one_line(
    last: str, expected: str
) -> None:
    reads = "".join(f"{name}()\n" for name in [*_NAMES, last])
    source = "from helpers import *\n\n" + reads

    fixed = _fixed("RNK301", source)

    assert fixed == expected + "\n" + reads


# -- RNK601 tensor-compare-without-tolerance -----------------------------------


@pytest.mark.parametrize(
    ("call", "fixed_call"),
    [
        pytest.param(
            "torch.allclose(got, expected, 1e-3)",
            "torch.allclose(got, expected, 1e-3, atol=1e-08)",
            id="positional-rtol-adds-only-atol",
        ),
        pytest.param(
            "torch.allclose(got, expected, 0)",
            "torch.allclose(got, expected, 0, atol=1e-08)",
            id="integer-positional-rtol-is-no-integer-operand",
        ),
        pytest.param(
            "got.allclose(expected, 1e-3)",
            "got.allclose(expected, 1e-3, atol=1e-08)",
            id="method-with-positional-rtol-adds-only-atol",
        ),
        pytest.param(
            "got.allclose(expected, 0)",
            "got.allclose(expected, 0, atol=1e-08)",
            id="method-integer-positional-rtol-is-no-integer-operand",
        ),
        pytest.param(
            "torch.allclose(input=got, other=expected)",
            "torch.allclose(input=got, other=expected, rtol=1e-05, atol=1e-08)",
            id="operands-by-keyword",
        ),
        pytest.param(
            "self.assertTrue(torch.allclose(got, expected))",
            "self.assertTrue(torch.allclose(got, expected, rtol=1e-05, atol=1e-08))",
            id="inside-a-non-negating-assert",
        ),
        pytest.param(
            "(~torch.isclose(got, expected)).any()",
            "(~torch.isclose(got, expected, rtol=1e-05, atol=1e-08)).any()",
            id="bitwise-inverted-is-not-negated",
        ),
        pytest.param(
            "np.testing.assert_allclose(got, expected)",
            "np.testing.assert_allclose(got, expected, rtol=1e-07, atol=0)",
            id="numpy-assert-allclose-integer-atol",
        ),
    ],
)
def test_tolerance_fix_writes_out_only_the_missing_defaults(call: str, fixed_call: str) -> None:
    head = "import numpy as np\nimport torch\n\n\ndef test_x(self, got, expected):\n    "

    fixed = _fixed("RNK601", f"{head}{call}\n", TEST_PATH)

    assert fixed == f"{head}{fixed_call}\n"


def test_tolerance_fix_at_module_level_of_a_test_file_writes_out_both() -> None:
    source = "import torch\n\nSAME = torch.allclose(GOT, EXPECTED)\n"

    fixed = _fixed("RNK601", source, TEST_PATH)

    assert fixed == source.replace("EXPECTED)", "EXPECTED, rtol=1e-05, atol=1e-08)")


@pytest.mark.parametrize(
    "call",
    [
        pytest.param("torch.allclose(got, expected, **tolerances)", id="keyword-unpacking"),
        pytest.param("ids.allclose(got)", id="method-on-integer-ids"),
        pytest.param("got.allclose(ids)", id="method-with-integer-ids-argument"),
        pytest.param(
            "torch.testing.assert_close(got, torch.tensor([0, 1]), equal_nan=False)",
            id="integer-side-with-another-false-keyword",
        ),
    ],
)
def test_tolerance_rule_reports_nothing_with_unpacked_keywords_or_an_integer_side(
    call: str,
) -> None:
    source = f"import torch\n\n\ndef test_x(got, expected, ids, tolerances):\n    {call}\n"

    assert _findings("RNK601", source, TEST_PATH) == []


def test_tolerance_finding_and_fix_messages_list_both_missing_tolerances() -> None:
    source = "import torch\n\n\ndef test_x(got, expected):\n    torch.isclose(got, expected)\n"

    (finding,) = _findings("RNK601", source, TEST_PATH)

    assert finding.message == (
        "`torch.isclose()` without explicit `rtol` and `atol`: the defaults depend on the "
        "function and dtype, so the test's claim is unclear; pass both `rtol=` and `atol=`"
    )
    assert finding.fix is not None
    assert finding.fix.message == "Write out the default tolerances: `rtol=1e-05, atol=1e-08`"


def test_tolerance_rule_judges_a_name_by_the_binding_in_its_own_test_function() -> None:
    source = _source(
        """
        import torch

        want = torch.ones(2)


        def test_local_integers(got):
            want = torch.arange(4)
            torch.testing.assert_close(got, want)


        def test_module_floats(got):
            torch.testing.assert_close(got, want)
        """
    )

    findings = _findings("RNK601", source, TEST_PATH)

    assert [finding.line for finding in findings] == [12]
