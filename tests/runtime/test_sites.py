"""Where a divergence report points: the user's line, its callers, and ranks out of step."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import pytest

from ranklint.runtime import stacks

pytestmark = pytest.mark.timeout(120)

ROOTS = ("/lib/torch/",)


def test_is_library_site_packages_or_dist_packages_anywhere_is_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    assert stacks.is_library("/opt/env/lib/python3.11/site-packages/lightning/fabric.py", ROOTS)
    assert stacks.is_library("/usr/lib/python3/dist-packages/deepspeed/comm/comm.py", ROOTS)
    assert not stacks.is_library("/opt/project/train.py", ROOTS)
    assert not stacks.is_library("/opt/site-packages-notes/train.py", ROOTS)


def test_is_library_the_interpreters_own_install_folders_are_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sysconfig

    monkeypatch.chdir(tmp_path)
    purelib = sysconfig.get_paths()["purelib"]

    assert stacks.is_library(os.path.join(purelib, "peft", "tuners.py"), ROOTS)


def test_is_library_a_venv_inside_the_working_folder_is_still_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    installed = tmp_path / ".venv" / "lib" / "python3.11" / "site-packages" / "peft" / "x.py"

    assert stacks.is_library(str(installed), ROOTS)
    assert stacks.is_library(".venv/lib/python3.11/site-packages/peft/x.py", ROOTS)


def test_is_library_an_editable_checkout_under_the_working_folder_is_the_users(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    assert not stacks.is_library(str(tmp_path / "src" / "mypkg" / "train.py"), ROOTS)
    assert not stacks.is_library("src/mypkg/train.py", ROOTS)


def test_is_library_a_working_folder_inside_site_packages_keeps_its_own_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "site-packages" / "myproject"
    project.mkdir(parents=True)
    monkeypatch.chdir(project)

    assert not stacks.is_library(str(project / "train.py"), ROOTS)
    assert stacks.is_library(str(tmp_path / "site-packages" / "lightning" / "x.py"), ROOTS)
    assert stacks.is_library(str(project / "env" / "site-packages" / "peft" / "x.py"), ROOTS)


def test_is_library_explicit_roots_stay_library_under_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    root = str(tmp_path / "src" / "ranklint" / "runtime") + os.sep

    assert stacks.is_library(root + "threads.py", (root,))


def test_locate_a_frame_in_an_installed_package_names_the_users_caller_and_the_package_api() -> (
    None
):
    frames = [
        ("/lib/torch/distributed/c10d.py", 1, "all_reduce"),
        ("/lib/torch/distributed/logger.py", 2, "wrapper"),
        ("/env/lib/python3.11/site-packages/lightning/fabric.py", 30, "_sync"),
        ("/env/lib/python3.11/site-packages/lightning/fabric.py", 10, "all_gather"),
        ("/me/train.py", 41, "step"),
    ]

    site, api = stacks.locate(frames, ROOTS)

    assert site == stacks.Site("/me/train.py", 41, "step")
    assert api == "all_gather"


def test_callers_and_user_stack_stop_at_the_companion_frame_that_called_the_rank_function() -> None:
    companion = os.path.dirname(os.path.abspath(stacks.__file__))
    frames = [
        (os.path.join(companion, "group.py"), 80, "allreduce"),
        ("/lib/torch/distributed/c10d.py", 1, "all_reduce"),
        ("/me/train.py", 41, "step"),
        ("/me/train.py", 50, "rank_fn"),
        (os.path.join(companion, "gloo.py"), 197, "_child"),
        ("/me/test_train.py", 12, "test_step"),
    ]

    roots = (*ROOTS, stacks.COMPANION)

    assert stacks.callers(frames, roots) == (stacks.Site("/me/train.py", 50, "rank_fn"),)
    assert stacks.user_stack(frames, roots) == (
        stacks.Site("/me/train.py", 50, "rank_fn"),
        stacks.Site("/me/train.py", 41, "step"),
    )


# In threads mode, through a real run.

torch = pytest.importorskip("torch", reason="the runtime companion needs torch")

from ranklint.runtime import DivergenceError, run_ranks  # noqa: E402 - after the skip

PACKAGE = """
import torch.distributed as dist


