"""Rank-dependent values across binding forms and files, seen through RNK102 and RNK105.

Each case writes a small project into ``tmp_path`` and compares the (file, line,
code) of every RNK102/RNK104/RNK105 finding with the ``# expect:`` markers of
its files: a value's rank-dependence matters only where it decides a
collective.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import codes_by_line, marked_project

pytestmark = pytest.mark.timeout(30)

_CODES = ("RNK102", "RNK104", "RNK105")


def _check(root: Path, files: dict[str, str]) -> tuple[list[tuple[str, int, str]], ...]:
    """(found, expected) findings of the project ``files``."""
    return marked_project(root, files, _CODES)


_UTILS = """
    import torch.distributed as dist


    def rank_info():
        if not dist.is_initialized():
            return 0, 1
        return dist.get_rank(), dist.get_world_size()


    def setup():
        r, w = rank_info()
        return r, w


    def save():
        dist.barrier()
"""


def test_unpacked_helper_results_decide_collectives_element_by_element(tmp_path: Path) -> None:
    found, expected = _check(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/utils.py": _UTILS,
            "pkg/train.py": """
                import torch.distributed as dist

                from pkg.utils import save, setup


                def train(t):
                    r, w = setup()
                    if w > 1:
                        dist.all_reduce(t)
                    if r == 0:
                        save()  # expect: RNK102
                    *_, last = setup()
                    if last > 1:
                        dist.all_reduce(t)
            """,
        },
    )

    assert found == expected


def test_attributes_unpacked_in_init_decide_collectives_in_other_methods(tmp_path: Path) -> None:
    found, expected = _check(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/utils.py": _UTILS,
            "pkg/trainer.py": """
                import torch.distributed as dist

                from pkg.utils import save, setup


                class Trainer:
                    def __init__(self):
                        self.r, self.w = setup()

                    def step(self, t):
                        if self.w > 1:
                            dist.all_reduce(t)
                        if self.r == 0:
                            save()  # expect: RNK102
            """,
        },
    )

    assert found == expected


def test_helper_returning_tuples_of_different_shapes_decides_nothing(tmp_path: Path) -> None:
    found, expected = _check(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/info.py": """
                import torch.distributed as dist


                def info(full):
                    if full:
                        return dist.get_rank(), dist.get_world_size(), 0
                    return dist.get_world_size(), 1
            """,
            "pkg/use.py": """
                import torch.distributed as dist

                from pkg.info import info


                def use(t):
                    a, b = info(False)
                    if a > 1:
                        dist.all_reduce(t)
            """,
        },
    )

    assert found == expected == []


def test_ranks_chosen_in_rank_dependent_branches_create_partial_groups(tmp_path: Path) -> None:
    found, expected = _check(
        tmp_path,
        {
            "groups.py": """
                import torch.distributed as dist


                def pairs(rank):
                    ranks = [0, 3] if rank in (0, 3) else [1, 2]
                    return dist.new_group(ranks)  # expect: RNK105


                def halves():
                    if dist.get_rank() < 2:
                        members = [0, 1]
                    else:
                        members = [2, 3]
                    return dist.new_group(members)  # expect: RNK105


                def every_group(world):
                    mine = None
                    for start in range(0, world, 2):
                        ranks = list(range(start, start + 2))
                        group = dist.new_group(ranks)
                        if dist.get_rank() in ranks:
                            mine = group
                    return mine
            """,
        },
    )

    assert found == expected


def test_flags_set_on_one_rank_decide_collectives_until_shared(tmp_path: Path) -> None:
    found, expected = _check(
        tmp_path,
        {
            "loop.py": """
                import torch
                import torch.distributed as dist


                class Controller:
                    def on_batch_end(self, loss):
                        if dist.get_rank() == 0:
                            self.should_stop = loss.item() > 10

                    def maybe_stop(self, t):
                        if self.should_stop:
                            dist.barrier()  # expect: RNK102


                def agreed(loss, t):
                    stop = torch.zeros(1)
                    if dist.get_rank() == 0:
                        stop = (loss > 10).float()
                    dist.broadcast(stop, src=0)
                    if stop.item():
                        dist.barrier()
            """,
        },
    )

    assert found == expected


def test_sharded_sequences_and_global_leaders_are_rank_dependent(tmp_path: Path) -> None:
    found, expected = _check(
        tmp_path,
        {
            "shards.py": """
                import torch.distributed as dist

                LEADER = False


                def init():
                    global LEADER
                    LEADER = dist.get_rank() == 0


                def evaluate(files, t):
                    rank, world = dist.get_rank(), dist.get_world_size()
                    for name in files[rank::world]:
                        dist.all_reduce(t)  # expect: RNK102
                    for name in files[::world]:
                        dist.all_reduce(t)


                def log(t):
                    if LEADER:
                        dist.all_reduce(t)  # expect: RNK102
            """,
        },
    )

    assert found == expected


def test_lazy_initialisation_test_is_judged_before_the_rank_value_is_stored(
    tmp_path: Path,
) -> None:
    found, expected = _check(
        tmp_path,
        {
            "seed.py": """
                import torch.distributed as dist


                class Task:
                    def __init__(self, t):
                        self._seed = None
                        self.t = t

                    def seed(self):
                        if self._seed is None:
                            dist.broadcast(self.t, src=0)
                            self._seed = int(self.t) + dist.get_rank()
                        return self._seed

                    def step(self):
                        if self._seed == 3:
                            dist.barrier()  # expect: RNK102
            """,
        },
    )

    assert found == expected


def test_rank_like_names_from_opaque_calls_and_inherited_framework_collectives(
    tmp_path: Path,
) -> None:
    found, expected = _check(
        tmp_path,
        {
            "callbacks.py": """
                import pytorch_lightning as pl
                import ray.train


                class Report(pl.Callback):
                    def on_train_epoch_end(self, trainer, pl_module):
                        global_rank = ray.train.get_context().get_world_rank()
                        if global_rank == 0:
                            trainer.save_checkpoint("ckpt.pt")  # expect: RNK102
                        world_size = ray.train.get_context().get_world_size()
                        if world_size > 1:
                            trainer.save_checkpoint("all.pt")


                class Model(pl.LightningModule):
                    def test_epoch_end(self, outputs):
                        if self.trainer.is_global_zero:
                            outputs = self.all_gather(outputs)  # expect: RNK102
                        return outputs

                    def validation_epoch_end(self, outputs):
                        if self.trainer.local_rank != -1:
                            outputs = self.all_gather(outputs)
                        return outputs
            """,
        },
    )

    assert found == expected


def test_literal_argument_switches_off_a_collective_under_a_compound_flag(
    tmp_path: Path,
) -> None:
    found, expected = _check(
        tmp_path,
        {
            "log.py": """
                import torch.distributed as dist


                def log(msg, barrier=True):
                    if barrier and dist.is_initialized():
                        dist.barrier()


                def sync(msg, skip=False):
                    if skip or not dist.is_initialized():
                        return
                    dist.barrier()


                def main(ok):
                    if dist.get_rank() == 0:
                        log("quiet", barrier=False)
                        sync("skipped", skip=True)
                    if dist.get_rank() == 0:
                        log("loud", barrier=True)  # expect: RNK102
                    if dist.get_rank() == 0:
                        log("unknown", barrier=ok)  # expect: RNK102
            """,
        },
    )

    assert found == expected


def test_groups_created_lazily_through_a_cache_test_are_not_partial(tmp_path: Path) -> None:
    found, expected = _check(
        tmp_path,
        {
            "pairs.py": """
                import torch.distributed as dist

                _pairs = {}
                GROUPS = []


                def create_all():
                    for i in range(dist.get_world_size() - 1):
                        _pairs[(i, i + 1)] = dist.new_group([i, i + 1])


                def pair(first, second):
                    if len(_pairs) == 0:
                        create_all()
                    return _pairs[(first, second)]


                def any_group():
                    if not GROUPS:
                        create_all()
                    return GROUPS


                def keyed(key):
                    if key not in _pairs:
                        create_all()
                    return _pairs[key]


                def send(obj):
                    if dist.get_rank() == 0:
                        pair(0, 1)
                        any_group()
                        keyed((0, 1))


                def eager():
                    if dist.get_rank() == 0:
                        create_all()  # expect: RNK105
            """,
        },
    )

    assert found == expected


def test_values_shared_through_a_wrapper_collective_are_uniform(tmp_path: Path) -> None:
    found, expected = _check(
        tmp_path,
        {
            "resume.py": """
                import torch.distributed as dist
                from mylib import comm


                def resume(path):
                    found = None
                    if dist.get_rank() == 0:
                        found = path
                    holder = [found]
                    comm.broadcast_object_list(holder)
                    found = holder[0]
                    if found is not None:
                        dist.barrier()


                def unshared(path):
                    found = None
                    if dist.get_rank() == 0:
                        found = path
                    if found is not None:
                        dist.barrier()  # expect: RNK102
            """,
        },
    )

    assert found == expected


def test_flag_passed_on_through_two_calls_is_decided_by_the_callers_early_exit(
    tmp_path: Path,
) -> None:
    found, expected = _check(
        tmp_path,
        {
            "io.py": """
                import torch.distributed as dist


                def gather_state(v, use_zero, dp_group):
                    if use_zero:
                        dist.all_gather([v, v], v, group=dp_group)
                    return v


                def sharder(state, use_zero, dp_group):
                    for v in state:
                        gather_state(v, use_zero=use_zero, dp_group=dp_group)


                class Saver:
                    def save(self, state):
                        # Ranks exit only without ZeRO, where nobody gathers.
                        if not self.use_zero and self.dp_rank != 0:
                            return
                        sharder(state, use_zero=self.use_zero, dp_group=self.dp_group)

                    def save_always(self, state):
                        if self.dp_rank != 0:
                            return
                        sharder(state, self.use_zero, self.dp_group)  # expect: RNK102

                    def save_other_flag(self, state):
                        if not self.use_zero and self.dp_rank != 0:
                            return
                        sharder(state, self.other, self.dp_group)  # expect: RNK102
            """,
        },
    )

    assert found == expected


def test_enclosing_uniform_test_of_self_state_decides_a_methods_collectives(
    tmp_path: Path,
) -> None:
    found, expected = _check(
        tmp_path,
        {
            "noise.py": """
                import torch.distributed as dist


                class NoiseScale:
                    def _sync(self, t):
                        if self.args.pipe_parallel:
                            dist.all_reduce(t, group=self.pipe_group)

                    def _update(self, t):
                        self._sync(t)

                    def update(self, t):
                        if self.args.pipe_parallel:
                            self._update(t)
                        else:
                            # Without pipeline parallelism `_sync` issues nothing.
                            if dist.get_rank() == 0:
                                self._update(t)
                            dist.barrier()

                    def update_forced(self, t):
                        if not self.args.pipe_parallel:
                            if dist.get_rank() == 0:
                                self._update(t)
                        else:
                            if dist.get_rank() == 0:
                                self._update(t)  # expect: RNK102
            """,
        },
    )

    assert found == expected


def test_paths_through_undecided_branches_are_compared_one_by_one(tmp_path: Path) -> None:
    found, expected = _check(
        tmp_path,
        {
            "save.py": """
                import torch.distributed as dist


                def save_each_path_one_barrier(state, single_stage, rank, leader):
                    if rank != 0:
                        dist.barrier()
                        return
                    if single_stage:
                        state.write()
                        dist.barrier()
                    else:
                        if leader:
                            state.write()
                        else:
                            dist.barrier()
                            return
                        dist.barrier()


                def save_flagged_barrier(state, flag, rank):
                    if rank != 0:
                        return
                    if flag:
                        dist.barrier()  # expect: RNK102


                def save_two_barriers_on_one_path(state, flag, rank):
                    if rank != 0:
                        dist.barrier()
                        return
                    dist.barrier()
                    if flag:
                        dist.barrier()  # expect: RNK102
            """,
        },
    )

    assert found == expected


def test_too_many_paths_fall_back_to_the_arms_in_a_row() -> None:
    # 2 x 2**5 paths: over the limit of 32, so both arms of `if a:` count in a row
    # (a documented limit: the barrier on each arm is taken for two).
    flags = "".join(f"    if f{i}:\n        note({i})\n" for i in range(5))
    source = (
        "import torch.distributed as dist\n\n\ndef note(i):\n    pass\n\n\n"
        "def save(state, a, f0, f1, f2, f3, f4, rank):\n"
        "    if rank != 0:\n        dist.barrier()\n        return\n"
        "    if a:\n        dist.barrier()\n    else:\n        dist.barrier()\n" + flags
    )
    fewer = source.replace("    if f4:\n        note(4)\n", "")

    assert [code for _, code in codes_by_line(source, select=("RNK102",))] == ["RNK102"]
    assert codes_by_line(fewer, select=("RNK102",)) == []


def test_literal_comparisons_are_decided_by_the_rank_tests_assumptions(tmp_path: Path) -> None:
    found, expected = _check(
        tmp_path,
        {
            "load.py": """
                import torch.distributed as dist

                from helpers import newer


                def load(kind, version):
                    # Ranks differ only where `kind == "sharded"` is false: then
                    # no rank enters the inner branches.
                    if (dist.get_rank() == 0 and kind == "full") or kind == "sharded":
                        if kind == "sharded":
                            dist.barrier()
                        if kind == "sharded" and newer(version):
                            dist.barrier()


                def load_other(kind, version):
                    if (dist.get_rank() == 0 and kind == "full") or kind == "sharded":
                        if kind == "full":
                            dist.barrier()  # expect: RNK102
            """,
            "helpers.py": """
                def newer(version):
                    return version > 1
            """,
        },
    )

    assert found == expected


def test_flag_passed_on_is_decided_by_the_callers_test(tmp_path: Path) -> None:
    found, expected = _check(
        tmp_path,
        {
            "convert.py": """
                import torch.distributed as dist


                def weight(t, reshard):
                    if reshard:
                        dist.broadcast(t, src=0)
                    return t


                def convert(t, reshard):
                    # Ranks differ only where `reshard` is false: then `weight`
                    # issues nothing.
                    if dist.get_rank() == 0 or reshard:
                        weight(t, reshard)


                def convert_forced(t, reshard):
                    if dist.get_rank() == 0 or reshard:
                        weight(t, True)  # expect: RNK102


                def convert_other_flag(t, reshard, other):
                    if dist.get_rank() == 0 or reshard:
                        weight(t, other)  # expect: RNK102


                def convert_closure(t, reshard):
                    def nested(x):
                        if reshard:
                            dist.broadcast(x, src=0)
                        return x

                    if dist.get_rank() == 0 or reshard:
                        nested(t)
            """,
        },
    )

    assert found == expected


def test_context_manager_waiting_on_entry_or_exit_is_balanced(tmp_path: Path) -> None:
    found, expected = _check(
        tmp_path,
        {
            "first.py": """
                import torch.distributed as dist


                class MainProcessFirst:
                    def __enter__(self):
                        self._first = dist.get_rank() == 0
                        if not self._first:
                            dist.barrier()
                        return self._first

                    def __exit__(self, exc_type, exc, tb):
                        if self._first and dist.is_initialized():
                            dist.barrier()


                class EntryOnly:
                    def __enter__(self):
                        self._first = dist.get_rank() == 0
                        if not self._first:
                            dist.barrier()  # expect: RNK102
                        return self

                    def __exit__(self, exc_type, exc, tb):
                        return False
            """,
        },
    )

    assert found == expected


def test_flag_that_only_might_depend_on_the_rank_is_assumed_next_to_a_rank_test(
    tmp_path: Path,
) -> None:
    found, expected = _check(
        tmp_path,
        {
            "export.py": """
                import torch.distributed as dist
                from megatron.core import parallel_state


                def export(t, inference_pp_size):
                    reshard = False
                    if inference_pp_size != parallel_state.get_pipeline_model_parallel_world_size():
                        reshard = True

                    def weight(x):
                        if reshard:
                            dist.broadcast(x, src=0)
                        return x

                    if dist.get_rank() == 0 or reshard:
                        weight(t)
                    if dist.get_rank() == 0:
                        weight(t)  # expect: RNK102
            """,
        },
    )

    assert found == expected


# -- dicts with constant keys (analysis/walk/containers.py) ---------------------------------

_DICTS = """
    import torch.distributed as dist


    def literal(t):
        who = dist.get_rank()
        flags = {"main": who % 2, "steps": 3}
        if flags["main"]:
            dist.broadcast(t, src=0)  # expect: RNK102
        if flags["steps"] > 1:
            dist.all_reduce(t)


    def stored_by_key(t, world_size):
        flags = {}
        flags["main"] = dist.get_rank() == 0
        flags[0] = world_size > 1
        if flags["main"]:
            dist.barrier()  # expect: RNK102
        if flags[0]:
            dist.barrier()


    def iterated(t):
        info = {"rank": dist.get_rank(), "loss": 1.0}
        for _ in info:
            dist.all_reduce(t)
        if len(info) > 1:
            dist.all_reduce(t)


    def keyed_by_rank(t):
        counts = {dist.get_rank(): 1}
        for _ in counts:
            dist.all_reduce(t)  # expect: RNK102


    def under_a_rank_test(t, world_size):
        flags = {"go": world_size > 1}
        if dist.get_rank() == 0:
            flags["go"] = False
        if flags["go"]:
            dist.barrier()  # expect: RNK102
