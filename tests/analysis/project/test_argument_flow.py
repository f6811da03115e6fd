"""Rank values passed as arguments, and reduce ops, as the project phase compares them.

A callee that tests a parameter (`if go: dist.barrier()`) runs its collectives
on some ranks only when the caller passes a rank-dependent value for it; two
sides that all-reduce with different reduce ops disagree as much as two sides
that issue different collectives. Each case compares the (file, line, code)
of every RNK102/RNK105 finding with the ``# expect:`` markers of its files.
"""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from ranklint import Config, lint_paths
from ranklint.analysis.walk.arguments import call_args, rank_arguments, reduce_op_name
from ranklint.analysis.walk.catalog import BY_QUALIFIED_NAME
from ranklint.model.taint import CLEAN, Taint
from tests.conftest import marked_project

pytestmark = pytest.mark.timeout(30)

_CODES = ("RNK102", "RNK105")

_HELPERS = """
    import torch.distributed as dist


    def my_rank():
        return dist.get_rank()


    def exchange(t, go):
        if go:
            dist.barrier()


    def maybe_return(t, skip=False):
        if skip:
            return
        dist.all_reduce(t)


    def both_arms(t, go):
        if go:
            dist.all_reduce(t)
        else:
            dist.all_reduce(t)


    def not_tested(t, go):
        dist.all_reduce(t)
        return go


    def on_group(t, member, group):
        if member:
            dist.all_reduce(t, group=group)
"""

_CALLERS = """
    import torch.distributed as dist
    from helpers import both_arms, exchange, maybe_return, my_rank, not_tested, on_group


    def positional(t):
        r = dist.get_rank()
        exchange(t, r == 0)  # expect: RNK102


    def keyword_and_negated(t):
        maybe_return(t, skip=dist.get_rank() > 0)  # expect: RNK102


    def through_a_helper_in_another_file(t):
        me = my_rank()
        exchange(t, not (me % 2 == 0))  # expect: RNK102


    def named_flag(t):
        is_main = dist.get_rank() == 0
        exchange(t, is_main)  # expect: RNK102


    def same_collectives_either_way(t):
        both_arms(t, dist.get_rank() == 0)
        not_tested(t, dist.get_rank() == 0)


    def uniform_arguments(t, world_size):
        exchange(t, world_size > 1)
        exchange(t, True)
        maybe_return(t, skip=False)


    def membership_on_its_group(t, ranks, group):
        on_group(t, dist.get_rank() in ranks, group)


    def already_split(t):
        if dist.get_rank() == 0:
            exchange(t, dist.get_rank() == 0)  # expect: RNK102
"""


def test_rank_dependent_argument_for_a_tested_parameter_is_reported_at_the_call(
    tmp_path: Path,
) -> None:
    found, expected = marked_project(
        tmp_path, {"helpers.py": _HELPERS, "callers.py": _CALLERS}, _CODES
    )

    assert found == expected


def test_argument_flow_finding_is_high_and_says_the_argument_and_chain(tmp_path: Path) -> None:
    (tmp_path / "helpers.py").write_text(
        "import torch.distributed as dist\n\n\ndef exchange(t, go):\n    if go:\n"
        "        dist.barrier()\n",
        encoding="utf-8",
    )
    (tmp_path / "main.py").write_text(
        "import torch.distributed as dist\nfrom helpers import exchange\n\n\n"
        "def run(t):\n    exchange(t, dist.get_rank() == 0)\n",
        encoding="utf-8",
    )

    result = lint_paths([tmp_path], Config(select=("RNK102",), root=tmp_path), jobs=1)

    (finding,) = result.findings
    assert (Path(finding.path).name, finding.line) == ("main.py", 6)
    assert "`dist.get_rank() == 0`" in finding.message
    assert "exchange() -> dist.barrier()" in finding.message
    assert finding.evidence is not None
    assert finding.evidence.source.kind == "rank-query"


