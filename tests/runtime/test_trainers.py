"""The trainer fixtures under the runtime companion: every verdict matches the prediction.

Each runnable trainer of ``fixtures/trainers`` is run with ``run_ranks``:
- the clean ones and the ones predicted to complete return, with the same
  parameters on every rank;
- the ones predicted to hang or mismatch raise DivergenceError at a line
  ranklint reports statically (the site of the diverging collective or one of
  its callers);
- the wrong-value ones complete with the documented wrong value: the logged
  loss is world_size times the clean trainer's;
- the invalid-root one raises on the ranks that name a root outside their group.
The import-time one is not a function to run: it fails when imported.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch", reason="the runtime companion needs torch")

from ranklint import Config, lint_paths  # noqa: E402
from ranklint.runtime import DivergenceError, RankFailure, run_ranks  # noqa: E402
from tests import trainer_runs  # noqa: E402
from tests.test_trainers import ATOL, RTOL, _load, assert_params_close  # noqa: E402

pytestmark = pytest.mark.timeout(300)

RUNNABLE = [f for f in trainer_runs.programs() if f.predicted != "import-error"]
GLOO = {f.name for f in RUNNABLE}


def _entry(path: Path, out: Path) -> tuple[Callable[[int, int], Any], argparse.Namespace]:
    out.mkdir(parents=True, exist_ok=True)
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    module = importlib.import_module(path.stem)
    harness = importlib.import_module("harness")
    world = trainer_runs.WORLD.get(path.name.split("_", 1)[0], 2)
    args = harness.parser("").parse_args(["--world-size", str(world), "--out", str(out)])
    main = getattr(module, "run", None) or module.rank_main
    return (lambda rank, world_size: main(args, rank, world_size)), args


def _reported_lines() -> set[tuple[Path, int]]:
    """Every line ranklint reports in the trainers, with every rule selected."""
    result = lint_paths([trainer_runs.TRAINERS], Config(select=("ALL",), confidence="low"), jobs=1)
    return {(Path(f.path).resolve(), f.line) for f in result.findings}


@pytest.fixture(autouse=True)
def _trainer_globals() -> Any:
    """Variants patch their clean trainer's module globals (``fsdp2_trainer.mean_loss =
    ...``); threads mode shares them, and gloo mode forks them. Each test puts back
    the trainer modules it found and forgets the ones it imported."""
    folder = trainer_runs.TRAINERS.resolve()

    def trainers() -> dict[str, Any]:
        return {
            name: module
            for name, module in list(sys.modules.items())
            if Path(getattr(module, "__file__", None) or "/").resolve().parent == folder
        }

    saved = {name: dict(vars(module)) for name, module in trainers().items()}
    yield
    for name in trainers():
        if name in saved:
            vars(sys.modules[name]).update(saved[name])
        else:
            del sys.modules[name]


def _check(fixture: trainer_runs.Fixture, mode: str, tmp_path: Path) -> None:
    fn, args = _entry(fixture.path, tmp_path)
    if fixture.predicted in ("completes", "wrong-value"):
        clean = None
        if fixture.predicted == "wrong-value" and fixture.wrong == "logged":
            # First: the variant's run patches the clean trainer's module for good.
            clean_fn, _ = _entry(fixture.clean, tmp_path / "clean")
            clean = run_ranks(clean_fn, args.world_size, mode=mode, timeout=120)
        results = run_ranks(fn, args.world_size, mode=mode, timeout=120)
        for result in results[1:]:
            if "params" in result:
                assert_params_close(_load(result["params"]), _load(results[0]["params"]))
        if clean is not None:
            expected = [args.world_size * value for value in clean[0]["logged"]]
            assert results[0]["logged"] == pytest.approx(expected, rel=RTOL, abs=ATOL)
    elif fixture.predicted == "invalid-root":
        with pytest.raises(RankFailure, match="rank"):
            run_ranks(fn, args.world_size, mode=mode, timeout=120)
    else:
        with pytest.raises(DivergenceError) as caught:
            run_ranks(fn, args.world_size, mode=mode, timeout=120, explain=False)
        reported = _reported_lines()
        lines = {
            (Path(site.file).resolve(), site.line)
            for c in caught.value.divergence.at.values()
            for site in (c.site, *c.callers)
            if site is not None
        }
        assert lines & reported, str(caught.value)


@pytest.mark.parametrize("fixture", RUNNABLE, ids=lambda f: f.name)
def test_trainer_under_threads_mode_matches_its_predicted_outcome(
    fixture: trainer_runs.Fixture, tmp_path: Path
) -> None:
    _check(fixture, "threads", tmp_path)


@pytest.mark.distributed
@pytest.mark.parametrize("fixture", [f for f in RUNNABLE if f.name in GLOO], ids=lambda f: f.name)
def test_trainer_under_gloo_mode_matches_its_predicted_outcome(
    fixture: trainer_runs.Fixture, tmp_path: Path
) -> None:
    _check(fixture, "gloo", tmp_path)


def test_runnable_trainers_cover_every_predicted_outcome_but_import_errors() -> None:
    outcomes = {f.predicted for f in RUNNABLE}

    assert outcomes == {
        "completes",
        "wrong-value",
        "collective-mismatch",
        "timeout",
        "invalid-root",
    }
