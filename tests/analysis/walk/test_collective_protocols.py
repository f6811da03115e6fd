"""Collectives reached through objects, leader/worker protocols and flags that restate a rank test.

Each case writes a small project into ``tmp_path`` and compares the (file, line,
code) of every RNK102 finding with the ``# expect:`` markers of its files.
The shapes come from the review corpus (NeMo's in-framework deploy scripts,
``docs/dev/ecosystem-review.md``): a leader that serves requests and broadcasts a
stop message, workers that loop on ``broadcast`` in a method of an object
built from a project class, and a `start_server` flag set from the rank.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.analysis.walk.test_rank_values import _check

pytestmark = pytest.mark.timeout(30)

_SERVER = """
    import torch
    import torch.distributed as dist

    STOP = 1


    class Deployable:
        def generate(self, prompts):
            dist.broadcast(torch.tensor([0]), src=0)
            dist.broadcast_object_list([prompts], src=0)

        def generate_other_ranks(self):
            while True:
                message = torch.empty(1, dtype=torch.long)
                dist.broadcast(message, src=0)
                if message == 0:
                    prompts = [None]
                    dist.broadcast_object_list(prompts, src=0)
                else:
                    return

        def save(self):
            dist.barrier()
"""


def _project(train: str) -> dict[str, str]:
    return {"pkg/__init__.py": "", "pkg/deploy.py": _SERVER, "pkg/train.py": train}


def test_method_of_a_local_built_from_a_project_class_is_followed(tmp_path: Path) -> None:
    found, expected = _check(
        tmp_path,
        _project(
            """
            import torch.distributed as dist

            from pkg.deploy import Deployable


            def main():
                model = Deployable()
                if dist.get_rank() == 0:
                    model.save()  # expect: RNK102
            """
        ),
    )

    assert found == expected


def test_local_rebound_to_something_else_no_longer_names_the_class(tmp_path: Path) -> None:
    found, expected = _check(
        tmp_path,
        _project(
            """
            import torch.distributed as dist

            from pkg.deploy import Deployable


            def main(other):
                model = Deployable()
                model = other
                if dist.get_rank() == 0:
                    model.save()
            """
        ),
    )

    assert found == expected == []


def test_leader_that_sends_the_stop_message_matches_the_worker_loop(tmp_path: Path) -> None:
    found, expected = _check(
        tmp_path,
        _project(
            """
            import torch
            import torch.distributed as dist

            from pkg.deploy import Deployable


            def main(prompts):
                model = Deployable()
                if dist.get_rank() == 0:
                    model.generate(prompts)
                    model.generate(prompts)
                    dist.broadcast(torch.tensor([1]), src=0)
                else:
                    model.generate_other_ranks()
                dist.barrier()
            """
        ),
    )

    assert found == expected == []


def test_leader_that_never_messages_the_worker_loop_is_reported(tmp_path: Path) -> None:
    found, expected = _check(
        tmp_path,
        _project(
            """
            import torch.distributed as dist

            from pkg.deploy import Deployable


            def main(prompts):
                model = Deployable()
                if dist.get_rank() == 0:
                    print(prompts)
                else:
                    model.generate_other_ranks()  # expect: RNK102
            """
        ),
    )

    assert found == expected


def test_leader_whose_first_message_differs_from_the_workers_receive_is_reported(
    tmp_path: Path,
) -> None:
    found, expected = _check(
        tmp_path,
        _project(
            """
            import torch.distributed as dist

            from pkg.deploy import Deployable


            def main(t):
                model = Deployable()
                if dist.get_rank() == 0:
                    dist.all_reduce(t)  # expect: RNK102
                else:
                    model.generate_other_ranks()
            """
        ),
    )

    assert found == expected


def test_test_of_a_value_only_computed_locally_still_splits_the_ranks(tmp_path: Path) -> None:
    found, expected = _check(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/train.py": """
                import torch
                import torch.distributed as dist


                def worker(t):
                    message = torch.empty(1)
                    dist.all_reduce(message)
                    if message == 0:
                        dist.barrier()


                def main(t):
                    if dist.get_rank() == 0:
                        pass
                    else:
                        worker(t)  # expect: RNK102
            """,
        },
    )

    assert found == expected


def test_flag_set_from_the_rank_restates_that_rank_test(tmp_path: Path) -> None:
    found, expected = _check(
        tmp_path,
        _project(
            """
            import torch
            import torch.distributed as dist

            from pkg.deploy import Deployable


            def main(prompts):
                model = Deployable()
                start_server = True
                if dist.is_initialized():
                    if dist.get_rank() > 0:
                        start_server = False
                if start_server:
                    model.generate(prompts)
                    dist.broadcast(torch.tensor([1]), src=0)
                else:
                    if dist.is_initialized():
                        if dist.get_rank() > 0:
                            model.generate_other_ranks()
            """
        ),
    )

    assert found == expected == []


def test_flag_set_from_the_rank_still_splits_the_ranks_itself(tmp_path: Path) -> None:
    found, expected = _check(
        tmp_path,
        _project(
            """
            import torch.distributed as dist


            def main():
                leader = False
                if dist.get_rank() == 0:
                    leader = True
                if leader:
                    dist.barrier()  # expect: RNK102
            """
        ),
    )

    assert found == expected


def test_flag_given_a_value_in_both_arms_is_not_taken_for_the_rank_test(tmp_path: Path) -> None:
    found, expected = _check(
        tmp_path,
        _project(
            """
            import torch.distributed as dist


            def main(t):
                leader = False
                if dist.get_rank() == 0:
                    leader = True
                leader = t.any()
                if leader:
                    if dist.get_rank() == 0:
                        dist.barrier()  # expect: RNK102
            """
        ),
    )

    assert found == expected


def test_same_rank_test_nested_in_its_own_arm_is_decided(tmp_path: Path) -> None:
    found, expected = _check(
        tmp_path,
        _project(
            """
            import torch.distributed as dist


            def main(t):
                if dist.get_rank() == 0:
                    dist.broadcast(t, src=0)
                else:
                    if dist.get_rank() > 0:
                        dist.broadcast(t, src=0)
            """
        ),
    )

    assert found == expected == []


def test_other_rank_test_nested_in_an_arm_is_still_compared(tmp_path: Path) -> None:
    found, expected = _check(
        tmp_path,
        _project(
            """
            import torch.distributed as dist


            def main(t, local_rank):
                if dist.get_rank() == 0:
                    dist.broadcast(t, src=0)
                else:
                    if dist.get_rank() == 1:
                        dist.broadcast(t, src=0)  # expect: RNK102
            """
        ),
    )

    assert found == expected


@pytest.mark.parametrize(
    ("launch", "reported"),
    [
        ("Trainer(devices=1, max_steps=2)", False),
        ("Trainer(devices=[0])", False),
        ("Trainer(devices=1, num_nodes=1)", False),
        ("Trainer(devices=2)", True),
        ("Trainer(devices=1, num_nodes=2)", True),
        ("Trainer(devices=n)", True),
        ("Trainer()", True),
        ("Trainer(devices=[0, 1])", True),
        ("Fabric(devices=1)", False),
        ("Other(devices=1)", True),
    ],
)
def test_code_run_by_a_one_device_lightning_launch_has_no_other_rank(
    tmp_path: Path, launch: str, reported: bool
) -> None:
    mark = "  # expect: RNK102" if reported else ""
    found, expected = _check(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/test_ckpt.py": f"""
                import torch.distributed as dist
                from lightning.pytorch import Trainer
                from lightning.fabric import Fabric
                from pkg.other import Other


                def test_save(model, n):
                    trainer = {launch}
                    trainer.fit(model)
                    if trainer.is_global_zero:
                        dist.barrier(){mark}
            """,
        },
    )

    assert found == expected


def test_one_device_launch_unqualified_by_lightning_is_not_trusted(tmp_path: Path) -> None:
    found, expected = _check(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/test_ckpt.py": """
                import torch.distributed as dist
                from mylib import Trainer


                def test_save(model):
                    trainer = Trainer(devices=1)
                    if trainer.is_global_zero:
                        dist.barrier()  # expect: RNK102
            """,
        },
    )

    assert found == expected


def test_every_keyword_argument_of_a_call_binds_its_parameter(tmp_path: Path) -> None:
    found, expected = _check(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/train.py": """
                import torch.distributed as dist


                def save(t, gather=True, barrier=True):
                    if barrier:
                        dist.barrier()


                def main(t):
                    if dist.get_rank() == 0:
                        save(t, gather=False, barrier=False)
                    if dist.get_rank() == 0:
                        save(t, gather=False, barrier=True)  # expect: RNK102
            """,
        },
    )

    assert found == expected


@pytest.mark.parametrize(
    ("package", "hook", "base", "reported"),
    [
        ("lightning.pytorch", "on_keyboard_interrupt", "Callback", False),
        ("lightning.pytorch", "on_epoch_end", "pl.Callback", False),
        ("lightning", "on_init_start", "L.Callback", False),
        ("lightning.pytorch", "on_exception", "Callback", True),  # still called
        ("pytorch_lightning", "on_keyboard_interrupt", "Callback", True),  # may be old
        ("lightning.pytorch", "on_keyboard_interrupt", "Helper", True),  # not a callback
    ],
)
def test_hook_that_lightning_2_no_longer_calls_is_not_checked(
    tmp_path: Path, package: str, hook: str, base: str, reported: bool
) -> None:
    mark = "  # expect: RNK102" if reported else ""
    found, expected = _check(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/callbacks.py": f"""
                import {package}
                import {package} as pl
                import {package} as L
                import torch.distributed as dist


                class Saver({base}):
                    def {hook}(self, trainer, pl_module):
                        if trainer.global_rank == 0:
                            dist.barrier(){mark}
            """,
        },
    )

    assert found == expected
