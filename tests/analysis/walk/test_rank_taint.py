"""Rank-taint: which expressions depend on the calling rank, and on which axis."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ranklint import Config
from ranklint.analysis.walk.axes import GLOBAL_AXIS, axes_of_expression
from ranklint.analysis.walk.context import FileContext
from ranklint.analysis.walk.defaults import DEFAULT_RANK_NAMES
from ranklint.analysis.walk.names import NamePatterns
from ranklint.analysis.walk.rank import Taint
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


# -- whole taints ---------------------------------------------------------------

_ALL = frozenset({GLOBAL_AXIS})
_DIST = "import torch.distributed as dist"


@pytest.mark.parametrize(
    ("prelude", "expression", "expected"),
    [
        # A comparison is as rank-dependent as its operands, on their axes.
        ("", "rank == 0", Taint(rank=True, axes=_ALL)),
        ("", "0 == tp_rank", Taint(rank=True, axes=frozenset({"tp"}))),
        ("", "0 < rank < world_size", Taint(rank=True, axes=_ALL)),
        # `rank in ranks` tests subgroup membership; the flag survives joins.
        (
            _DIST,
            "dist.get_rank() in ranks",
            Taint(rank=True, axes=_ALL, membership=True, strong=True),
        ),
        (
            "",
            "rank in ranks or helper()",
            Taint(rank=True, via=frozenset({"@local:helper"}), axes=_ALL, membership=True),
        ),
        # Joining operands keeps everything either side carries.
        ("", "tp_rank + dp_rank", Taint(rank=True, axes=frozenset({"tp", "dp"}))),
        (
            _DIST,
            "dist.get_rank() + helper()",
            Taint(rank=True, via=frozenset({"@local:helper"}), axes=_ALL, strong=True),
        ),
        ("", "first() - second()", Taint(via=frozenset({"@local:first", "@local:second"}))),
        ("", "step if tp_rank else -dp_rank", Taint(rank=True, axes=frozenset({"tp", "dp"}))),
        ("", "rank == 0 or verbose", Taint(rank=True, axes=_ALL)),
        ("", "(leader := rank == 0)", Taint(rank=True, axes=_ALL)),
        ("", "{tp_rank, 1}", Taint(rank=True, axes=frozenset({"tp"}))),
        # Calls whose name is a rank query are strong rank sources.
        ("", "trainer.is_world_process_zero()", Taint(rank=True, axes=_ALL, strong=True)),
        (
            "",
            "get_tensor_model_parallel_rank()",
            Taint(rank=True, axes=frozenset({"tp"}), strong=True),
        ),
        ("", "mesh.get_coordinate()[0]", Taint(rank=True, axes=_ALL, strong=True)),
        ("", "tp_rank.real", Taint(rank=True, axes=frozenset({"tp"}))),
        # Other calls: project functions stay open, the rest is rank-invariant.
        ("", "helper()", Taint(via=frozenset({"@local:helper"}))),
        ("", "self.helper()", Taint(via=frozenset({"@self:helper"}))),
        ("", "make_handler()()", Taint()),
        ("", 'config.get("RANK")', Taint()),
        ("import os", "os.getenv()", Taint()),
        ("import os", 'os.environ["RANKX"]', Taint()),
        ("", "mpu.is_pipeline_first_stage() and mpu.is_pipeline_last_stage()", Taint()),
    ],
)
def test_taint_of_an_expression_is_the_join_of_its_rank_sources(
    prelude: str, expression: str, expected: Taint
) -> None:
    found = taint(expression, prelude)

    assert found == expected


@pytest.mark.parametrize(
    ("expression", "axes"),
    [
        ("model_parallel_rank", {"tp", "pp"}),
        ("mpu.get_model_parallel_rank()", {"tp", "pp"}),
        ("tensor_model_parallel_rank", {"tp"}),
    ],
)
def test_model_parallel_rank_varies_along_tensor_and_pipeline_axes_unless_one_is_named(
    expression: str, axes: set[str]
) -> None:
    assert taint(expression).axes == axes


# -- bindings -------------------------------------------------------------------


def test_module_level_binding_is_seen_by_later_module_level_code() -> None:
    found = taints(
        """
        import torch.distributed as dist

        leader = dist.get_rank() == 0
        probe(leader)
        """
    )

    assert [t.rank for t in found] == [True]


def test_binding_inside_a_function_does_not_leak_to_module_level() -> None:
    found = taints(
        """
        import torch.distributed as dist

        def setup():
            leader = dist.get_rank() == 0
            probe(leader)

        probe(leader)
        """
    )

    assert [t.rank for t in found] == [True, False]


def test_tuple_assigned_from_a_tuple_binds_each_name_to_its_own_element() -> None:
    found = taints(
        """
        import torch.distributed as dist

        def f():
            leader, steps = dist.get_rank() == 0, 10
            probe(leader)
            probe(steps)
            steps, leader = 10, dist.get_rank() == 0
            probe(steps)
            probe(leader)
        """
    )

    assert [t.rank for t in found] == [True, False, False, True]


def test_names_unpacked_from_an_opaque_value_are_not_rank_dependent() -> None:
    found = taints(
        """
        import torch.distributed as dist

        def f(pair, sizes):
            leader = dist.get_rank() == 0
            leader, other = pair
            probe(leader)
            for rank, size in enumerate(sizes):
                probe(rank)
        """
    )

    assert [t.rank for t in found] == [False, False]


def test_assigning_an_attribute_of_another_object_does_not_taint_self() -> None:
    found = taints(
        """
        import torch.distributed as dist

        class Trainer:
            def __init__(self, peer):
                peer.leader = dist.get_rank() == 0
                probe(self.leader)
        """
    )

    assert [t.rank for t in found] == [False]


# -- call targets -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("prelude", "call", "via"),
    [
        ("", "cls.create()", {"@self:create"}),
        ("", "Helper.create()", {"@local:Helper.create"}),
        ("", "Helper.Inner.create()", {"@local:Helper.Inner.create"}),
        ("from .utils import save", "save()", {".utils.save"}),
        ("import mypkg.io", "mypkg.io.save()", {"mypkg.io.save"}),
        # Not project functions: methods of objects, builtins, external libraries.
        ("", "obj.create()", set()),
        ("", "ValueError.mro()", set()),
        ("", "Exception.__init__.__call__(self)", set()),
        ("import torch", "torch.save(state, path)", set()),
        ("import torch", "torch.cuda.synchronize()", set()),
        ("import numpy as np", "np.random.seed(0)", set()),
    ],
)
def test_calls_to_project_functions_are_left_open_under_their_resolvable_name(
    prelude: str, call: str, via: set[str]
) -> None:
    found = taint(call, prelude)

    assert (found.rank, found.via) == (False, via)


# -- recursion bounds -------------------------------------------------------------

# One level of each kind of expression the taint looks through; "@" is the inner one.
_TAINT_LEVELS: dict[str, tuple[str, ...]] = {
    "attribute": ("@.x",),
    "pass-through call": ("int(@)",),
    "subscripted value": ("@[0]",),
    "subscript": ("x[@]",),
    "comparison left": ("(@) == 0",),
    "comparison right": ("0 == (@)",),
    "boolean operand": ("x or (@)", "x and (@)"),
    "unary operand": ("not (@)",),
    "binary left": ("(@) + 1",),
    "binary right": ("1 + (@)",),
    "conditional test": ("a if (@) else b",),
    "conditional body": ("(@) if c else b",),
    "conditional else": ("a if c else (@)",),
    "tuple": ("(@,)",),
    "list": ("[@]",),
    "set": ("{@}",),
    "named expression": ("(x := @)",),
    "await": ("await (@)",),
}
_TAINT_DEPTH_LIMIT = 40  # levels below the probed expression that are still evaluated


def _nested(levels: tuple[str, ...], depth: int, leaf: str) -> str:
    expression = leaf
    for index in range(depth):
        expression = levels[index % len(levels)].replace("@", expression)
    return expression


def _taint_in_async_function(expression: str) -> Taint:
    (found,) = taints(f"async def f():\n    probe({expression})\n")
    return found


@pytest.mark.parametrize("levels", _TAINT_LEVELS.values(), ids=_TAINT_LEVELS.keys())
def test_rank_name_at_the_depth_limit_still_taints_the_expression(
    levels: tuple[str, ...],
) -> None:
    expression = _nested(levels, _TAINT_DEPTH_LIMIT, "rank")

    assert _taint_in_async_function(expression) == Taint(rank=True, axes=_ALL)


@pytest.mark.parametrize("levels", _TAINT_LEVELS.values(), ids=_TAINT_LEVELS.keys())
def test_rank_name_past_the_depth_limit_is_not_evaluated_and_the_expression_is_clean(
    levels: tuple[str, ...],
) -> None:
    expression = _nested(levels, _TAINT_DEPTH_LIMIT + 1, "rank")

    assert _taint_in_async_function(expression) == Taint()


# -- axes of group expressions ----------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "axes"),
    [
        ("groups.tp", {"tp"}),
        ('mesh["dp"]', {"dp"}),
        ('mesh[r"tp"]', {"tp"}),
        ("get_group(expert_ranks)", {"ep"}),
        ('("dp", "tp")', {"dp", "tp"}),
        ("[data_group, cp_group]", {"dp", "cp"}),
        ('mesh["model"]', {"tp", "pp"}),
        ('mesh["model", "data"]', {"dp"}),
        ('mesh["XDP"]', set()),
    ],
)
def test_axes_of_a_group_expression_come_from_the_words_it_names(
    expression: str, axes: set[str]
) -> None:
    assert axes_of_expression(cst.parse_expression(expression)) == axes


# One level of each kind of expression whose words name axes; "@" is the inner one.
_WORD_LEVELS: dict[str, tuple[str, str]] = {
    "attribute": ("@.x", "tp"),
    "called function": ("@()", "tp"),
    "call argument": ("@()", "f(tp)"),
    "subscripted value": ("@[0]", "tp"),
    "subscript": ("x[@]", "tp"),
    "tuple": ("(@,)", "tp"),
    "list": ("[@]", "tp"),
}
_WORDS_DEPTH_LIMIT = 12


@pytest.mark.parametrize(("level", "leaf"), _WORD_LEVELS.values(), ids=_WORD_LEVELS.keys())
def test_axis_word_at_the_depth_limit_of_a_group_expression_is_found(level: str, leaf: str) -> None:
    wraps = _WORDS_DEPTH_LIMIT - (leaf != "tp")
    expression = _nested((level,), wraps, leaf)

    assert axes_of_expression(cst.parse_expression(expression)) == {"tp"}


@pytest.mark.parametrize(("level", "leaf"), _WORD_LEVELS.values(), ids=_WORD_LEVELS.keys())
def test_axis_word_past_the_depth_limit_of_a_group_expression_is_not_read(
    level: str, leaf: str
) -> None:
    wraps = _WORDS_DEPTH_LIMIT + 1 - (leaf != "tp")
    expression = _nested((level,), wraps, leaf)

    assert axes_of_expression(cst.parse_expression(expression)) == set()


@pytest.mark.parametrize(
    ("expression", "axes"),
    [
        # Mesh dimension names that begin or end with a string-prefix letter
        # (b, r, u) keep every letter: "tensor" is not "tenso".
        ('mesh["tensor"].get_local_rank()', {"tp"}),
        ('mesh["replicate"].get_local_rank()', {"dp"}),
        ('mesh[r"tp"].get_local_rank()', {"tp"}),
        ("mesh[b'tp'].get_local_rank()", {GLOBAL_AXIS}),  # bytes name no dimension
    ],
)
def test_mesh_dimension_names_are_read_as_string_values_without_losing_letters(
    expression: str, axes: set[str]
) -> None:
    assert taint(expression).axes == axes


# -- binding forms, control dependence and rank-local state (issue 14) --------


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # A library function known to return (rank, world_size).
        (
            "from mmengine.dist import get_dist_info\nr, w = get_dist_info()\nprobe(r)\nprobe(w)",
            [True, False],
        ),
        # A name that looks like a rank, unpacked from a call the analysis cannot see into.
        ("rank, world_size = unknown.setup()\nprobe(rank)\nprobe(world_size)", [True, False]),
        ("self_rank, n = unknown.setup()\nprobe(self_rank)", [False]),
        # Unpacking from a loop or a plain value keeps unknown parts clean.
        ("for rank, ranks in enumerate(groups):\n    probe(rank)", [False]),
        ("pair = (1, 2)\nrank, other = pair\nprobe(rank)", [False]),
        # A starred target holds an unknown slice of the result.
        ("import os\n*parts, last = os.environ['RANK'].split()\nprobe(parts)", [False]),
    ],
    ids=["known-library", "rank-like-name", "other-name", "loop", "plain-value", "starred"],
)
def test_unpacked_names_take_the_rank_part_of_their_call(source: str, expected: list[bool]) -> None:
    assert [t.rank for t in taints(source)] == expected


def test_unpacking_a_project_call_names_each_element_for_the_project_phase() -> None:
    first, second, last = taints(
        """
        r, w = setup()
        probe(r)
        probe(w)
        *_, tail = setup()
        probe(tail)
        """
    )

    assert (first.rank, first.via) == (False, frozenset({"@local:setup#0"}))
    assert second.via == frozenset({"@local:setup#1"})
    assert last.via == frozenset({"@local:setup#-1"})


def test_awaited_project_call_unpacks_like_a_plain_call() -> None:
    (found,) = taints("async def f():\n    r, w = await setup()\n    probe(r)\n")

    assert found.via == frozenset({"@local:setup#0"})


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            """
            import torch.distributed as dist
            def f(t):
                if dist.get_rank() == 0:
                    stop = t.item() > 3
                else:
                    stop = False
                probe(stop)
            """,
            True,
        ),
        (
            """
            import torch.distributed as dist
            def f(t, flag):
                if flag:
                    stop = True
                else:
                    stop = False
                probe(stop)
            """,
            False,
        ),
        # After a broadcast the flag holds rank 0's value on every rank.
        (
            """
            import torch.distributed as dist
            def f(flag):
                if dist.get_rank() == 0:
                    flag = compute()
                dist.broadcast(flag, src=0)
                probe(flag)
            """,
            False,
        ),
        # Computed in a loop whose trip count depends on the rank.
        (
            """
            import torch.distributed as dist
            def f(files):
                count = 0
                for name in files[dist.get_rank()::2]:
                    count += 1
                probe(count)
            """,
            True,
        ),
        (
            """
            import torch.distributed as dist
            def f(batches):
                done = False
                while not done and dist.get_rank() > 0:
                    done = step()
                probe(done)
            """,
            True,
        ),
        # State written under a rank condition, read in another method.
        (
            """
            import torch.distributed as dist
            class Saver:
                def update(self, step):
                    if dist.get_rank() == 0:
                        self.last_synced = step
                def due(self):
                    probe(self.last_synced)
            """,
            True,
        ),
    ],
    ids=["if-else", "flag-branch", "broadcast-sanitises", "sharded-loop", "while", "attribute"],
)
def test_values_assigned_under_a_rank_dependent_test_depend_on_the_rank(
    source: str, expected: bool
) -> None:
    (found,) = taints(source)

    assert found.possible is expected


def test_control_dependence_does_not_make_the_value_a_membership_test() -> None:
    (found,) = taints("if rank in ranks:\n    x = 1\nprobe(x)\n")

    assert (found.rank, found.membership) == (True, False)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            """
            import torch.distributed as dist
            LEADER = None
            def init():
                global LEADER
                LEADER = dist.get_rank() == 0
            probe(LEADER)
            def use():
                probe(LEADER)
            """,
            [True, True],
        ),
        (
            """
            import torch.distributed as dist
            LEADER = True
            def init():
                LEADER = dist.get_rank() == 0
                probe(LEADER)
            probe(LEADER)
            """,
            [True, False],
        ),
        (
            """
            import torch.distributed as dist
            def outer():
                leader = False
                def init():
                    nonlocal leader
                    leader = dist.get_rank() == 0
                probe(leader)
            """,
            [True],
        ),
        (
            """
            import torch.distributed as dist
            def f():
                global LEADER
                probe(LEADER)
            """,
            [False],
        ),
    ],
    ids=["global", "local-shadows", "nonlocal", "global-unbound"],
)
def test_global_and_nonlocal_assignments_write_the_declared_scope(
    source: str, expected: list[bool]
) -> None:
    assert [t.rank for t in taints(source)] == expected


@pytest.mark.parametrize(
    ("prelude", "expression", "expected"),
    [
        ("import random", "random.random() < 0.1", True),
        ("import numpy as np", "np.random.rand() < p", True),
        ("import torch", "torch.rand(1) < p", True),
        ("import torch", "torch.rand(1, generator=g) < p", False),
        ("import os", 'os.environ[r"RANK"]', True),
        ("import os", "os.environ['WORLD_SIZE']", False),
        ("", "files[rank::world]", True),
        ("", "files[:n]", False),
    ],
)
def test_random_draws_raw_environment_keys_and_rank_slices(
    prelude: str, expression: str, expected: bool
) -> None:
    assert taint(expression, prelude).rank is expected


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("args.local_rank != -1", False),
        ("local_rank == -1", False),
        ("rank >= 0", False),
        ("self.rank < 0", False),
        ("rank > -1", False),
        ("rank <= -1", False),
        ("rank != 1", True),
        ("rank >= 1", True),
        ("rank < 1", True),
        ("position == -1", False),
        ("0 <= rank < 4", True),
    ],
)
def test_is_distributed_checks_on_a_rank_are_the_same_on_every_rank(
    expression: str, expected: bool
) -> None:
    assert taint(expression).rank is expected


def test_branch_test_is_judged_before_its_arms_assign_what_it_reads() -> None:
    found = taints(
        """
        import torch.distributed as dist
        class Task:
            def seed(self):
                probe(self._seed is None)
                if self._seed is None:
                    self._seed = dist.get_rank()
                probe(self._seed is None)
        """
    )

    assert [t.rank for t in found] == [False, True]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("stats['lr'] = 0.1", True),
        ("stats.update(lr=0.1)", True),
        ("stats.setdefault('lr', 0.1)", True),
        ("extra.append(1)", False),  # another container
        ("print(stats.get('lr'))", False),  # read, not changed
    ],
)
def test_containers_changed_in_place_under_a_rank_test_depend_on_the_rank(
    body: str, expected: bool
) -> None:
    (found,) = taints(
        f"""
        import torch.distributed as dist
        stats = {{}}
        extra = []
        if dist.get_rank() == 0:
            {body}
        probe(stats)
        """
    )

    assert found.rank is expected


def test_attribute_container_changed_under_a_rank_test_depends_on_the_rank() -> None:
    first, second = taints(
        """
        import torch.distributed as dist
        class Logger:
            def log(self, key, value):
                if dist.get_rank() == 0:
                    self.history[key] = value
                probe(self.history)
                self.other[key] = value
                probe(self.other)
        """
    )

    assert (first.rank, second.rank) == (True, False)


def test_container_changed_in_both_arms_of_a_rank_test_keeps_a_uniform_length() -> None:
    both, one = taints(
        """
        import torch.distributed as dist
        def f(infos):
            both, one = [], []
            for info in infos:
                if dist.get_rank() == info.src:
                    both.append(info.weight)
                    one.append(info.weight)
                else:
                    both.append(None)
            probe(both)
            probe(one)
        """
    )

    assert (both.share, one.share) == (False, True)


# -- comprehension targets and elements of a call's result --------------------------


@pytest.mark.parametrize(
    ("expression", "rank"),
    [
        # The target counts through a uniform iterable on every rank alike.
        ("[cp_rank * tp + 1 for cp_rank in range(cp)]", False),
        ("{rank: 0 for rank in range(world)}", False),
        ("[r for rank in range(world) for r in (rank, rank + 1)]", False),
        ("[local_rank for local_rank, _ in enumerate(devices)]", False),
        # A rank name that no clause binds is still the caller's rank.
        ("[rank * tp + i for i in range(tp)]", True),
        # A target counting through rank-dependent values takes their taint.
        ("[g for g in range(dist.get_rank())]", True),
        # A filter on the rank selects a per-rank share.
        ("[f for i, f in enumerate(files) if i % world == rank]", True),
        # Outside the comprehension the name is unbound again: a rank name.
        ("([0 for rank in range(4)], rank)", True),
    ],
)
def test_comprehension_targets_take_their_iterables_taint(expression: str, rank: bool) -> None:
    assert taint(expression, "import torch.distributed as dist").rank is rank


@pytest.mark.parametrize(
    ("expression", "via"),
    [
        ("setting()[1]", {"@local:setting#1"}),
        ("setting()[-1]", {"@local:setting#-1"}),
        # Not a literal index, or not a call: kept whole.
        ("setting()[i]", {"@local:setting"}),
        ("setting()[1:]", {"@local:setting"}),
    ],
)
def test_literal_index_of_a_project_calls_result_is_that_element(
    expression: str, via: set[str]
) -> None:
    found = taint(expression)

    assert (found.rank, found.via) == (False, via)


@pytest.mark.parametrize(
    ("expression", "rank"),
    [
        ("get_dist_info()[0]", True),
        ("get_dist_info()[1]", False),
    ],
)
def test_literal_index_of_a_library_rank_tuple_is_its_rank_element(
    expression: str, rank: bool
) -> None:
    assert taint(expression, "from mmengine.dist import get_dist_info").rank is rank
