"""RNK110: ranks numbered within a group, passed or compared where torch wants global ranks."""

from __future__ import annotations

import pytest

from ranklint.rules.collectives._group_local import NODE_KINDS
from ranklint.rules.collectives.group_local_root import GroupLocalRoot
from tests.conftest import codes_by_line, findings_of

SELECT = ("RNK110",)
HEADER = "import torch.distributed as dist\n\n\n"


def _lines(body: str) -> list[int]:
    return [line for line, _ in codes_by_line(HEADER + body, select=SELECT)]


@pytest.mark.parametrize(
    ("setup", "root", "source"),
    [
        ("r = dist.get_rank(g)", "r", "from `dist.get_rank(g)`"),
        ("r = dist.get_rank(group=g)", "r", "from `dist.get_rank(group=g)`"),
        ("r = pg.rank()", "r", "from `pg.rank()`"),
        ("r = dist.get_rank(g)", "(r + 1) % dist.get_world_size(g)", "from `dist.get_rank(g)`"),
        ("r = dist.get_rank(g)", "r - 1", "from `dist.get_rank(g)`"),
        ("r = dist.get_rank(g)", "1 + r", "from `dist.get_rank(g)`"),
        ("n = dist.get_world_size(g)", "n - 1", "from `dist.get_world_size(g)`"),
        ("n = pg.size()", "n - 1", "from `pg.size()`"),
        ("r = int(dist.get_rank(g))", "r", "from `dist.get_rank(g)`"),
        ("r = dist.get_group_rank(g, 3)", "r", "from `dist.get_group_rank(g, 3)`"),
        ("r = mesh.get_local_rank('tp')", "r", "from `mesh.get_local_rank('tp')`"),
        ("r = mesh.get_coordinate()[0]", "r", "from `mesh.get_coordinate()[0]`"),
        ("r = get_tensor_model_parallel_rank()", "r", "from `get_tensor_model_parallel_rank()`"),
        ("n = get_data_parallel_world_size()", "n - 1", "from `get_data_parallel_world_size()`"),
        ("r: int = process_group.rank()", "r", "from `process_group.rank()`"),
        ("r = (dist.get_rank(g) + 1) % 4", "r", "from `dist.get_rank(g)`"),
    ],
)
def test_root_derived_from_a_group_query_is_reported_with_its_source(
    setup: str, root: str, source: str
) -> None:
    body = (
        f"def share(t, g, mesh, process_group, pg):\n    {setup}\n"
        f"    dist.broadcast(t, {root}, g)\n"
    )

    [finding] = findings_of(HEADER + body, select=SELECT)

    assert finding.line == 6
    assert f"is a rank within `g` ({source})" in finding.message


@pytest.mark.parametrize(
    ("setup", "root", "source"),
    [
        ("if pg.rank() == r:\n        t.zero_()", "r", "compared with `pg.rank()`"),
        ("if r == pg.rank():\n        t.zero_()", "r + 1", "compared with `pg.rank()`"),
        ("if dist.get_rank(g) != r:\n        t.zero_()", "r", "compared with `dist.get_rank(g)`"),
        ("ok = dist.get_rank(group=g) == r", "r", "compared with `dist.get_rank(group=g)`"),
    ],
)
def test_root_compared_with_a_group_query_says_so(setup: str, root: str, source: str) -> None:
    body = f"def share(t, g, pg, r):\n    {setup}\n    dist.broadcast(t, {root}, g)\n"

    [finding] = findings_of(HEADER + body, select=SELECT)

    assert f"({source})" in finding.message


@pytest.mark.parametrize(
    ("setup", "root"),
    [
        ("r = dist.get_rank()", "r"),
        ("r = dist.get_rank(None)", "r"),
        ("r = dist.get_rank(group=None)", "r"),
        ("r = dist.get_rank(dist.group.WORLD)", "r"),
        ("n = dist.get_world_size(g)", "n"),
        ("n = dist.get_world_size(g)", "n + 1"),
        ("r = dist.get_rank(g)", "dist.get_global_rank(g, r)"),
        ("r = dist.get_rank(g)", "dist.get_process_group_ranks(g)[r]"),
        ("r = dist.get_rank(g)", "r * 2 + offset"),
        ("r = dist.get_rank(g)", "r + offset"),
        ("r = t.rank()", "r"),
        ("r = mesh.rank()", "r"),
        ("r = get_tensor_model_parallel_src_rank()", "r"),
    ],
)
def test_root_that_is_global_or_unknown_is_not_reported(setup: str, root: str) -> None:
    body = (
        f"def share(t, g, mesh, offset):\n    {setup}\n    dist.broadcast(t, src={root}, group=g)\n"
    )

    assert _lines(body) == []


