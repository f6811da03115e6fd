"""RNK108: a parameter counts as a process group only where the function uses it as one;
when its fix is offered, and the exact messages of its findings and fix."""

from __future__ import annotations

import textwrap

import pytest

from ranklint import Config, lint_source
from ranklint.testing import actual_findings, expected_findings
from tests.conftest import codes_by_line
from tests.fix_cases import dedented, rule_findings, rule_fixed


def _check(source: str) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    text = textwrap.dedent(source).lstrip()
    result = lint_source(text, "probe.py", Config(select=("RNK108",), confidence="low"))
    return actual_findings(result.findings), expected_findings(text)


@pytest.mark.parametrize(
    "source",
    [
        # Passed as `process_group=` to a call: a group.
        """
        import torch.distributed as dist
        def step(t, pg):
            dist.all_reduce(t)  # expect: RNK108
            wrap(t, process_group=pg)
        """,
        # Annotated `ProcessGroup` (any spelling of the annotation).
        """
        import torch.distributed as dist
        def step(t, comm: "dist.ProcessGroup | None"):
            dist.barrier()  # expect: RNK108
        """,
        # A mesh whose group is taken: a mesh.
        """
        import torch.distributed as dist
        def step(t, mesh):
            dist.all_reduce(t)  # expect: RNK108
            dist.all_reduce(t, group=mesh.get_group("dp"))
        """,
        # Divided in place by the world size after reducing over the group.
        """
        import torch.distributed as dist
        def mean(t, dp_group):
            dist.all_reduce(t, group=dp_group)
            t /= dist.get_world_size()  # expect: RNK108
            return t
        """,
    ],
    ids=["keyword", "annotation", "mesh", "in-place-mean"],
)
def test_parameters_used_as_groups_are_held_to_them(source: str) -> None:
    found, expected = _check(source)

    assert found == expected != []


@pytest.mark.parametrize(
    "source",
    [
        # The name says group; the body uses it as a list of tensors.
        """
        import torch.distributed as dist
        def clip(norm_group, t):
            total = sum(p.norm() for p in norm_group)
            dist.all_reduce(total)
        """,
        # Only used in a nested function: that function's business.
        """
        import torch.distributed as dist
        def outer(t, group):
            def inner():
                dist.all_reduce(t, group=group)
            dist.all_reduce(t)
            return inner
        """,
        # The world size is logged, not used as a divisor.
        """
        import torch.distributed as dist
        def show(t, group):
            dist.all_reduce(t, group=group)
            print(dist.get_world_size())
            return t * dist.get_world_size()
        """,
        # Never reduced over the group: the world size is meant.
        """
        import torch.distributed as dist
        def mean(t, group):
            wrap(t, group=group)
            return t / dist.get_world_size()
        """,
    ],
    ids=["name-only", "nested-use", "not-a-divisor", "not-reduced-over"],
)
def test_parameters_not_used_as_groups_or_world_size_not_divided_are_silent(
    source: str,
) -> None:
    found, _ = _check(source)

    assert found == []


# -- its fix: for a process group for certain, or not; its messages ------------


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
    findings = rule_findings("RNK108", dedented(source))

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

    fixed = rule_fixed("RNK108", head + "    dist.barrier()\n")

    assert fixed == head + "    dist.barrier(group=pg)\n"


def test_ignored_process_group_messages_name_the_call_and_the_parameter() -> None:
    source = dedented(
        """
        import torch.distributed as dist


        def average(t, dp_group):
            dist.all_reduce(t, group=dp_group)
            dist.barrier()
            return t / dist.get_world_size()
        """
    )

    barrier, division = rule_findings("RNK108", source)

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


_LOOKAHEAD = """
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def train(rank, net, images):
    model = DDP(net)
    if rank == 0:
        model(images)
    dist.barrier()
"""


def test_rnk108_looking_ahead_in_a_function_leaves_rnk102_s_findings_alone() -> None:
    """RNK108 reads the collectives of a function before the walk reaches them; a
    call it reads early (`model(images)`, before `model = DDP(net)` is bound) must
    still be classified where the walk meets it."""
    alone = codes_by_line(_LOOKAHEAD, select=("RNK102",))
    together = codes_by_line(_LOOKAHEAD, select=("RNK102", "RNK108"))

    assert alone == [(8, "RNK102")]
    assert [pair for pair in together if pair[1] == "RNK102"] == alone
