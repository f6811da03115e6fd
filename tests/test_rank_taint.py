"""Rank-taint: which expressions depend on the calling rank, and on which axis."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ranklint import Config
from ranklint.analysis.context import FileContext
from ranklint.analysis.names import NamePatterns
from ranklint.analysis.rank import DEFAULT_RANK_NAMES, GLOBAL_AXIS, Taint
from ranklint.engine.walker import Walker
from ranklint.rules.base import Rule


class _Probe(Rule):
    """Records the taint of every ``probe(<expr>)`` argument at its point in the walk."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx, lambda _: None)
        self.seen: list[Taint] = []

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "probe":
            self.seen.append(self.ctx.rank.taint(node.args[0].value))


def taints(source: str) -> list[Taint]:
    module = cst.parse_module(textwrap.dedent(source))
    ctx = FileContext(path="probe.py", module=module, settings=Config().analysis_settings())
    probe = _Probe(ctx)
    Walker(ctx, [probe]).walk(module)
    return probe.seen


def taint(expression: str, prelude: str = "") -> Taint:
    (found,) = taints(f"{textwrap.dedent(prelude)}\nprobe({expression})\n")
    return found


@pytest.mark.parametrize(
    ("prelude", "expression"),
    [
        ("import torch.distributed as dist", "dist.get_rank()"),
        ("import torch.distributed as dist", "dist.get_rank(group) == 0"),
        ("from torch.distributed import get_node_local_rank", "get_node_local_rank()"),
        ("import os", 'os.environ["RANK"]'),
        ("import os", 'int(os.environ["LOCAL_RANK"])'),
        ("import os", 'os.environ.get("LOCAL_RANK", "0")'),
        ("import os", 'os.getenv("NODE_RANK")'),
        ("", 'mesh["tp"].get_local_rank()'),
        ("", "mesh.get_coordinate()"),
        ("", "accelerator.is_main_process"),
        ("", "accelerator.process_index == 0"),
        ("", "trainer.is_global_zero"),
        ("", "self.global_rank"),
        ("", "self.trainer.local_rank == 0"),
        ("", "trainer.is_world_process_zero()"),
        ("", "rank"),
        ("", "tp_rank == 0"),
        ("", "pipeline_model_parallel_rank"),
        ("", "mpu.get_tensor_model_parallel_rank()"),
        ("", "parallel_state.is_pipeline_last_stage()"),
        ("", "is_main_process and step % 10 == 0"),
        ("", "not is_master"),
        ("", "ranks[rank]"),
    ],
)
def test_rank_sources_and_derived_values_are_tainted(prelude: str, expression: str) -> None:
    assert taint(expression, prelude).rank


@pytest.mark.parametrize(
    ("prelude", "expression"),
    [
        ("import torch.distributed as dist", "dist.get_world_size() > 1"),
        ("import torch.distributed as dist", "dist.is_initialized()"),
        ("import os", 'os.environ["WORLD_SIZE"]'),
        ("", "cfg.training.log_every"),
        ("", "lora_rank > 8"),
        ("", "torch.linalg.matrix_rank(w)"),
        ("", "rank_dim"),
        ("", "self.ranking"),
        ("", "is_pipeline_first_stage() and is_pipeline_last_stage()"),
        ("import torch.distributed as dist", "dist.get_global_rank(group, 0)"),
    ],
)
def test_rank_invariant_values_are_not_tainted(prelude: str, expression: str) -> None:
    assert not taint(expression, prelude).rank


def test_taint_flows_through_assignment_augmented_assignment_and_attributes() -> None:
    found = taints(
        """
        import torch.distributed as dist

        class Trainer:
            def __init__(self):
                self.leader = dist.get_rank() == 0

            def step(self):
                first = dist.get_rank()
                first += 1
                probe(first)
                probe(self.leader)
                probe((first, 3))
        """
    )

    assert [t.rank for t in found] == [True, True, True]


def test_reassignment_to_an_invariant_value_clears_the_taint() -> None:
    found = taints(
        """
        import torch.distributed as dist

        def f(ranks):
            r = dist.get_rank()
            probe(r)
            r = len(ranks)
            probe(r)
            for rank in range(4):
                probe(rank)
        """
    )

    assert [t.rank for t in found] == [True, False, False]


def test_value_broadcast_by_a_collective_is_no_longer_rank_dependent() -> None:
    found = taints(
        """
        import torch.distributed as dist

        def f():
            holder = [dist.get_rank()]
            probe(holder)
            dist.broadcast_object_list(holder, src=0)
            probe(holder)
        """
    )

    assert [t.rank for t in found] == [True, False]


def test_call_to_unknown_project_function_is_left_open_for_the_project_phase() -> None:
    found = taint("is_leader()", "from .ranks import is_leader")

    assert (found.rank, found.via) == (False, frozenset({".ranks.is_leader"}))


def test_membership_test_is_marked_as_such() -> None:
    found = taint("dist.get_rank() in ranks", "import torch.distributed as dist")

    assert found.rank
    assert found.membership


@pytest.mark.parametrize(
    ("expression", "axes"),
    [
        ("tp_rank", {"tp"}),
        ("mpu.get_data_parallel_rank()", {"dp"}),
        ('mesh["pp"].get_local_rank()', {"pp"}),
        ("parallel_state.is_pipeline_last_stage()", {"pp"}),
        ("rank", {GLOBAL_AXIS}),
        ("local_rank", {GLOBAL_AXIS}),
    ],
)
def test_rank_values_carry_the_parallel_axis_they_vary_along(
    expression: str, axes: set[str]
) -> None:
    assert taint(expression).axes == axes


def test_configured_rank_names_replace_the_patterns() -> None:
    names = NamePatterns(("leader_*",))

    assert names.matches("leader_flag")
    assert not names.matches("rank")
    assert NamePatterns(DEFAULT_RANK_NAMES).matches("tensor_model_parallel_rank")
