"""Early exits a rank test leads to, beyond the block the test is in.

A `return` (or `continue`) some ranks take skips every collective after it
that the others reach: not only those after the rank test in its own block,
but those after the blocks around it (a uniform `if`, a `with`, an inner
loop), as far as the exit reaches. And an exit nested under a further test in
the rank test's arm (``if rank == 0: if stale > patience: return``) is taken
by those ranks only, on some paths: the test never balances the function.
"""

from __future__ import annotations

import textwrap

import pytest

from ranklint import Config, lint_source
from ranklint.findings import Finding

pytestmark = pytest.mark.timeout(30)

_HEADER = "import torch.distributed as dist\n\n\n"


def _rnk102(body: str) -> list[Finding]:
    source = _HEADER + textwrap.dedent(body).lstrip("\n")
    result = lint_source(source, "lib/train.py", Config(select=("RNK102",), confidence="low"))
    assert result.errors == []
    return result.findings


def _lines(body: str) -> list[int]:
    return [finding.line for finding in _rnk102(body)]


def test_return_under_a_data_test_in_a_rank_arm_skips_the_barrier_after_it_on_some_paths() -> None:
    findings = _rnk102(
        """
        def train(loader, patience):
            rank = dist.get_rank()
            stale = 0
            for batch in loader:
                if rank == 0:
                    stale += 1
                    if stale > patience:
                        return None
                dist.barrier()
        """
    )

    assert [(f.line, f.code) for f in findings] == [(12, "RNK102")]
    assert findings[0].message.startswith(
        "`barrier` is skipped by ranks that can return early when `rank == 0`; "
    )
    assert findings[0].evidence is not None
    assert "`return` on some paths when `rank == 0`" in str(findings[0].evidence)


def test_unconditional_return_in_a_rank_arm_is_worded_without_can() -> None:
    findings = _rnk102(
        """
        def train(loader):
            for batch in loader:
                if dist.get_rank() == 0:
                    return None
                dist.barrier()
        """
    )

    assert [f.line for f in findings] == [8]
    assert "skipped by ranks that return early when `dist.get_rank() == 0`" in findings[0].message
    assert "on some paths" not in str(findings[0].evidence)


def test_rank_return_inside_a_uniform_test_skips_the_barrier_after_that_test() -> None:
    lines = _lines(
        """
        def train(loader, every):
            for step, batch in enumerate(loader):
                if step % every == 0:
                    if dist.get_rank() == 0:
                        return None
                dist.barrier()
        """
    )

    assert lines == [9]


def test_rank_return_inside_a_with_block_skips_the_barrier_after_the_block() -> None:
    lines = _lines(
        """
        import torch


        def evaluate(model, batch):
            with torch.no_grad():
                if dist.get_rank() == 0:
                    return model(batch)
            dist.barrier()
        """
    )

    assert lines == [11]


def test_rank_return_inside_an_inner_loop_skips_the_barrier_after_that_loop() -> None:
    lines = _lines(
        """
        def train(epochs, loader):
            for epoch in epochs:
                for batch in loader:
                    if dist.get_rank() == 0:
                        return None
                dist.barrier()
        """
    )

    assert lines == [9]


def test_rank_continue_inside_a_uniform_test_skips_the_rest_of_the_loop_body() -> None:
    findings = _rnk102(
        """
        def train(loader, every):
            for step, batch in enumerate(loader):
                if step % every == 0:
                    if dist.get_rank() == 0:
                        continue
                dist.barrier()
        """
    )

    assert [f.line for f in findings] == [9]
    assert "skipped by ranks that skip to the next iteration when" in findings[0].message


def test_rank_continue_inside_a_uniform_test_does_not_skip_the_code_after_the_loop() -> None:
    lines = _lines(
        """
        def train(loader, every):
            for step, batch in enumerate(loader):
                if step % every == 0:
                    if dist.get_rank() == 0:
                        continue
                print(step)
            dist.barrier()
        """
    )

    assert lines == []


def test_rank_break_from_an_inner_loop_does_not_skip_the_code_after_that_loop() -> None:
    lines = _lines(
        """
        def train(epochs, loader):
            for epoch in epochs:
                for batch in loader:
                    if dist.get_rank() == 0:
                        break
                dist.barrier()
        """
    )

    assert lines == []


def test_rank_return_after_the_last_collective_of_the_function_is_harmless() -> None:
    lines = _lines(
        """
        def train(loader, every):
            dist.barrier()
            for step, batch in enumerate(loader):
                if step % every == 0:
                    if dist.get_rank() == 0:
                        return None
                print(step)
        """
    )

    assert lines == []


def test_rank_arm_that_issues_the_skipped_collective_itself_before_leaving_is_balanced() -> None:
    lines = _lines(
        """
        def evaluate(model, batch, use_eval):
            if use_eval:
                if dist.get_rank() == 0:
                    dist.barrier()
                    return model(batch)
            dist.barrier()
        """
    )

    # Rank 0's barrier pairs with the others' (one barrier each, then rank 0 leaves).
    assert lines == []


def test_main_process_first_without_an_exit_stays_balanced() -> None:
    lines = _lines(
        """
        def prepare(download):
            rank = dist.get_rank()
            if rank != 0:
                dist.barrier()
            download()
            if rank == 0:
                dist.barrier()
        """
    )

    assert lines == []


def test_rank_return_in_an_exception_handler_skips_the_barrier_after_the_try() -> None:
    lines = _lines(
        """
        def train(loader, step):
            for batch in loader:
                try:
                    step(batch)
                except ValueError:
                    if dist.get_rank() == 0:
                        return None
                dist.barrier()
        """
    )

    assert lines == [11]


def test_two_main_process_first_pairs_on_two_rank_tests_both_stay_balanced() -> None:
    lines = _lines(
        """
        import os


        def prepare(download, unpack):
            rank = dist.get_rank()
            local_rank = int(os.environ["LOCAL_RANK"])
            if rank != 0:
                dist.barrier()
            download()
            if rank == 0:
                dist.barrier()
            if local_rank != 0:
                dist.barrier()
            unpack()
            if local_rank == 0:
                dist.barrier()
        """
    )

    assert lines == []


def test_uniform_flag_is_known_inside_its_arms_for_the_methods_a_rank_test_there_calls() -> None:
    lines = _lines(
        """
        class Trainer:
            def run(self):
                if self.pipe_parallel:
                    self.sync()
                else:
                    if dist.get_rank() == 0:
                        self.report()

            def step(self, step):
                if not self.pipe_parallel:
                    if step > 3:
                        if dist.get_rank() == 0:
                            self.report()

            def report(self):
                if self.pipe_parallel:
                    dist.barrier()

            def sync(self):
                dist.barrier()
        """
    )

    # In the `else` arm (and under `not self.pipe_parallel`, through a further
    # test) `self.pipe_parallel` is false: `report()` issues nothing.
    assert lines == []
