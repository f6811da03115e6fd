"""RNK113: a list of ranks passed as the root of a collective."""

from __future__ import annotations

import pytest

from tests.conftest import codes_by_line

SELECT = ("RNK113",)
HEADER = "import torch.distributed as dist\n\n\n"


def _lines(body: str) -> list[int]:
    return [line for line, _ in codes_by_line(HEADER + body, select=SELECT)]


@pytest.mark.parametrize(
    "call",
    [
        "dist.broadcast(t, src=ranks, group=g)",
        "dist.broadcast(t, ranks, g)",
        "dist.broadcast_object_list([t], group_src=ranks, group=g)",
        "dist.reduce(t, dst=ranks, group=g)",
    ],
)
def test_rank_list_bound_to_a_name_is_reported_as_root(call: str) -> None:
    body = f"def share(t, g):\n    ranks = dist.get_process_group_ranks(g)\n    {call}\n"

    assert _lines(body) == [6]


@pytest.mark.parametrize(
    "setup",
    [
        "ranks = dist.get_process_group_ranks(g)[0]",
        "ranks = dist.get_process_group_ranks(g)\n    ranks = ranks[0]",
        "ranks = dist.get_global_rank(g, 0)",
    ],
)
def test_one_member_of_the_rank_list_is_not_reported(setup: str) -> None:
    body = f"def share(t, g):\n    {setup}\n    dist.broadcast(t, src=ranks, group=g)\n"

    assert _lines(body) == []


def test_rank_list_name_of_another_function_is_not_reported() -> None:
    body = (
        "def first(g):\n"
        "    ranks = dist.get_process_group_ranks(g)\n"
        "    return ranks\n"
        "def second(t, g, ranks):\n"
        "    dist.broadcast(t, src=ranks, group=g)\n"
    )

    assert _lines(body) == []


def test_rank_list_passed_to_a_non_rooted_collective_is_not_reported() -> None:
    body = (
        "def share(t, g):\n    ranks = dist.get_process_group_ranks(g)\n"
        "    dist.all_reduce(t, group=g)\n    print(ranks)\n"
    )

    assert _lines(body) == []
