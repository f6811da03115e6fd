"""The engine's less travelled paths: read and engine failures, parse-error spans,
per-file rule sets, the cache inside a run, where the work runs (this process or
workers), the start method of the workers, and placing project findings when a
file of their call chain vanished or changed during the run."""

from __future__ import annotations

import shutil
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import libcst as cst
import pytest

from ranklint import Config, lint_paths, lint_source
from ranklint.analysis.walk.context import FileContext
from ranklint.cache import Cache
from ranklint.engine import Linter, lint_files
from ranklint.engine import linter as linter_module
from ranklint.engine import pool as pool_module
from ranklint.engine.stack import run_with_large_stack
from ranklint.engine.walker import Walker
from ranklint.findings import Finding, Severity, TraceStep
from ranklint.rules.imports.wildcard_import import WildcardImport
from tests.conftest import write

NEW_GROUP = "import torch.distributed as dist\n\ndist.new_group()\n"


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts parsed in this process (worker processes append to their own copy)."""
    seen: list[str] = []
    real = linter_module.parse_source

    def counting(text: str) -> cst.Module:
        seen.append(text)
        return real(text)

    monkeypatch.setattr(linter_module, "parse_source", counting)
    return seen


# RNK302 (off by default) is the simplest one-line finding these tests need.
HEAVY = Config(extend_select=("RNK302",))


def spans(findings: list[Finding]) -> list[tuple[str, int, int, int, int]]:
    return [(f.code, f.line, f.col, f.end_line, f.end_col) for f in findings]


# -- findings: rule metadata, end positions, suppression lines -------------------


def test_finding_carries_its_rules_name_severity_and_exclusive_end() -> None:
    result = lint_source("import wandb\n", "lib/run.py", HEAVY)

    assert [(f.code, f.name, f.severity) for f in result.findings] == [
        ("RNK302", "heavy-import-at-module-level", Severity.WARNING)
    ]
    assert spans(result.findings) == [("RNK302", 1, 1, 1, 13)]


def test_finding_on_a_call_spanning_lines_ends_after_its_closing_bracket() -> None:
    source = "import torch.distributed as dist\n\ndist.new_group(\n    ranks=[0],\n)\n"

    result = lint_source(source, "lib/groups.py")

    assert spans(result.findings) == [("RNK101", 3, 1, 5, 2)]


def test_noqa_on_a_calls_own_line_inside_a_longer_statement_suppresses_only_that_call() -> None:
    source = (
        "import torch.distributed as dist\n"
        "\n"
        "groups = [\n"
        "    dist.new_group(),  # noqa: RNK101\n"
        "    dist.new_group(),\n"
        "]\n"
    )

    result = lint_source(source, "lib/groups.py")

    assert [(f.line, f.code) for f in result.findings] == [(5, "RNK101")]


def test_the_message_a_rule_reports_reaches_the_finding_which_has_no_trace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Per-file findings have no trace: call chains are the project phase's.
    def report_custom(self: WildcardImport, node: cst.ImportFrom) -> None:
        self.report(node, "custom message")

    monkeypatch.setattr(WildcardImport, "visit_ImportFrom", report_custom)

    result = lint_source("from os import *; sep\n", "lib/star.py")

    assert [(f.code, f.message, f.trace) for f in result.findings] == [
        ("RNK301", "custom message", ())
    ]


# -- which rules run on which file --------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [("scripts/run.py", []), ("lib/run.py", ["RNK302"])],
    ids=["script", "library"],
)
def test_heavy_import_is_reported_in_library_code_but_not_in_scripts(
    path: str, expected: list[str]
) -> None:
    result = lint_source("import wandb\n", path, HEAVY)

    assert result.errors == []
    assert [f.code for f in result.findings] == expected


@pytest.mark.parametrize(
    ("path", "expected"),
    [("lib/run.py", []), ("other/run.py", ["RNK302"])],
    ids=["matching", "not-matching"],
)
def test_per_file_ignores_drop_a_code_only_in_matching_files(
    tmp_path: Path, path: str, expected: list[str]
) -> None:
    config = Config(
        root=tmp_path, per_file_ignores={"lib/**": ("RNK302",)}, extend_select=("RNK302",)
    )

    result = lint_source("import wandb\n", str(tmp_path / path), config)

    assert result.errors == []
    assert [f.code for f in result.findings] == expected


def test_per_file_ignored_rnk001_hides_an_unreadable_file(tmp_path: Path) -> None:
    link = tmp_path / "gone.py"
    link.symlink_to(tmp_path / "missing-target.py")
    config = Config(root=tmp_path, per_file_ignores={"gone.py": ("RNK001",)})

    result = lint_paths([link], config, jobs=1)

    assert (result.findings, result.errors, result.files_checked) == ([], [], 1)


# -- read errors, engine failures, files with nothing to run ---------------------


def test_read_error_without_a_system_message_is_named_by_its_type_at_the_first_character(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "lost.py", "x = 1\n")

    def fail(file: str, mode: str = "r") -> None:
        raise OSError("device went away")  # no errno, so no strerror

    monkeypatch.setattr("ranklint.engine.linter.open", fail, raising=False)

    result = lint_paths([path], jobs=1)

    assert [(f.path, f.message) for f in result.findings] == [
        (str(path), "cannot read file: OSError")
    ]
    assert spans(result.findings) == [("RNK001", 1, 1, 1, 2)]


def test_recursion_error_while_analysing_is_one_rnk001_at_the_first_character(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def too_deep(text: str) -> cst.Module:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(linter_module, "parse_source", too_deep)

    result = Linter(Config()).lint_source("x = 1\n", "deep.py")

    assert result.path == "deep.py"
    assert [(f.path, f.message) for f in result.findings] == [
        ("deep.py", "nesting too deep to analyse")
    ]
    assert spans(result.findings) == [("RNK001", 1, 1, 1, 2)]
    assert result.errors == []


def test_engine_failure_outside_the_rules_is_an_internal_error_of_the_engine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(text: str) -> cst.Module:
        raise ValueError("kaboom")

    monkeypatch.setattr(linter_module, "parse_source", broken)

    result = Linter(Config()).lint_source("x = 1\n", "crash.py")

    assert (result.path, result.findings) == ("crash.py", [])
    assert [(e.path, e.where, e.message) for e in result.errors] == [
        ("crash.py", "engine", "ValueError: kaboom")
    ]
    assert "ValueError: kaboom" in result.errors[0].details


def test_file_with_no_rule_to_run_gives_an_empty_result_for_its_path() -> None:
    result = Linter(Config(select=("RNK001",))).lint_source(NEW_GROUP, "quiet.py")

    assert (result.path, result.findings, result.errors) == ("quiet.py", [], [])


# -- parse errors ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "span"),
    [
        ("def f(:\n", (1, 7, 1, 8)),
        ("x = )\n", (1, 5, 1, 6)),  # the last character of the line
        ("x = 1 +\n", (1, 8, 1, 8)),  # past the end of the line: an empty span
        ("x = 1\ndef f(:", (2, 7, 2, 8)),  # the last line, without a newline
    ],
    ids=["mid-line", "last-character", "end-of-line", "last-line"],
)
def test_syntax_error_span_covers_the_character_at_the_position_or_nothing_at_line_end(
    source: str, span: tuple[int, int, int, int]
) -> None:
    result = Linter(Config()).lint_source(source, "bad.py")

    assert result.path == "bad.py"
    assert [(f.path, f.code) for f in result.findings] == [("bad.py", "RNK001")]
    assert spans(result.findings) == [("RNK001", *span)]


def test_syntax_error_with_rnk001_disabled_gives_an_empty_result_for_its_path() -> None:
    result = Linter(Config(ignore=("RNK001",))).lint_source("def f(:\n", "bad.py")

    assert (result.path, result.findings, result.errors) == ("bad.py", [], [])


# -- the large-stack thread ------------------------------------------------------


def test_exception_raised_on_the_large_stack_thread_is_raised_again_in_the_caller() -> None:
    def fail() -> None:
        raise KeyError("lost")

    with pytest.raises(KeyError, match="lost"):
        run_with_large_stack(fail)


def test_large_stack_work_runs_on_a_thread_named_for_ranklint() -> None:
    # The name is what stack dumps (py-spy, faulthandler) show for a stuck parse.
    name = run_with_large_stack(lambda: threading.current_thread().name)

    assert name == "ranklint-parse"


# -- the cache inside a run ------------------------------------------------------


def test_lint_file_cached_without_a_cache_lints_the_bytes_given_not_the_file(
    tmp_path: Path,
) -> None:
    path = write(tmp_path / "mod.py", "x = 1\n")

    result = Linter(Config()).lint_file_cached(str(path), None, b"from os import *; sep\n")

    assert [(f.path, f.code) for f in result.findings] == [(str(path), "RNK301")]


def test_lint_file_cached_returns_the_stored_result_for_unchanged_bytes(
    tmp_path: Path, parses: list[str]
) -> None:
    config = Config(root=tmp_path)
    path = str(write(tmp_path / "mod.py", NEW_GROUP))
    cache = Cache.for_config(config, tmp_path / "cache")
    linter = Linter(config)

    first = linter.lint_file_cached(path, cache)
    second = linter.lint_file_cached(path, cache)

    assert len(parses) == 1
    assert second.findings == first.findings
    assert [(f.path, f.line, f.code) for f in second.findings] == [(path, 3, "RNK101")]


def test_serial_cached_run_past_the_pool_threshold_lints_stores_and_reuses_every_file(
    tmp_path: Path, parses: list[str]
) -> None:
    for index in range(10):
        write(tmp_path / f"mod{index}.py", NEW_GROUP)
    cache = tmp_path / "cache"

    cold = lint_paths([tmp_path], Config(root=tmp_path), jobs=1, cache_dir=cache)
    parsed_cold = len(parses)
    warm = lint_paths([tmp_path], Config(root=tmp_path), jobs=1, cache_dir=cache)

    assert (cold.errors, cold.files_checked) == ([], 10)
    assert [(Path(f.path).name, f.line, f.code) for f in cold.findings] == [
        (f"mod{index}.py", 3, "RNK101") for index in range(10)
    ]
    assert warm.findings == cold.findings
    assert (parsed_cold, len(parses)) == (10, 10)  # warm: nothing parsed


def test_unreadable_file_in_a_cached_run_yields_rnk001(tmp_path: Path) -> None:
    link = tmp_path / "gone.py"
    link.symlink_to(tmp_path / "missing-target.py")

    result = lint_paths([link], Config(root=tmp_path), jobs=1, cache_dir=tmp_path / "cache")

    assert [(f.path, f.code, f.message) for f in result.findings] == [
        (str(link), "RNK001", "cannot read file: No such file or directory")
    ]


def test_unreadable_file_listed_first_does_not_keep_the_others_from_the_cache(
    tmp_path: Path, parses: list[str]
) -> None:
    link = tmp_path / "a_gone.py"
    link.symlink_to(tmp_path / "missing-target.py")
    files = [link, write(tmp_path / "b.py", NEW_GROUP), write(tmp_path / "c.py", NEW_GROUP)]
    cache = tmp_path / "cache"
    lint_paths(files, Config(root=tmp_path), jobs=1, cache_dir=cache)
    parsed_cold = len(parses)

    warm = lint_paths(files, Config(root=tmp_path), jobs=1, cache_dir=cache)

    assert len(parses) == parsed_cold == 2  # warm: b.py and c.py came from the cache
    assert [(Path(f.path).name, f.code) for f in warm.findings] == [
        ("a_gone.py", "RNK001"),
        ("b.py", "RNK101"),
        ("c.py", "RNK101"),
    ]


# -- where the files are linted --------------------------------------------------


def _modules(root: Path, count: int) -> list[str]:
    return [str(write(root / f"mod{index}.py", NEW_GROUP)) for index in range(count)]


def test_jobs_1_lints_every_file_in_the_calling_process(tmp_path: Path, parses: list[str]) -> None:
    files = _modules(tmp_path, 9)

    results = lint_files(files, Config(root=tmp_path), jobs=1)

    assert len(parses) == 9
    assert [r.path for r in results] == files


@pytest.mark.parametrize(
    ("count", "jobs"), [(8, 2), (12, 3)], ids=["threshold-2-jobs", "more-3-jobs"]
)
def test_files_from_the_pool_threshold_on_are_linted_in_worker_processes(
    tmp_path: Path, parses: list[str], count: int, jobs: int
) -> None:
    files = _modules(tmp_path, count)

    results = lint_files(files, Config(root=tmp_path), jobs=jobs)

    assert parses == []  # the workers parsed them
    assert [r.path for r in results] == files
    assert [[(f.line, f.code) for f in r.findings] for r in results] == [[(3, "RNK101")]] * count


@pytest.mark.skipif((__import__("os").cpu_count() or 1) < 2, reason="needs 2 CPUs")
@pytest.mark.parametrize("jobs", [None, 0], ids=["default", "zero"])
def test_unset_or_zero_jobs_use_the_cpu_count_of_workers(
    tmp_path: Path, parses: list[str], jobs: int | None
) -> None:
    files = _modules(tmp_path, 8)

    results = lint_files(files, Config(root=tmp_path), jobs=jobs)

    assert parses == []
    assert [r.path for r in results] == files


@pytest.fixture
def other_thread() -> Iterator[None]:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    yield
    stop.set()
    thread.join()


@pytest.mark.usefixtures("other_thread")
def test_workers_started_while_another_thread_runs_do_not_inherit_the_parents_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Forking a process that runs threads can deadlock the child: the workers
    # then start from a clean process, so a change made here does not reach them.
    files = _modules(tmp_path, 8)

    def broken(text: str) -> cst.Module:
        raise ValueError("changed in the parent only")

    monkeypatch.setattr(linter_module, "parse_source", broken)

    results = lint_files(files, Config(root=tmp_path), jobs=2)

    assert [r.errors for r in results] == [[]] * 8
    assert [[(f.line, f.code) for f in r.findings] for r in results] == [[(3, "RNK101")]] * 8


def test_jobs_2_with_fewer_files_than_the_pool_threshold_lints_in_the_calling_process(
    tmp_path: Path, parses: list[str]
) -> None:
    files = _modules(tmp_path, 3)

    results = lint_files(files, Config(root=tmp_path), jobs=2)

    assert len(parses) == 3
    assert [r.path for r in results] == files


# -- the workers' start method ---------------------------------------------------


@pytest.fixture
def all_start_methods(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        "multiprocessing.get_all_start_methods", lambda: ["fork", "spawn", "forkserver"]
    )


@pytest.mark.usefixtures("all_start_methods")
def test_workers_fork_on_linux_when_no_other_thread_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("sys.platform", "linux")
    monkeypatch.setattr(pool_module, "os_thread_count", lambda: 1)

    assert pool_module.pool_context().get_start_method() == "fork"


@pytest.mark.usefixtures("all_start_methods", "other_thread")
def test_workers_come_from_a_forkserver_when_another_thread_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("sys.platform", "linux")

    assert pool_module.pool_context().get_start_method() == "forkserver"


@pytest.mark.usefixtures("all_start_methods")
def test_workers_come_from_a_forkserver_off_linux_even_with_one_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("sys.platform", "darwin")
    monkeypatch.setattr(pool_module, "os_thread_count", lambda: 1)

    assert pool_module.pool_context().get_start_method() == "forkserver"


@pytest.mark.usefixtures("other_thread")
def test_workers_are_spawned_where_neither_fork_nor_forkserver_exists(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("sys.platform", "win32")
    monkeypatch.setattr("multiprocessing.get_all_start_methods", lambda: ["spawn"])

    assert pool_module.pool_context().get_start_method() == "spawn"


# -- project findings ------------------------------------------------------------

RANKS = "import torch.distributed as dist\n\n\ndef is_main():\n    return dist.get_rank() == 0\n"
COMM = "import torch.distributed as dist\n\n\ndef sync():\n    dist.barrier()\n"
CKPT = "from pkg.comm import sync\n\n\ndef save_checkpoint(state):\n    sync()\n"


def _project(root: Path, train: str) -> list[str]:
    write(root / "pyproject.toml", "[project]\nname = 'demo'\n")
    write(root / "pkg" / "__init__.py", "")
    return [
        str(write(root / "pkg" / "ranks.py", RANKS)),
        str(write(root / "pkg" / "comm.py", COMM)),
        str(write(root / "pkg" / "ckpt.py", CKPT)),
        str(write(root / "pkg" / "train.py", train)),
    ]


TRAIN = (
    "import torch.distributed as dist\n"
    "from pkg.ranks import is_main\n"
    "from pkg.ckpt import save_checkpoint\n"
    "from pkg.comm import sync\n"
    "\n"
    "\n"
    "def train(state):\n"
    "    if is_main():\n"
    "        save_checkpoint(state)\n"  # line 9: three hops, through ckpt.py and comm.py
    "    if is_main():\n"
    "        sync()\n"  # line 11: two hops
    "    if is_main():\n"
    "        dist.barrier()\n"  # line 13: in place
)


def test_project_findings_name_and_trace_their_call_chains_across_files(tmp_path: Path) -> None:
    _project(tmp_path, TRAIN)
    pkg = tmp_path / "pkg"
    train, ckpt, comm = str(pkg / "train.py"), str(pkg / "ckpt.py"), str(pkg / "comm.py")

    result = lint_paths([tmp_path], Config(root=tmp_path), jobs=1)

    assert result.errors == []
    found = [(f.path, f.line, f.col, f.code) for f in result.findings]
    assert found == [(train, 9, 9, "RNK102"), (train, 11, 9, "RNK102"), (train, 13, 9, "RNK102")]
    three, two, one = result.findings
    assert f"save_checkpoint() -> sync() -> dist.barrier() at {comm}:5)" in three.message
    assert three.trace == (
        TraceStep(train, 9, 9, "calls `save_checkpoint()`"),
        TraceStep(ckpt, 5, 5, "calls `sync()`"),
        TraceStep(comm, 5, 5, "`dist.barrier()` here"),
    )
    assert f"sync() -> dist.barrier() at {comm}:5)" in two.message
    assert two.trace == (
        TraceStep(train, 11, 9, "calls `sync()`"),
        TraceStep(comm, 5, 5, "`dist.barrier()` here"),
    )
    assert "{chain}" not in one.message
    assert one.trace == ()


def test_suppressed_project_finding_does_not_hide_the_ones_after_it(tmp_path: Path) -> None:
    train = TRAIN.replace("save_checkpoint(state)\n", "save_checkpoint(state)  # noqa: RNK102\n")
    _project(tmp_path, train)

    result = lint_paths([tmp_path], Config(root=tmp_path), jobs=1)

    assert [(f.line, f.code) for f in result.findings] == [(11, "RNK102"), (13, "RNK102")]


@pytest.mark.parametrize(
    "change",
    [lambda path: path.unlink(), lambda path: path.write_text("def f(:\n", encoding="utf-8")],
    ids=["deleted", "unparsable"],
)
def test_project_finding_through_a_file_that_changed_before_placing_is_skipped(
    tmp_path: Path, change: object
) -> None:
    config = Config(root=tmp_path)
    files = _project(tmp_path, TRAIN)
    results = lint_files(files, config, jobs=1)

    change(tmp_path / "pkg" / "ckpt.py")  # type: ignore[operator]
    Linter(config).project_phase(results)

    train = results[-1]
    assert [(f.line, f.code) for f in train.findings] == [(11, "RNK102"), (13, "RNK102")]


def test_project_finding_suppressed_by_a_comment_stays_suppressed_on_a_warm_run(
    tmp_path: Path,
) -> None:
    train = TRAIN.replace("sync()\n    if", "sync()  # noqa: RNK102\n    if")
    _project(tmp_path, train)
    cache = tmp_path / "cache"

    cold = lint_paths([tmp_path], Config(root=tmp_path), jobs=1, cache_dir=cache)
    warm = lint_paths([tmp_path], Config(root=tmp_path), jobs=1, cache_dir=cache)

    assert [(f.line, f.code) for f in cold.findings] == [(9, "RNK102"), (13, "RNK102")]
    assert warm.findings == cold.findings


def test_project_finding_through_a_cached_file_that_became_undecodable_is_skipped(
    tmp_path: Path,
) -> None:
    config = Config(root=tmp_path)
    files = _project(tmp_path, TRAIN)
    cache = Cache.for_config(config, tmp_path / "cache")
    cold = lint_files(files, config, jobs=1, cache=cache)
    Linter(config).project_phase(cold, cache=cache)  # stores the located call sites
    warm = lint_files(files, config, jobs=1, cache=cache)
    # The phase itself runs again (as when another file of the project changed),
    # with comm.py's call sites known from the cache.
    shutil.rmtree(cache.directory / "project")

    (tmp_path / "pkg" / "comm.py").write_bytes(b"x = '\xff'\n")
    Linter(config).project_phase(warm, cache=cache)

    assert [(f.line, f.code) for f in warm[-1].findings] == [(13, "RNK102")]


# -- the walk: bindings, loops, branches and handlers of each construct ----------

DIST = "import torch.distributed as dist\n"
HOT = ("RNK201", "RNK202", "RNK203")


def codes_at(source: str, select: tuple[str, ...] | None = None) -> list[tuple[int, str]]:
    result = lint_source(
        textwrap.dedent(source).lstrip("\n"), "lib/snippet.py", Config(select=select)
    )
    assert result.errors == []
    return [(f.line, f.code) for f in result.findings]


@pytest.mark.parametrize(
    "body",
    [
        "for dist in groups:\n    dist.new_group()\n",
        "with open('x') as dist:\n    dist.new_group()\n",
        "try:\n    pass\nexcept Exception as dist:\n    dist.new_group()\n",
        "dist += 1\ndist.new_group()\n",
        "if (dist := 3):\n    dist.new_group()\n",
        "del dist\ndist.new_group()\n",
        "x = [dist.new_group() for dist in groups]\n",
        "dist = 3\ndist.new_group()\n",
        "dist: int = 3\ndist.new_group()\n",
        "class dist:\n    pass\ndist.new_group()\n",
    ],
    ids=[
        *("for", "with", "except", "augmented", "walrus", "del", "comprehension"),
        *("assignment", "annotated", "class"),
    ],
)
def test_name_rebound_by_a_binding_construct_no_longer_names_the_imported_module(
    body: str,
) -> None:
    assert codes_at(DIST + body) == []


def test_loop_variable_from_a_rank_dependent_iterable_is_rank_dependent_after_the_loop() -> None:
    source = """
    import torch.distributed as dist


    def f():
        for r in [dist.get_rank()]:
            pass
        if r == 0:
            dist.barrier()
    """

    assert codes_at(source) == [(8, "RNK102")]


def test_augmented_assignment_adds_the_rank_dependence_of_its_value() -> None:
    source = """
    import torch.distributed as dist


    def f():
        r = 0
        r += dist.get_rank()
        if r == 0:
            dist.barrier()
    """

    assert codes_at(source) == [(8, "RNK102")]


def test_loop_target_augmented_and_walrus_names_keep_the_tensor_kind_in_a_hot_step() -> None:
    source = """
    import torch


    def train_step(batch: torch.Tensor):
        for row in batch:
            print(row)
        total = 0
        total += batch
        print(total)
        if (y := batch.sum()):
            print(y)
    """

    assert codes_at(source, HOT) == [(5, "RNK202"), (6, "RNK201"), (9, "RNK201"), (11, "RNK201")]


@pytest.mark.parametrize(
    "statement",
    [
        "for i in x:\n        pass\n    else:\n",
        "try:\n        pass\n    except Exception:\n        pass\n    else:\n",
    ],
    ids=["for-else", "try-else"],
)
def test_else_block_of_a_loop_or_try_is_analysed(statement: str) -> None:
    source = (
        f"{DIST}\n\ndef f():\n    {statement}"
        "        if dist.get_rank() == 0:\n            dist.barrier()\n"
    )
    last = source.count("\n")

    assert codes_at(source) == [(last, "RNK102")]


@pytest.mark.parametrize("loop", ["for step in range(100):", "while True:"], ids=["for", "while"])
def test_host_sync_in_a_module_level_step_loop_after_an_inner_loop_is_reported(
    loop: str,
) -> None:
    inner = "for j in range(2):" if loop.startswith("for") else "while j:"
    source = (
        f"import torch\n{loop}\n    loss = model(batch)\n    loss.backward()\n"
        f"    optimizer.step()\n    {inner}\n        pass\n    print(loss.item())\n"
        "print(loss.item())\n"
    )

    assert codes_at(source, HOT) == [(8, "RNK201")]


def test_environment_default_set_under_a_while_that_checks_the_key_is_not_reported() -> None:
    source = """
    import os
    while "MASTER_ADDR" not in os.environ:
        os.environ["MASTER_ADDR"] = "10.0.0.1"
    """

    assert codes_at(source) == []


FSDP = (
    "import torch.distributed as dist\n"
    "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, StateDictType\n"
)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT):\n"
            "        with open('x') as fh:\n"
            "            if dist.get_rank() == 0:\n"
            "                sd = model.state_dict()\n",
            [(9, "RNK102")],
        ),
        (
            "    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT):\n"
            "        pass\n"
            "    if dist.get_rank() == 0:\n"
            "        sd = model.state_dict()\n",
            [],
        ),
        (
            "    if dist.get_rank() == 0:\n"
            "        with open('y') as g:\n"
            "            sd = model.state_dict()\n",
            [],
        ),
    ],
    ids=["inside-nested-with", "after-the-with", "plain-with"],
)
def test_state_dict_is_a_collective_only_inside_an_fsdp_state_dict_context(
    body: str, expected: list[tuple[int, str]]
) -> None:
    assert codes_at(FSDP + "\n\ndef save(model):\n" + body) == expected


def test_augmented_assignment_keeps_the_rank_dependence_the_name_already_had() -> None:
    source = """
    import torch.distributed as dist


    def f():
        r = dist.get_rank()
        r += 1
        if r == 0:
            dist.barrier()
    """

    assert codes_at(source) == [(8, "RNK102")]


def test_walrus_binding_none_keeps_an_optional_imports_meaning_like_an_assignment() -> None:
    source = """
    import torch.distributed as dist
    if (dist := None) is None:
        pass
    dist.new_group()
    """

    assert codes_at(source) == [(4, "RNK101")]


def test_rank_conditions_of_boolean_chains_are_named_with_their_polarity() -> None:
    source = """
    import torch.distributed as dist


    def f():
        dist.get_rank() == 0 and dist.barrier()
        dist.get_rank() != 0 or dist.barrier()
    """

    result = lint_source(textwrap.dedent(source).lstrip("\n"), "lib/snippet.py")

    assert [(f.line, f.code) for f in result.findings] == [(5, "RNK102"), (6, "RNK102")]
    first, second = (f.message for f in result.findings)
    assert "reached only when `dist.get_rank() == 0`;" in first
    assert "reached only when `dist.get_rank() != 0` is false;" in second


def test_tensor_tested_inside_a_long_boolean_chain_in_a_hot_step_is_a_host_sync() -> None:
    source = """
    import torch


    def train_step(x: torch.Tensor, a, b):
        if x.any() and a and b:
            pass
        if a or x.all() or b:
            pass
    """

    # A truth test decides host control flow: the low tier.
    result = lint_source(
        textwrap.dedent(source).lstrip("\n"), "lib/snippet.py", Config(select=HOT, confidence="low")
    )
    assert [(f.line, f.code) for f in result.findings] == [(5, "RNK201"), (7, "RNK201")]


def test_rank_dependent_raise_is_not_an_early_exit_but_a_return_after_it_is() -> None:
    source = """
    import torch.distributed as dist


    def f():
        if dist.get_rank() == 0:
            raise ValueError()
            return
        dist.barrier()
    """

    result = lint_source(textwrap.dedent(source).lstrip("\n"), "lib/snippet.py")

    assert [(f.line, f.code) for f in result.findings] == [(8, "RNK102")]
    assert "skipped by ranks that return early when" in result.findings[0].message


class _NodeRecorder:
    """A stand-in visitor for the walker: records visits and leaves of some node types."""

    code = "TEST"
    name = "recorder"
    handlers_on_visit = {cst.BooleanOperation: "visit", cst.CompFor: "visit"}
    handlers_on_leave = {cst.BooleanOperation: "leave", cst.CompFor: "leave"}

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self.events: list[tuple[str, str]] = []

    def visit(self, node: cst.CSTNode) -> None:
        self.events.append(("visit", self.module.code_for_node(node).strip()))

    def leave(self, node: cst.CSTNode) -> None:
        self.events.append(("leave", self.module.code_for_node(node).strip()))


def test_walker_visits_and_leaves_every_boolean_operation_and_comprehension_clause_once() -> None:
    module = cst.parse_module("x = [a for b in c if d for e in f]\ny = p and q and r or s or t\n")
    recorder = _NodeRecorder(module)

    walker = Walker(FileContext("k.py", module, Config().analysis_settings()), [recorder])  # type: ignore[list-item]
    walker.walk(module)

    assert walker.errors == []
    nodes = [
        "for b in c if d for e in f",
        "for e in f",
        "p and q and r or s or t",
        "p and q and r or s",
        "p and q and r",
        "p and q",
    ]
    assert sorted(code for kind, code in recorder.events if kind == "visit") == sorted(nodes)
    assert sorted(code for kind, code in recorder.events if kind == "leave") == sorted(nodes)
    for code in nodes:  # each node is left after it is visited
        assert recorder.events.index(("visit", code)) < recorder.events.index(("leave", code))


@pytest.mark.parametrize(
    "binding", ["dist = None", "dist: object = None"], ids=["assignment", "annotated"]
)
def test_name_set_to_none_keeps_an_optional_imports_meaning(binding: str) -> None:
    assert codes_at(f"{DIST}{binding}\ndist.new_group()\n") == [(3, "RNK101")]


def test_annotated_assignment_binds_the_rank_dependence_of_its_value() -> None:
    source = """
    import torch.distributed as dist


    def f():
        r: int = dist.get_rank()
        if r == 0:
            dist.barrier()
    """

    assert codes_at(source) == [(7, "RNK102")]


def test_annotation_makes_a_name_a_tensor_in_a_hot_step() -> None:
    source = """
    import torch


    def train_step(batch):
        y: torch.Tensor = batch
        print(y)
    """

    assert codes_at(source, HOT) == [(6, "RNK201")]


def test_parameter_shadowing_a_builtin_in_a_hot_step_is_not_the_builtin() -> None:
    source = """
    import torch


    def train_step(x: torch.Tensor, print):
        print(x)
    """

    assert codes_at(source, HOT) == []


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("if __name__ == '__main__':\n    dist.init_process_group('nccl')\n", []),
        (
            "if __name__ != '__main__':\n    pass\nelse:\n"
            "    dist.init_process_group('nccl')\ndist.new_group()\n",
            [(6, "RNK101")],
        ),
        ("if x:\n    pass\nelse:\n    pass\ndist.new_group()\n", [(6, "RNK101")]),
        ("def f():\n    if x:\n        pass\n    else:\n        pass\n    dist.new_group()\n", []),
    ],
    ids=["main-block", "else-of-not-main", "after-if-else", "after-if-else-in-function"],
)
def test_code_runs_at_import_time_outside_main_blocks_and_functions(
    body: str, expected: list[tuple[int, str]]
) -> None:
    assert codes_at(DIST + body) == expected


def test_environment_default_set_in_the_else_of_a_check_of_the_key_is_not_reported() -> None:
    source = """
    import os
    if "MASTER_ADDR" in os.environ:
        pass
    else:
        os.environ["MASTER_ADDR"] = "10.0.0.1"
    """

    assert codes_at(source) == []


def test_rule_that_crashed_is_skipped_but_later_rules_on_the_same_node_type_still_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def boom(self: WildcardImport, node: cst.ImportFrom) -> None:
        raise ValueError("kaboom")

    monkeypatch.setattr(WildcardImport, "visit_ImportFrom", boom)

    result = lint_source("from os import *; sep\nfrom wandb import run\n", "lib/crash.py", HEAVY)

    assert [(f.line, f.code) for f in result.findings] == [(2, "RNK302")]
    assert [(e.path, e.message) for e in result.errors] == [("lib/crash.py", "ValueError: kaboom")]
    assert 'raise ValueError("kaboom")' in result.errors[0].details


class _TriviaRecorder(_NodeRecorder):
    handlers_on_visit = {
        cst.Comment: "visit",
        cst.SimpleWhitespace: "visit",
        cst.ParenthesizedWhitespace: "visit",
        cst.TrailingWhitespace: "visit",
    }
    handlers_on_leave: dict[type[cst.CSTNode], str] = {}


def test_walker_never_enters_whitespace_or_comments() -> None:
    module = cst.parse_module("x = (1 +  # note\n     2)  # trailing\ny = f( a )\n")
    recorder = _TriviaRecorder(module)

    walker = Walker(FileContext("k.py", module, Config().analysis_settings()), [recorder])  # type: ignore[list-item]
    walker.walk(module)

    assert (walker.errors, recorder.events) == ([], [])


def test_findings_of_a_rule_that_crashes_later_in_the_file_are_dropped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[cst.ImportFrom] = []

    def report_then_crash(self: WildcardImport, node: cst.ImportFrom) -> None:
        seen.append(node)
        if len(seen) > 1:
            raise ValueError("kaboom")
        self.report(node, "first")

    monkeypatch.setattr(WildcardImport, "visit_ImportFrom", report_then_crash)

    result = lint_source("from os import *; sep\nfrom sys import *\n", "lib/crash.py")

    assert result.findings == []
    assert [(e.where, e.message) for e in result.errors] == [
        ("rule RNK301 (wildcard-import)", "ValueError: kaboom")
    ]


class _CrashingVisitor:
    """A stand-in visitor with neither a ``where`` nor a ``code``: errors name its class."""

    handlers_on_visit = {cst.Name: "visit"}
    handlers_on_leave: dict[type[cst.CSTNode], str] = {}

    def visit(self, node: cst.CSTNode) -> None:
        raise ValueError("kaboom")


def test_crash_of_a_visitor_without_a_name_is_reported_under_its_class_name() -> None:
    module = cst.parse_module("x = y\n")

    walker = Walker(FileContext("k.py", module, Config().analysis_settings()), [_CrashingVisitor()])  # type: ignore[list-item]
    walker.walk(module)

    assert [(e.path, e.where, e.message) for e in walker.errors] == [
        ("k.py", "_CrashingVisitor", "ValueError: kaboom")
    ]


# -- placing call sites in worker processes -------------------------------------------


def _many_chains(root: Path, count: int) -> None:
    write(root / "pyproject.toml", "[project]\nname = 'demo'\n")
    write(root / "pkg" / "__init__.py", "")
    for index in range(count):
        padding = "x = 1\n    " * index  # moves the barrier down a line per file
        write(
            root / "pkg" / f"helper{index}.py",
            f"import torch.distributed as dist\n\n\ndef sync{index}():\n"
            f"    {padding}dist.barrier()\n",
        )
        write(
            root / "pkg" / f"caller{index}.py",
            f"import torch.distributed as dist\nfrom pkg.helper{index} import sync{index}\n\n\n"
            f"def step():\n    if dist.get_rank() == 0:\n        sync{index}()\n",
        )


def test_call_sites_of_many_files_are_placed_in_workers_with_the_positions_of_a_serial_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _many_chains(tmp_path, 10)
    config = Config(root=tmp_path)
    serial = lint_paths([tmp_path], config, jobs=1)
    pools: list[int] = []
    real = pool_module.ProcessPoolExecutor

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        pools.append(kwargs["max_workers"])
        return real(*args, **kwargs)

    monkeypatch.setattr(pool_module, "ProcessPoolExecutor", counting)
    monkeypatch.setattr(pool_module, "MIN_FILES_FOR_POOL", 100)  # the walks only

    parallel = lint_paths([tmp_path], config, jobs=2)

    assert pools == [2]  # the 20 files linted in this process, the 20 walks in 2 workers
    assert [f.code for f in serial.findings] == ["RNK102"] * 10
    assert parallel.findings == serial.findings
    assert "helper9.py:14" in parallel.findings[-1].message
