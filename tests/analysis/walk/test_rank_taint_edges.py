"""Rank-taint edge cases: joins, scopes, control dependence, comprehensions and depth bounds."""

from __future__ import annotations

import pytest

from ranklint.analysis.walk.axes import GLOBAL_AXIS
from ranklint.analysis.walk.rank import Taint
from tests.analysis.walk.test_rank_taint import taint, taints

_ALL = frozenset({GLOBAL_AXIS})
_TP = frozenset({"tp"})
_DIST = "import torch.distributed as dist"
_DEPTH_LIMIT = 40  # levels below the probed expression that are still evaluated


def _nested(level: str, depth: int, leaf: str) -> str:
    expression = leaf
    for _ in range(depth):
        expression = level.replace("@", expression)
    return expression


# -- joins ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "expression",
    ["files[rank::world] + [tp_rank]", "[tp_rank] + files[rank::world]"],
    ids=["share on the left", "share on the right"],
)
def test_joining_a_share_of_a_sequence_with_another_rank_value_keeps_the_share(
    expression: str,
) -> None:
    found = taint(expression)

    assert found == Taint(rank=True, axes=frozenset({GLOBAL_AXIS, "tp"}), share=True)


# -- unpacking --------------------------------------------------------------------


def test_unpacking_a_rank_name_gives_each_element_an_entirely_clean_taint() -> None:
    found = taints(
        """
        def f(tp_rank):
            first, second = tp_rank
            probe(first)
        """
    )

    assert found == [Taint()]


def test_unpacking_a_value_built_from_a_project_call_keeps_its_axes_per_element() -> None:
    found = taints(
        """
        def f():
            pair = helper() + tp_rank
            first, second = pair
            probe(first)
        """
    )

    assert found == [Taint(via=frozenset({"@local:helper#0"}), axes=_TP)]


def test_element_open_on_a_project_call_keeps_every_axis_even_under_an_axis_name() -> None:
    found = taints(
        """
        def f():
            pair = helper() + rank
            first, tp_part = pair
            probe(tp_part)
        """
    )

    assert found == [Taint(via=frozenset({"@local:helper#1"}), axes=_ALL)]


def test_starred_target_of_an_unpacked_call_is_rebound_to_a_clean_value() -> None:
    found = taints(
        f"""
        {_DIST}

        def f():
            parts = dist.get_rank()
            *parts, last = helper()
            probe(parts)
        """
    )

    assert found == [Taint()]


# -- assignments --------------------------------------------------------------------


def test_constant_assigned_to_a_rank_named_variable_is_rank_invariant() -> None:
    found = taints(
        """
        def f():
            rank = 0
            probe(rank)
        """
    )

    assert found == [Taint()]


@pytest.mark.parametrize(
    ("assignment", "axes"),
    [
        ("dp_rank = dist.get_rank() // tp_size", {"dp"}),
        ("self_dp = dist.get_rank() % dp_size", {"dp"}),
        ("dp_view = tp_rank + 1", {"tp"}),
        ("position = dist.get_rank()", {GLOBAL_AXIS}),
    ],
    ids=["rank on every axis", "attribute-like name", "rank on a named axis", "no axis name"],
)
def test_name_of_the_assigned_variable_narrows_only_a_rank_on_every_axis(
    assignment: str, axes: set[str]
) -> None:
    target = assignment.partition(" =")[0]

    found = taints(f"{_DIST}\n\ndef f(tp_size, dp_size):\n    {assignment}\n    probe({target})\n")

    assert [t.axes for t in found] == [axes]


# -- scopes -------------------------------------------------------------------------


def test_nonlocal_assignment_writes_the_nearest_enclosing_function_that_has_the_name() -> None:
    found = taints(
        f"""
        {_DIST}

        def outer():
            def middle():
                leader = False

                def inner():
                    nonlocal leader
                    leader = dist.get_rank() == 0

                probe(leader)
        """
    )

    assert [t.rank for t in found] == [True]