@pytest.mark.parametrize("group", ["", ", group=None", ", group=dist.group.WORLD", ", None"])
def test_group_local_root_on_the_default_group_is_not_reported(group: str) -> None:
    body = f"def share(t, g):\n    r = dist.get_rank(g)\n    dist.broadcast(t, r{group})\n"

    assert _lines(body) == []


def test_loop_index_over_the_group_size_is_reported_as_root() -> None:
    body = (
        "def scan(t, cp_group):\n"
        "    for i in range(dist.get_world_size(cp_group)):\n"
        "        dist.broadcast(t, src=i, group=cp_group)\n"
    )

    assert _lines(body) == [6]


def test_loop_over_a_literal_range_is_not_a_group_rank() -> None:
    body = "def scan(t, g):\n    for i in range(4):\n        dist.broadcast(t, src=i, group=g)\n"

    assert _lines(body) == []


@pytest.mark.parametrize("comparison", ["pg.rank() == leader", "leader != dist.get_rank(pg)"])
def test_name_compared_with_a_group_rank_query_is_reported_as_root(comparison: str) -> None:
    body = (
        "def run(pg, leader, t):\n"
        f"    if {comparison}:\n"
        "        t.fill_(1)\n"
        "    dist.broadcast(t, leader, group=pg)\n"
    )

    assert _lines(body) == [7]


@pytest.mark.parametrize("comparison", ["pg.rank() < leader", "pg.rank() == leader == 0"])
def test_order_and_chained_comparisons_are_not_evidence(comparison: str) -> None:
    body = (
        "def run(pg, leader, t):\n"
        f"    if {comparison}:\n"
        "        t.fill_(1)\n"
        "    dist.broadcast(t, leader, group=pg)\n"
    )

    assert _lines(body) == []


def test_literal_root_compared_with_the_same_groups_rank_is_reported() -> None:
    body = (
        "def share(keys, group):\n"
        "    if dist.get_rank(group) == 0:\n"
        "        keys[0] = 1\n"
        "    dist.broadcast_object_list(keys, src=0, group=group)\n"
        "    dist.broadcast_object_list(keys, src=1, group=group)\n"
    )

    assert _lines(body) == [7]


def test_literal_root_compared_with_another_groups_rank_is_not_reported() -> None:
    body = (
        "def share(keys, group, other):\n"
        "    if dist.get_rank(other) == 0:\n"
        "        keys[0] = 1\n"
        "    dist.broadcast_object_list(keys, src=0, group=group)\n"
    )

    assert _lines(body) == []


def test_literal_root_with_a_subgroup_and_no_comparison_is_left_to_rnk109() -> None:
    body = "def share(t, dp_group):\n    dist.broadcast(t, src=0, group=dp_group)\n"

    assert _lines(body) == []


def test_group_src_keyword_is_not_reported() -> None:
    body = (
        "def share(t, g):\n"
        "    r = dist.get_rank(g)\n"
        "    dist.broadcast(t, group_src=r, group=g)\n"
        "    dist.gather(t, None, group_dst=r, group=g)\n"
    )

    assert _lines(body) == []


def test_gather_dst_compared_with_group_rank_is_reported() -> None:
    body = (
        "def gather(x, tp_group, dst=0):\n"
        "    out = [x, x] if dist.get_rank(tp_group) == dst else None\n"
        "    dist.gather(x, out, dst=dst, group=tp_group)\n"
    )

    assert _lines(body) == [6]


def test_attribute_compared_in_init_is_reported_in_another_method() -> None:
    body = (
        "class Wrapper:\n"
        "    def __init__(self, group, coordinator):\n"
        "        self.group = group\n"
        "        self.coordinator = coordinator\n"
        "        self.is_coordinator = dist.get_rank(group) == coordinator\n"
        "\n"
        "    def share(self, objs):\n"
        "        dist.broadcast_object_list(objs, src=self.coordinator, group=self.group)\n"
    )

    assert _lines(body) == [11]