def sync_metrics(tensor):
    dist.all_reduce(tensor)
"""


def _line_of(marker: str) -> int:
    lines = Path(__file__).read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(lines, 1) if line.rstrip().endswith(f"# at: {marker}"))


def _calls_the_package_on_rank_zero(rank: int, world_size: int) -> None:
    package = sys.modules["ranklint_fake_trainer"]
    tensor = torch.ones(4)
    if rank == 0:
        package.sync_metrics(tensor)  # at: package-call


def test_run_ranks_collective_inside_an_installed_package_points_at_the_users_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site_packages = tmp_path / "env" / "lib" / "python3.11" / "site-packages"
    (site_packages / "ranklint_fake_trainer").mkdir(parents=True)
    (site_packages / "ranklint_fake_trainer" / "__init__.py").write_text(PACKAGE)
    monkeypatch.syspath_prepend(str(site_packages))
    monkeypatch.delitem(sys.modules, "ranklint_fake_trainer", raising=False)
    importlib.import_module("ranklint_fake_trainer")

    with pytest.raises(DivergenceError) as caught:
        run_ranks(_calls_the_package_on_rank_zero, 2, explain=False)

    collective = caught.value.divergence.at[0]
    assert collective.site is not None
    assert (collective.site.file, collective.site.line) == (__file__, _line_of("package-call"))
    assert collective.api == "sync_metrics"
    assert f"via sync_metrics() at {os.path.relpath(__file__)}:" in str(caught.value)


def _helper(tensor: torch.Tensor) -> None:
    torch.distributed.all_reduce(tensor)  # at: helper


def _out_of_step(rank: int, world_size: int) -> None:
    tensor = torch.ones(4)
    _helper(tensor)  # at: first
    if rank == 0:
        _helper(tensor)  # at: extra
    _helper(tensor)  # at: last
    torch.distributed.broadcast(tensor, src=0)  # at: broadcast


def test_run_ranks_ranks_out_of_step_name_the_first_call_site_difference() -> None:
    with pytest.raises(DivergenceError) as caught:
        run_ranks(_out_of_step, 2, explain=False)

    divergence = caught.value.divergence
    here = os.path.relpath(__file__)
    assert (divergence.position, divergence.first_site_difference) == (2, 1)
    assert (
        f"the call sites first differ at collective #1: rank 0 at {here}:{_line_of('extra')}, "
        f"rank 1 at {here}:{_line_of('last')} (the ranks may have been out of step from there)"
    ) in str(caught.value)
    assert f"      called from {here}:{_line_of('extra')} in _out_of_step()" not in str(
        caught.value
    )
    assert f"      called from {here}:{_line_of('last')} in _out_of_step()" in str(caught.value)


def _disagree_before_rank_two_runs(rank: int, world_size: int) -> None:
    torch.distributed.all_reduce(torch.ones(2 + min(rank, 1)))


def test_run_ranks_rank_that_never_got_its_turn_reads_as_pending_not_stalled() -> None:
    with pytest.raises(DivergenceError) as caught:
        run_ranks(_disagree_before_rank_two_runs, 3, explain=False)

    text = str(caught.value)
    states = {view.rank: view.state for view in caught.value.views}
    assert caught.value.divergence.reason == "the ranks disagree on the shape"
    assert states[2] == "pending"
    assert "rank 2: no collective #0 on this group (issued 0); had not reached this point" in text
    assert "still running" not in text


def _disagree_after_a_completed_collective(rank: int, world_size: int) -> None:
    torch.distributed.all_reduce(torch.ones(1))
    torch.distributed.all_reduce(torch.ones(2 + min(rank, 1)))


def test_run_ranks_rank_ready_but_not_resumed_at_a_divergence_reads_as_pending() -> None:
    with pytest.raises(DivergenceError) as caught:
        run_ranks(_disagree_after_a_completed_collective, 3, explain=False)

    text = str(caught.value)
    assert [view.state for view in caught.value.views] == ["running", "pending", "waiting"]
    assert "another rank never gave up its turn" not in text
    assert "rank 1: no collective #1 on this group (issued 1); had not reached this point" in text