def test_global_name_is_read_from_module_level_even_when_an_enclosing_function_binds_it() -> None:
    found = taints(
        f"""
        {_DIST}

        leader = dist.get_rank() == 0

        def outer():
            leader = False

            def inner():
                global leader
                probe(leader)
        """
    )

    assert [t.rank for t in found] == [True]


def test_self_of_a_nested_function_is_not_the_enclosing_method_instance() -> None:
    found = taints(
        f"""
        {_DIST}

        class Trainer:
            def __init__(self):
                self.leader = dist.get_rank() == 0

                def hook(self):
                    probe(self.leader)
        """
    )

    assert found == [Taint()]


# -- control dependence -------------------------------------------------------------


def test_assignment_under_a_share_test_is_decided_by_the_rank_but_is_no_share() -> None:
    found = taints(
        """
        def f(files, world):
            if files[rank::world]:
                chosen = 1
            probe(chosen)
        """
    )

    assert found == [Taint(rank=True, axes=_ALL)]


def test_assignment_under_a_rank_test_keeps_the_taint_of_the_assigned_value() -> None:
    found = taints(
        """
        def f():
            if rank == 0:
                chosen = helper()
            probe(chosen)
        """
    )

    assert found == [Taint(rank=True, via=frozenset({"@local:helper"}), axes=_ALL)]


def test_container_changed_under_a_rank_test_keeps_its_earlier_taint_and_becomes_a_share() -> None:
    found = taints(
        """
        def f():
            items = helper()
            if rank == 0:
                items.append(1)
            probe(items)
        """
    )

    assert found == [Taint(rank=True, via=frozenset({"@local:helper"}), axes=_ALL, share=True)]


def test_container_of_an_enclosing_function_changed_in_a_nested_one_is_a_share_there() -> None:
    found = taints(
        """
        def outer():
            items = []

            def inner():
                if rank == 0:
                    items.append(1)

            probe(items)
        """
    )

    assert found == [Taint(rank=True, axes=_ALL, share=True)]


def test_module_level_container_changed_in_a_function_is_a_share_at_module_level() -> None:
    found = taints(
        """
        items = helper()

        def f():
            if rank == 0:
                items.append(1)

        probe(items)
        """
    )

    assert found == [Taint(rank=True, via=frozenset({"@local:helper"}), axes=_ALL, share=True)]


def test_parameter_changed_under_a_rank_test_does_not_taint_a_module_level_name() -> None:
    found = taints(
        """
        def f(items):
            if rank == 0:
                items.append(1)
            probe(items)

        probe(items)
        """
    )

    assert found == [Taint(rank=True, axes=_ALL, share=True), Taint()]


def test_global_container_changed_under_a_rank_test_is_a_share_at_module_level() -> None:
    found = taints(
        """
        def f():
            global items
            if rank == 0:
                items.append(1)

        probe(items)
        """
    )

    assert found == [Taint(rank=True, axes=_ALL, share=True)]


def test_attribute_of_another_object_changed_in_a_method_does_not_taint_self() -> None:
    found = taints(
        """
        class Trainer:
            def step(self, peer):
                if rank == 0:
                    peer.cache.append(1)
                probe(self.cache)
        """
    )

    assert found == [Taint()]


# -- comprehensions -----------------------------------------------------------------


@pytest.mark.parametrize(
    "expression",
    [
        "[f for i, f in enumerate(files) if i % world == rank]",
        "[f for f in files[rank::world]]",
        "{f for f in shards if f.owner == rank}",
        "(x for row in rows for x in row if x == rank)",
        "{k: v for k, v in pairs for _ in range(rank)}",
    ],
)
def test_comprehension_whose_size_depends_on_the_rank_is_a_share(expression: str) -> None:
    found = taint(expression)

    assert found == Taint(rank=True, axes=_ALL, share=True)


@pytest.mark.parametrize(
    "expression",
    ["[tp_rank for _ in range(3)]", "{tp_rank: 1 for _ in range(3)}", "{0: tp_rank for _ in x}"],
)
def test_comprehension_of_rank_values_over_a_fixed_size_is_rank_dependent_but_no_share(
    expression: str,
) -> None:
    found = taint(expression)

    assert found == Taint(rank=True, axes=_TP)