_REDUCE_OPS = """
    import torch.distributed as dist
    from torch.distributed import ReduceOp


    def sum_against_max(t):
        if dist.get_rank() == 0:
            dist.all_reduce(t)  # expect: RNK102
        else:
            dist.all_reduce(t, op=dist.ReduceOp.MAX)


    def swapped_order(t):
        if dist.get_rank() % 2 == 0:
            dist.all_reduce(t, op=ReduceOp.MAX)  # expect: RNK102
            dist.all_reduce(t)
        else:
            dist.all_reduce(t)
            dist.all_reduce(t, op=ReduceOp.MAX)


    def explicit_sum_is_the_default(t):
        if dist.get_rank() == 0:
            dist.all_reduce(t, op=dist.ReduceOp.SUM)
        else:
            dist.all_reduce(t)


    def op_not_written_out(t, op):
        if dist.get_rank() == 0:
            dist.all_reduce(t, op=op)
        else:
            dist.all_reduce(t, op=dist.ReduceOp.MAX)


    def reduce_scatter_ops(out, parts):
        if dist.get_rank() == 0:
            dist.reduce_scatter(out, parts, op=dist.ReduceOp.AVG)  # expect: RNK102
        else:
            dist.reduce_scatter(out, parts, dist.ReduceOp.SUM)
"""


def test_sides_that_reduce_with_different_ops_are_a_mismatch(tmp_path: Path) -> None:
    found, expected = marked_project(tmp_path, {"m.py": _REDUCE_OPS}, _CODES)

    assert found == expected


def test_reduce_op_mismatch_message_names_both_ops(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "import torch.distributed as dist\n\n\ndef f(t):\n    if dist.get_rank() == 0:\n"
        "        dist.all_reduce(t)\n    else:\n        dist.all_reduce(t, op=dist.ReduceOp.MIN)\n",
        encoding="utf-8",
    )

    (finding,) = lint_paths([tmp_path], Config(select=("RNK102",)), jobs=1).findings

    assert finding.line == 6
    assert "with the reduce op SUM here, the others with MIN" in finding.message


def _call(text: str) -> cst.Call:
    node = cst.parse_expression(text)
    assert isinstance(node, cst.Call)
    return node


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("dist.all_reduce(t)", "SUM"),
        ("dist.all_reduce(t, dist.ReduceOp.MAX)", "MAX"),
        ("dist.all_reduce(t, op=ReduceOp.AVG)", "AVG"),
        ("dist.all_reduce(t, op=torch.distributed.ReduceOp.PRODUCT)", "PRODUCT"),
        ("dist.all_reduce(t, op=op)", None),
        ("dist.all_reduce(t, op=Ops.MAX)", None),
        ("dist.all_reduce(t, op=dist.ReduceOp.RedOpType)", None),
    ],
)
def test_reduce_op_name_reads_a_written_out_reduce_op_member(
    text: str, expected: str | None
) -> None:
    spec = BY_QUALIFIED_NAME["torch.distributed.all_reduce"]

    assert reduce_op_name(_call(text), spec) == expected


def test_reduce_op_name_is_none_for_a_collective_without_an_op() -> None:
    spec = BY_QUALIFIED_NAME["torch.distributed.broadcast"]

    assert reduce_op_name(_call("dist.broadcast(t, src=0)"), spec) is None


_RANKED = Taint(rank=True)


def _taint_of(node: cst.BaseExpression) -> Taint:
    """Rank-dependent exactly where the expression reads the name `r`."""
    return _RANKED if "r" in {n.value for n in _names(node)} else CLEAN


def _names(node: cst.CSTNode) -> list[cst.Name]:
    found = [node] if isinstance(node, cst.Name) else []
    for child in node.children:
        found += _names(child)
    return found


def test_rank_arguments_keeps_positions_keywords_and_text_of_rank_values_only() -> None:
    node = _call("f(t, r  ==  0, 3, 'x', None, *rest, flag=not r, size=n)")

    assert rank_arguments(node, _taint_of) == (
        (1, None, "r == 0", _RANKED),
        (None, "flag", "not r", _RANKED),
    )


def test_rank_arguments_counts_positions_as_call_args_does() -> None:
    node = _call("f(x, *rest, r, **extra)")

    positions = [(position, keyword) for position, keyword, _, _ in rank_arguments(node, _taint_of)]
    assert positions == [(1, None)]
    assert [(position, keyword) for position, keyword, _ in call_args(node)] == [
        (0, None),
        (1, None),
    ]


def test_rank_arguments_counts_every_positional_argument_before_a_rank_value() -> None:
    node = _call("f(a, b, c, r)")

    positions = [(position, keyword) for position, keyword, _, _ in rank_arguments(node, _taint_of)]
    assert positions == [(3, None)]