def test_local_names_of_one_method_do_not_leak_into_another() -> None:
    body = (
        "class Wrapper:\n"
        "    def first(self, g):\n"
        "        r = dist.get_rank(g)\n"
        "        return r\n"
        "\n"
        "    def second(self, t, g, r):\n"
        "        dist.broadcast(t, src=r, group=g)\n"
    )

    assert _lines(body) == []


def test_stored_group_rank_compared_with_a_global_root_is_reported_at_the_comparison() -> None:
    body = (
        "class Bcast:\n"
        "    @staticmethod\n"
        "    def forward(ctx, src, group, t):\n"
        "        ctx.src, ctx.group = src, group\n"
        "        ctx.rank = dist.get_rank(group=group)\n"
        "        return t\n"
        "\n"
        "    @staticmethod\n"
        "    def backward(ctx, grad):\n"
        "        dist.reduce(grad, ctx.src, group=ctx.group)\n"
        "        if ctx.src != ctx.rank:\n"
        "            grad.zero_()\n"
        "        return grad\n"
    )

    found = findings_of(HEADER + body, select=SELECT)

    assert [f.line for f in found] == [14]
    assert "`ctx.src`" in found[0].message
    assert "`ctx.rank`" in found[0].message


def test_stored_global_rank_compared_with_a_root_is_not_reported() -> None:
    body = (
        "def backward(grad, src, group):\n"
        "    rank = dist.get_rank()\n"
        "    dist.reduce(grad, src, group=group)\n"
        "    if src != rank:\n"
        "        grad.zero_()\n"
    )

    assert _lines(body) == []


def test_stored_group_rank_compared_with_a_value_never_used_as_root_is_not_reported() -> None:
    body = (
        "def step(t, group, leader):\n"
        "    rank = dist.get_rank(group)\n"
        "    if rank != leader:\n"
        "        t.zero_()\n"
        "    dist.all_reduce(t, group=group)\n"
    )

    assert _lines(body) == []


def test_message_names_the_group_the_source_and_the_group_keyword() -> None:
    body = "def share(t, cp_group):\n    dist.broadcast(t, src=cp_group.rank(), group=cp_group)\n"

    [finding] = findings_of(HEADER + body, select=SELECT)

    assert finding.message.startswith(
        "`src=cp_group.rank()` of `broadcast` is a rank within `cp_group` (from `cp_group.rank()`)"
    )
    assert "`group_src=` (torch >= 2.6)" in finding.message
    assert "dist.get_global_rank(cp_group, ...)" in finding.message


def test_long_root_is_shortened_in_the_message() -> None:
    body = (
        "def share(t, cp_group):\n"
        "    dist.broadcast(t, src=(dist.get_rank(cp_group) + 1) % dist.get_world_size(cp_group),"
        " group=cp_group)\n"
    )

    [finding] = findings_of(HEADER + body, select=SELECT)

    assert finding.message.startswith("`src=(dist.get_rank(cp_group) + 1) % dist....` of")


def test_nested_function_is_read_once() -> None:
    body = (
        "def outer(t, g):\n"
        "    def inner():\n"
        "        dist.broadcast(t, src=dist.get_rank(g), group=g)\n"
        "    return inner\n"
    )

    assert _lines(body) == [6]


def test_group_local_root_keeps_every_node_kind_its_reading_needs() -> None:

    assert set(NODE_KINDS) <= set(GroupLocalRoot.handlers_on_visit)


def test_functions_after_a_class_are_still_read() -> None:
    body = (
        "class Wrapper:\n"
        "    def share(self, objs):\n"
        "        return objs\n"
        "\n"
        "\n"
        "def send(t, g):\n"
        "    r = dist.get_rank(g)\n"
        "    dist.broadcast(t, src=r, group=g)\n"
    )

    assert _lines(body) == [11]


def test_comparison_in_a_nested_function_is_reported_once() -> None:
    # The inner function is read with its outer one, and again alone.
    body = (
        "def outer(group):\n"
        "    def backward(grad, src):\n"
        "        rank = dist.get_rank(group=group)\n"
        "        dist.reduce(grad, src, group=group)\n"
        "        if src != rank:\n"
        "            grad.zero_()\n"
        "        return grad\n"
        "    return backward\n"
    )

    assert _lines(body) == [8]
