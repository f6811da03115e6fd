"""The trainer fixtures run: ranklint's static verdict against what the job does.

Every run is a child process that launches its own gloo ranks with a
collective timeout and kills them at a deadline (``fixtures/trainers/harness.py``);
pytest-timeout is the backstop above that. See ``tests/trainer_runs.py``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests import trainer_runs
from tests.trainer_runs import TRAINERS, Fixture, observed, programs, rank_results, run

pytestmark = [
    pytest.mark.distributed,
    pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed"),
]

# Parameters and losses of a sharded run against the single-process reference.
RTOL, ATOL = 1e-5, 1e-6
CLEAN = [
    f
    for f in programs()
    if f.name in ("fsdp2_trainer.py", "tp_dp_trainer.py", "rollout_trainer.py")
]
BUGGY = [f for f in programs() if f not in CLEAN]


def _ids(fixture: Fixture) -> str:
    return fixture.name.removesuffix(".py")


def _load(path: str) -> dict:
    import torch

    return torch.load(path)


def assert_params_close(got: dict, expected: dict) -> None:
    import torch

    assert sorted(got) == sorted(expected)
    for name in expected:
        torch.testing.assert_close(got[name], expected[name], rtol=RTOL, atol=ATOL)


@pytest.fixture(scope="module")
def references(tmp_path_factory: pytest.TempPathFactory) -> dict[str, trainer_runs.Run]:
    """The single-process reference run of each clean trainer."""
    out = tmp_path_factory.mktemp("references")
    return {
        fixture.name: run(fixture.path, out / fixture.name, "--reference", world=fixture.world)
        for fixture in CLEAN
    }


def test_every_trainer_declares_a_known_predicted_outcome() -> None:
    assert len(CLEAN) == 3
    assert len(BUGGY) >= 9
    assert {f.predicted for f in programs()} <= set(trainer_runs.OUTCOMES)


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.parametrize("fixture", CLEAN, ids=_ids)
def test_clean_trainer_completes_with_identical_results_on_every_rank_and_the_reference(
    fixture: Fixture, references: dict[str, trainer_runs.Run], tmp_path: Path
) -> None:
    result = run(fixture.path, tmp_path, world=fixture.world)

    assert observed(result) == "completes", result.output[-3000:]
    ranks = rank_results(result)
    reference = _load(references[fixture.name].outcome["result"]["params"])  # type: ignore[index]
    for rank in ranks:
        assert_params_close(_load(rank["params"]), reference)
    if fixture.name == "fsdp2_trainer.py":
        expected = references[fixture.name].outcome["result"]["logged"]  # type: ignore[index]
        assert all(rank["dcp_roundtrip"] for rank in ranks)
        assert [rank["holds_full_state"] for rank in ranks] == [True, False]
        for rank in ranks:
            assert rank["logged"] == pytest.approx(expected, rel=RTOL, abs=ATOL)
    if fixture.name == "rollout_trainer.py":
        assert {rank["version"] for rank in ranks} == {6}
        assert {rank["stale_rejected"] for rank in ranks} == {5}


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.parametrize("fixture", BUGGY, ids=_ids)
def test_buggy_trainer_fails_the_way_its_docstring_predicts(
    fixture: Fixture, references: dict[str, trainer_runs.Run], tmp_path: Path
) -> None:
    result = run(fixture.path, tmp_path, world=fixture.world)
    seen = observed(result)

    if fixture.predicted == "wrong-value" and fixture.wrong == "gradients":
        assert seen == "completes", result.output[-3000:]
        reference = references[fixture.clean.name].outcome["result"]  # type: ignore[index]
        scaled = run(
            fixture.clean,
            tmp_path / "scaled-reference",
            "--reference",
            "--lr-scale",
            str(fixture.world),
            world=fixture.world,
        )
        assert scaled.outcome is not None, scaled.output[-3000:]
        for rank in rank_results(result):
            # Gradients world_size times too large: the run of a learning rate
            # world_size times higher, not the reference's.
            params = _load(rank["params"])
            assert_params_close(params, _load(scaled.outcome["result"]["params"]))
            with pytest.raises(AssertionError):
                assert_params_close(params, _load(reference["params"]))
    elif fixture.predicted == "wrong-value":
        assert seen == "completes", result.output[-3000:]
        reference = references[fixture.clean.name].outcome["result"]  # type: ignore[index]
        for rank in rank_results(result):
            # The log says world_size times the mean; training itself is right.
            assert rank["logged"] == pytest.approx(
                [fixture.world * value for value in reference["logged"]], rel=RTOL, abs=ATOL
            )
            assert_params_close(_load(rank["params"]), _load(reference["params"]))
    else:
        assert seen == fixture.predicted, result.output[-3000:]
    if fixture.predicted == "completes":
        reference = references[fixture.clean.name].outcome["result"]  # type: ignore[index]
        for rank in rank_results(result):
            assert_params_close(_load(rank["params"]), _load(reference["params"]))
    assert result.wall_s < trainer_runs.PROCESS_LIMIT


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_group_root_broadcast_gives_every_dp_rank_its_own_leaders_flag(tmp_path: Path) -> None:
    fixture = next(f for f in BUGGY if f.name == "tp_dp_group_root.py")

    result = run(fixture.path, tmp_path, world=fixture.world)

    assert observed(result) == "completes", result.output[-3000:]
    ranks = rank_results(result)
    # dp groups of the 2 x 2 mesh: {0, 2} led by rank 0, {1, 3} led by rank 1.
    assert [rank["stop"] for rank in ranks] == [ranks[r % 2]["leader_stop"] for r in range(4)]


def test_invalid_root_outcome_needs_torchs_not_a_member_value_error() -> None:
    def outcome(error: str) -> str:
        ranks = [{"status": "ok"}, {"status": "error", "error": error}]
        return observed(trainer_runs.Run(1, {"status": "failed", "ranks": ranks}, "", 1.0, Path()))

    assert outcome("ValueError: Global rank 0 is not part of group <pg>") == "invalid-root"
    assert outcome("RuntimeError: Global rank 0 is not part of group <pg>") == "error"
    assert outcome("ValueError: Invalid function argument") == "error"


def test_helper_module_that_joins_the_group_at_import_fails_on_import(tmp_path: Path) -> None:
    import subprocess
    import sys

    completed = subprocess.run(
        [sys.executable, "-c", "import dist_env"],
        cwd=TRAINERS,
        capture_output=True,
        text=True,
        timeout=60,
        env=trainer_runs._environment(),
    )

    assert completed.returncode != 0
    assert "init_process_group" in completed.stderr or "MASTER_ADDR" in completed.stderr


@pytest.mark.timeout(180)
def test_host_syncs_every_step_in_the_rnk201_trainer_and_only_at_log_steps_in_the_clean_one(
    tmp_path: Path,
) -> None:
    clean = run(TRAINERS / "fsdp2_trainer.py", tmp_path / "clean", "--count-syncs")
    buggy = run(TRAINERS / "fsdp2_sync_every_step.py", tmp_path / "buggy", "--count-syncs")

    clean_counts = clean.outcome["result"]["syncs"]  # type: ignore[index]
    buggy_counts = buggy.outcome["result"]["syncs"]  # type: ignore[index]
    log_every = 3
    assert len(clean_counts) == len(buggy_counts) == 6
    assert [c for step, c in enumerate(clean_counts) if step % log_every] == [0, 0, 0, 0]
    assert all(c >= 1 for step, c in enumerate(clean_counts) if step % log_every == 0)
    # float(loss) and .item() in the helper: two per step at least. print(loss)
    # formats through tolist(), which reads CPU memory without dispatching an op:
    # on an accelerator it is a copy to the host (a third sync), here it is invisible.
    assert all(count >= 2 for count in buggy_counts)


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.parametrize("world", [8, 64])
@pytest.mark.parametrize("fixture", CLEAN, ids=_ids)
def test_clean_trainer_setup_and_one_step_run_on_the_fake_process_group_at_scale(
    fixture: Fixture, world: int, tmp_path: Path
) -> None:
    result = run(fixture.path, tmp_path, "--fake-world", str(world))

    assert result.outcome is not None, result.output[-3000:]
    assert result.outcome["status"] == "ok", result.outcome.get("error")


def test_docs_table_lists_every_trainer_with_its_findings_and_predicted_outcome() -> None:
    text = (trainer_runs.REPO_ROOT / "docs" / "fixtures.md").read_text(encoding="utf-8")
    table = text[text.index(trainer_runs.TABLE_HEADER) :].split("\n\n", 1)[0]
    committed = [trainer_runs.static_columns(line) for line in table.splitlines()[2:]]

    expected = [trainer_runs.static_columns(row) for row in trainer_runs.table_rows(None)]

    assert committed == expected, "run `python -m tests.trainer_runs docs/fixtures.md`"
    observed_column = [line.split(" | ")[5] for line in table.splitlines()[2:]]
    predicted_column = [line.split(" | ")[4] for line in table.splitlines()[2:]]
    assert observed_column == predicted_column


def test_static_findings_on_the_trainers_equal_their_markers() -> None:
    marks = {name: found for name, found in trainer_runs.findings_by_file().items() if found}

    assert trainer_runs.static_findings() == marks


_RENDEZVOUS = (
    "ValueError: Error initializing torch.distributed using env:// rendezvous: "
    "environment variable RANK expected, but not set"
)


def _traceback(*frames: tuple[str, str], last: str) -> str:
    lines = ["Traceback (most recent call last):"]
    lines += [f'  File "{path}", line 3, in {where}' for path, where in frames]
    return "\n".join([*lines, last]) + "\n"


def test_import_error_outcome_needs_the_rendezvous_error_raised_by_an_imported_module() -> None:
    program = str(TRAINERS / "fsdp2_import_time_group.py")
    helper = str(TRAINERS / "dist_env.py")
    torch_init = "/site-packages/torch/distributed/distributed_c10d.py"

    through_import = _traceback(
        (program, "<module>"), (helper, "<module>"), (torch_init, "init_process_group"),
        last=_RENDEZVOUS,
    )  # fmt: skip
    in_a_function = _traceback(
        (program, "<module>"), (program, "main"), (torch_init, "init_process_group"),
        last=_RENDEZVOUS,
    )  # fmt: skip
    other_error = _traceback(
        (program, "<module>"), (helper, "<module>"),
        last="ImportError: cannot import name 'WORLD' from 'dist_env'",
    )  # fmt: skip

    assert trainer_runs.import_time_rendezvous_failure(through_import)
    assert not trainer_runs.import_time_rendezvous_failure(in_a_function)
    assert not trainer_runs.import_time_rendezvous_failure(other_error)
    assert not trainer_runs.import_time_rendezvous_failure("no traceback at all\n")
