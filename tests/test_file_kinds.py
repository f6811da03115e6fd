"""`test-ignores` and `benchmark-ignores`: which codes stay quiet in test and benchmark files.

Hot-path costs are not what a test or a benchmark is about (a benchmark's
``.item()`` is how it reads its own measurement), and fake addresses and CI
data paths are a test's own business. Both lists are options, so a team that
wants the rules there too can have them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ranklint import Config, lint_paths, lint_source
from ranklint.config import config_from_table
from ranklint.options import ConfigError

STEP_LOOP_SYNC = """\
def train(model, loader):
    for batch in loader:
        loss = model(batch)
        loss.backward()
        print(loss.item())
"""

ENDPOINTS = """\
ADDRESS = "10.1.2.3"
CKPT = "/home/ci/checkpoints"
"""


def _codes(source: str, path: str, config: Config) -> list[str]:
    return [finding.code for finding in lint_source(source, path, config).findings]


@pytest.mark.parametrize("path", ["tests/test_train.py", "test_train.py", "pkg/conftest.py"])
def test_host_sync_in_test_file_under_defaults_is_not_reported(path: str) -> None:
    config = Config(root=Path.cwd(), extend_select=("RNK201", "RNK503"))

    codes = _codes(STEP_LOOP_SYNC, path, config)

    assert codes == []


def test_host_sync_in_library_file_under_defaults_is_reported() -> None:
    codes = _codes(
        STEP_LOOP_SYNC, "pkg/train.py", Config(root=Path.cwd(), extend_select=("RNK201", "RNK503"))
    )

    assert codes == ["RNK201"]


HOT_FUNCTION_SYNC = """\
def check_step(model, batch):  # ranklint: hot
    loss = model(batch)
    loss.backward()
    print(loss.item())
"""


def test_host_sync_of_a_marked_function_in_test_file_with_empty_test_ignores_is_reported() -> None:
    config = Config(root=Path.cwd(), extend_select=("RNK201",), test_ignores=())

    codes = _codes(HOT_FUNCTION_SYNC, "tests/test_train.py", config)

    assert codes == ["RNK201"]


@pytest.mark.parametrize(
    "source", [STEP_LOOP_SYNC, HOT_FUNCTION_SYNC.replace("  # ranklint: hot", "")]
)
def test_step_loop_or_step_function_in_test_file_makes_nothing_hot_even_with_empty_test_ignores(
    source: str,
) -> None:
    # A test checks the code it runs; it is no training run.
    config = Config(root=Path.cwd(), extend_select=("RNK201",), test_ignores=())

    codes = _codes(source.replace("check_step", "train_step"), "tests/test_train.py", config)

    assert codes == []


@pytest.mark.parametrize(
    "path", ["bench/run.py", "pkg/benchmarks/speed.py", "bench_allreduce.py", "verify_loss.py"]
)
def test_host_sync_in_benchmark_file_under_defaults_is_not_reported(path: str) -> None:
    codes = _codes(STEP_LOOP_SYNC, path, Config(root=Path.cwd(), extend_select=("RNK201",)))

    assert codes == []


def test_host_sync_in_benchmark_file_with_empty_benchmark_ignores_is_reported() -> None:
    config = Config(root=Path.cwd(), extend_select=("RNK201",), benchmark_ignores=())

    codes = _codes(STEP_LOOP_SYNC, "bench/run.py", config)

    assert codes == ["RNK201"]


def test_benchmark_patterns_replaced_by_user_apply_only_to_given_patterns() -> None:
    config = Config(root=Path.cwd(), extend_select=("RNK201",), benchmark_patterns=("perf/",))

    in_perf = _codes(STEP_LOOP_SYNC, "perf/run.py", config)
    in_bench = _codes(STEP_LOOP_SYNC, "pkg/bench_old.py", config)

    assert (in_perf, in_bench) == ([], ["RNK201"])


def test_endpoint_and_machine_path_in_test_file_under_defaults_are_not_reported() -> None:
    config = Config(root=Path.cwd(), extend_select=("RNK201", "RNK503"))

    codes = _codes(ENDPOINTS, "tests/test_launch.py", config)

    assert codes == []


def test_endpoint_and_machine_path_in_library_file_are_reported() -> None:
    config = Config(root=Path.cwd(), extend_select=("RNK201", "RNK501", "RNK503"))

    codes = _codes(ENDPOINTS, "pkg/launch.py", config)

    assert sorted(codes) == ["RNK501", "RNK503"]


def test_test_ignores_naming_one_code_keeps_the_others_in_test_files() -> None:
    config = Config(
        root=Path.cwd(), extend_select=("RNK201", "RNK501", "RNK503"), test_ignores=("RNK501",)
    )

    codes = _codes(ENDPOINTS, "tests/test_launch.py", config)

    assert codes == ["RNK503"]


def test_test_ignores_with_unknown_code_in_config_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"test-ignores.*unknown rule code.*'RNK2O1'"):
        config_from_table(
            {"test-ignores": ["RNK2O1"]}, source=tmp_path / "pyproject.toml", root=tmp_path
        )


def test_cross_file_sync_placed_in_test_helper_is_not_reported(tmp_path: Path) -> None:
    # The step loop is in the library; the sync it reaches sits in a test helper.
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "helpers.py").write_text("def log(loss):\n    print(loss.item())\n")
    (tmp_path / "train.py").write_text(
        "from tests.helpers import log\n\n\n"
        "def train(model, loader):\n"
        "    for batch in loader:\n"
        "        loss = model(batch)\n"
        "        loss.backward()\n"
        "        log(loss)\n"
    )

    quiet = lint_paths([tmp_path], Config(root=tmp_path, extend_select=("RNK201",)), jobs=1)
    loud = lint_paths(
        [tmp_path], Config(root=tmp_path, extend_select=("RNK201",), test_ignores=()), jobs=1
    )

    assert [f.code for f in quiet.findings] == []
    assert [(Path(f.path).name, f.code) for f in loud.findings] == [("helpers.py", "RNK201")]
