"""RNK108: a parameter counts as a process group only where the function uses it as one."""

from __future__ import annotations

import textwrap

import pytest

from ranklint import Config, lint_source
from ranklint.testing import actual_findings, expected_findings


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