_COMPREHENSION_LEVELS: dict[str, tuple[str, Taint]] = {
    "element": ("[@ for _ in x]", Taint(rank=True, axes=_ALL)),
    "iterable": ("[y for y in @]", Taint(rank=True, axes=_ALL, share=True)),
    "filter": ("[y for y in x if @]", Taint(rank=True, axes=_ALL, share=True)),
}


@pytest.mark.parametrize(
    ("level", "expected"), _COMPREHENSION_LEVELS.values(), ids=_COMPREHENSION_LEVELS.keys()
)
def test_rank_name_at_the_depth_limit_of_nested_comprehensions_still_taints_them(
    level: str, expected: Taint
) -> None:
    found = taint(_nested(level, _DEPTH_LIMIT, "rank"))

    assert found == expected


@pytest.mark.parametrize(
    ("level", "expected"), _COMPREHENSION_LEVELS.values(), ids=_COMPREHENSION_LEVELS.keys()
)
def test_rank_name_past_the_depth_limit_of_nested_comprehensions_is_not_evaluated(
    level: str, expected: Taint
) -> None:
    found = taint(_nested(level, _DEPTH_LIMIT + 1, "rank"))

    assert found == Taint()


# -- slices -------------------------------------------------------------------------


@pytest.mark.parametrize("level", ["files[@::n]", "files[:@]", "files[::@]"])
def test_rank_name_at_the_depth_limit_of_nested_slice_bounds_still_makes_a_share(
    level: str,
) -> None:
    found = taint(_nested(level, _DEPTH_LIMIT, "rank"))

    assert found == Taint(rank=True, axes=_ALL, share=True)


@pytest.mark.parametrize("level", ["files[@::n]", "files[:@]", "files[::@]"])
def test_rank_name_past_the_depth_limit_of_nested_slice_bounds_is_not_evaluated(
    level: str,
) -> None:
    found = taint(_nested(level, _DEPTH_LIMIT + 1, "rank"))

    assert found == Taint()


# -- calls --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "axes"),
    [
        ("dist.get_rank(tp_group)", {"tp"}),
        ("dist.get_rank(group=tp_group)", {"tp"}),
        ("dist.get_rank(group=world_group)", {GLOBAL_AXIS}),
        ("dist.get_rank()", {GLOBAL_AXIS}),
    ],
)
def test_rank_query_with_a_group_varies_along_the_axis_of_that_group(
    expression: str, axes: set[str]
) -> None:
    found = taint(expression, _DIST)

    assert found == Taint(rank=True, axes=frozenset(axes), strong=True)


@pytest.mark.parametrize(
    ("expression", "axes"),
    [
        ("gpc.get_local_rank(ParallelMode.TENSOR)", {"tp"}),
        ("mpu.get_data_parallel_rank(ParallelMode.PIPELINE)", {"dp", "pp"}),
        ("gpc.get_local_rank(mode)", {GLOBAL_AXIS}),
    ],
)
def test_rank_named_call_varies_along_the_axes_its_arguments_name(
    expression: str, axes: set[str]
) -> None:
    found = taint(expression)

    assert found == Taint(rank=True, axes=frozenset(axes), strong=True)


def test_project_call_given_a_rank_number_stays_open_without_rank_taint() -> None:
    found = taint("helper(rank, tp_rank == 0)")

    assert found == Taint(via=frozenset({"@local:helper"}))


def test_project_call_given_a_share_and_a_membership_test_is_a_share_but_no_membership() -> None:
    found = taint("helper(files[rank::world], rank in ranks)")

    assert found == Taint(rank=True, via=frozenset({"@local:helper"}), axes=_ALL, share=True)


# -- comparisons ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "expression",
    ["rank < split < world_size", "rank != -cfg.offset", "rank == -offset", "rank >= -1"],
)
def test_rank_comparison_that_is_not_a_distributed_run_check_stays_rank_dependent(
    expression: str,
) -> None:
    found = taint(expression)

    assert found.rank
