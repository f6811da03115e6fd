"""threads mode's World on its own: failures, views and stalls, without rank threads."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from ranklint.runtime import static
from ranklint.runtime.report import Collective, DivergenceError, RankFailure, Site
from ranklint.runtime.threads import World
from tests.conftest import write

pytestmark = pytest.mark.timeout(60)


def _collective(rank_site: int = 1) -> Collective:
    return Collective("all_reduce", (0, 1), "0", 0, site=Site("/t.py", rank_site, "f"))


def test_fail_records_the_rank_gives_up_its_turn_and_keeps_the_first_failure() -> None:
    world = World(3, ())
    world.holder = 1

    world.fail(1, ValueError("first"))
    world.fail(2, KeyError("second"))

    assert isinstance(world.failure, RankFailure)
    assert (world.failure.rank, str(world.failure.error)) == (1, "first")
    assert "ValueError: first" in world.failure.traceback_text
    assert world.holder is None
    assert [state.state for state in world.ranks] == ["starting", "failed", "failed"]
    assert world.ranks[1].error == "ValueError: first"


def test_fail_of_a_rank_without_the_turn_leaves_the_holder() -> None:
    world = World(2, ())
    world.holder = 0

    world.fail(1, ValueError("x"))

    assert world.holder == 0


def test_views_report_states_collectives_and_errors() -> None:
    world = World(3, ())
    waiting = _collective()
    world.ranks[0].state, world.ranks[0].waiting = "waiting", waiting
    world.ranks[0].log.append(waiting)
    world.ranks[1].state, world.ranks[1].error = "failed", "ValueError: x"

    views = world.views()

    assert [v.state for v in views] == ["waiting", "failed", "running"]
    assert views[0].waiting_in is waiting
    assert views[0].log == (waiting,)
    assert views[1].error == "ValueError: x"
    assert all(v.stack == () for v in views)


def test_views_with_stacks_read_each_live_rank_thread() -> None:
    world = World(1, ())
    started, release = threading.Event(), threading.Event()

    def spin() -> None:
        started.set()
        release.wait(10)

    thread = threading.Thread(target=spin)
    world.ranks[0].thread = thread
    thread.start()
    started.wait(10)
    try:
        view = world.views(with_stacks=True)[0]
    finally:
        release.set()
        thread.join(10)

    assert "spin" in [site.function for site in view.stack]
    assert world.views()[0].stack == ()


def test_diverged_keeps_an_earlier_failure_and_ignores_no_divergence() -> None:
    world = World(2, ())
    world.holder = 0
    world._diverged(None)
    assert (world.failure, world.holder) == (None, 0)

    world.fail(1, ValueError("x"))
    with world.cond:
        world._diverged(static_divergence())

    assert isinstance(world.failure, RankFailure)


def static_divergence():
    from ranklint.runtime.report import compare_position

    return compare_position((0, 1), "0", 0, {0: _collective()})


def test_diverged_sets_the_error_and_frees_the_turn() -> None:
    world = World(2, ())
    world.holder = 1

    with world.cond:  # as in the world's own methods
        world._diverged(static_divergence())

    assert isinstance(world.failure, DivergenceError)
    assert world.holder is None


@pytest.mark.parametrize("other", ["starting", "running", "ready"])
def test_no_stall_is_diagnosed_while_a_rank_may_still_run(other: str) -> None:
    world = World(2, ())
    world.ranks[0].state, world.ranks[0].waiting = "waiting", _collective()
    world.ranks[1].state = other

    with world.cond:
        world._diagnose_stall()

    assert world.failure is None


def test_findings_at_quote_the_caller_whose_helper_lives_in_another_file(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[project]\nname = 'p'\n")
    write(
        tmp_path / "helpers.py",
        "import torch.distributed as dist\n\n\ndef sync():\n    dist.barrier()\n",
    )
    train = write(
        tmp_path / "train.py",
        "from helpers import sync\n\n\ndef step(rank):\n    if rank == 0:\n        sync()\n",
    )

    notes = static.findings_at([str(train)], {(str(train), 6), (str(train), 5)})

    assert list(notes) == [(str(train), 6)]
    assert notes[(str(train), 6)].startswith("RNK102 rank-divergent-collective: `sync()`")


def test_findings_at_spanning_finding_covers_its_lines_and_no_other_site(
    tmp_path: Path,
) -> None:
    write(tmp_path / "pyproject.toml", "[project]\nname = 'p'\n")
    train = write(
        tmp_path / "train.py",
        "import torch.distributed as dist\n\n\ndef step(rank, t):\n"
        "    if rank == 0:\n        dist.all_reduce(\n            t\n        )\n",
    )
    sites = {(str(train), line) for line in range(1, 10)}

    notes = static.findings_at([str(train)], sites)
    elsewhere = static.findings_at([str(train)], {(str(train), 1)})

    assert sorted(line for _, line in notes) == [6, 7, 8]
    assert elsewhere == {}


def test_findings_at_quote_only_the_rules_that_predict_a_divergence(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[project]\nname = 'p'\n")
    train = write(
        tmp_path / "lib.py", "import torch.distributed as dist\n\n\ndef f():\n    dist.barrier()\n"
    )

    notes = static.findings_at([str(train)], {(str(train), 5)})

    assert notes == {}  # RNK107 (a barrier in library code) predicts no divergence


def test_notes_for_look_at_the_lines_ranks_wait_in(tmp_path: Path) -> None:
    from ranklint.runtime.report import Divergence, RankView

    waiting = Collective("barrier", (0, 1), "0", 0, site=Site(str(tmp_path / "w.py"), 3, "g"))
    error = DivergenceError(
        Divergence((0, 1), "0", 0, "r", {}),
        [RankView(0, "waiting", (waiting,), waiting_in=waiting), RankView(1, "waiting", ())],
    )

    assert static._sites(error) == {(str(tmp_path / "w.py"), 3)}


def test_no_turn_is_given_before_every_rank_has_joined() -> None:
    world = World(2, ())
    world.ranks[1].state = "running"
    world.runnable.add(1)

    with world.cond:
        world._dispatch()
        waiting = world.holder
        world.ranks[0].state = "running"
        world.runnable.add(0)
        world._dispatch()

    assert waiting is None
    assert world.holder == 0
