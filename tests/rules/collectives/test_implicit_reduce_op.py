"""RNK106 implicit-reduce-op: how its fix spells `ReduceOp` with the names a module
has, where it offers none, and the exact messages of its finding and fix."""

from __future__ import annotations

import pytest

from ranklint.findings import Applicability
from tests.fix_cases import dedented, rule_findings, rule_fixed


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

    fixed = rule_fixed("RNK106", before)

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
    findings = rule_findings("RNK106", dedented(source))

    assert len(findings) == 1
    assert findings[0].fix is None


def test_implicit_reduce_op_finding_and_fix_messages_name_the_default_sum() -> None:
    source = "import torch.distributed as dist\n\n\ndef total(t):\n    dist.reduce(t, dst=0)\n"

    (finding,) = rule_findings("RNK106", source)

    assert finding.message == (
        "`reduce` without `op` sums across ranks (the default, `ReduceOp.SUM`); if a mean "
        "is meant this is off by the world size: pass `op=ReduceOp.SUM` or `op=ReduceOp.AVG` "
        "explicitly"
    )
    assert finding.fix is not None
    assert finding.fix.message == "Write out the default: `op=dist.ReduceOp.SUM`"
    assert finding.fix.applicability is Applicability.SAFE