"""


def test_dict_value_read_by_its_constant_key_keeps_that_values_rank_dependence(
    tmp_path: Path,
) -> None:
    found, expected = _check(tmp_path, {"m.py": _DICTS})

    assert found == expected


# -- tensors made of a rank value, until a collective makes them equal ----------------------

_TENSOR_FLAGS = """
    import torch
    import torch.distributed as dist


    def raw():
        flag = torch.tensor(float(dist.get_rank() == 0))
        if flag.item():
            dist.barrier()  # expect: RNK102


    def broadcast_first():
        flag = torch.tensor(float(dist.get_rank() == 0))
        dist.broadcast(flag, src=0)
        if flag.item():
            dist.barrier()


    def copied_before_the_all_reduce():
        flag = torch.as_tensor(dist.get_rank() == 0)
        kept = flag.clone()
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        if kept.cpu().item() > 0:
            dist.barrier()  # expect: RNK102
        if flag.item() > 0:
            dist.barrier()


    def loss_value(loss):
        if loss.item() > 1.0:
            dist.barrier()
"""


def test_tensor_made_of_a_rank_value_is_rank_dependent_until_shared(tmp_path: Path) -> None:
    found, expected = _check(tmp_path, {"m.py": _TENSOR_FLAGS})

    assert found == expected


# -- a `break` only some ranks take -------------------------------------------------------

_BREAKS = """
    import torch.distributed as dist


    def early_stop_on_one_rank(t, steps):
        for _ in range(steps):
            dist.all_reduce(t)  # expect: RNK102
            if dist.get_rank() == 0:
                break


    def while_true(t):
        i = 0
        while True:
            dist.all_reduce(t)  # expect: RNK102
            i += 1
            if dist.get_rank() == 0 or i >= 2:
                break


    def every_rank_breaks(t, steps):
        for _ in range(steps):
            dist.all_reduce(t)
            if dist.get_rank() == 0:
                t = t * 2
                break
            else:
                break


    def break_on_a_uniform_test(t, steps, world_size):
        for i in range(steps):
            dist.all_reduce(t)
            if i >= world_size:
                break


    def inner_loop_only(t, steps, items):
        for _ in range(steps):
            dist.all_reduce(t)
            for item in items:
                if dist.get_rank() == 0:
                    break
"""


def test_break_under_a_rank_test_makes_the_loop_trip_count_rank_dependent(tmp_path: Path) -> None:
    found, expected = _check(tmp_path, {"m.py": _BREAKS})

    assert found == expected
