"""The project phase: call chains across files, summaries as data, faces and options."""

from __future__ import annotations

import pickle
import textwrap
from pathlib import Path

import pytest

from ranklint import Config, lint_paths, lint_source
from ranklint.analysis.project.callgraph import module_name
from ranklint.engine import Linter
from tests.conftest import run_subprocess, write

RANKS = """
import torch.distributed as dist


def is_main():
    return dist.get_rank() == 0
"""
CHECKPOINT = """
import torch.distributed as dist


def _sync():
    dist.barrier()


def save_checkpoint(state):
    _sync()
"""
TRAIN = """
from pkg.ranks import is_main
from pkg.checkpoint import save_checkpoint


def train(state):
    if is_main():
        save_checkpoint(state)
    save_checkpoint(state)
"""


def make_package(root: Path, files: dict[str, str]) -> Path:
    package = root / "pkg"
    write(package / "__init__.py", "")
    for name, source in files.items():
        write(package / name, textwrap.dedent(source).lstrip("\n"))
    return package


def divergent(root: Path, **kwargs: object) -> list[tuple[str, int]]:
    result = lint_paths([root], Config(confidence="low", select=("RNK102",), root=root), **kwargs)
    assert result.errors == []
    return [(Path(f.path).name, f.line) for f in result.findings]


def test_collective_two_calls_deep_in_another_module_under_imported_predicate_is_reported(
    tmp_path: Path,
) -> None:
    make_package(tmp_path, {"ranks.py": RANKS, "checkpoint.py": CHECKPOINT, "train.py": TRAIN})

    result = lint_paths(
        [tmp_path], Config(confidence="low", select=("RNK102",), root=tmp_path), jobs=1
    )

    (finding,) = result.findings
    assert (Path(finding.path).name, finding.line) == ("train.py", 7)
    assert "save_checkpoint() -> _sync() -> dist.barrier() at " in finding.message
    assert finding.message.endswith(
        "checkpoint.py:5) is reached only when `is_main()`; "
        "ranks that skip it hang in their next collective; call it "
        "on every rank, outside the rank-dependent branch"
    )
    assert [(Path(step.path).name, step.line) for step in finding.trace] == [
        ("train.py", 7),
        ("checkpoint.py", 9),
        ("checkpoint.py", 5),
    ]


def test_same_call_outside_the_rank_guard_is_not_reported(tmp_path: Path) -> None:
    train = TRAIN.replace("    if is_main():\n        save_checkpoint(state)\n", "")
    make_package(tmp_path, {"ranks.py": RANKS, "checkpoint.py": CHECKPOINT, "train.py": train})

    assert divergent(tmp_path, jobs=1) == []


@pytest.mark.parametrize(
    "imports",
    [
        "from .ranks import is_main\nfrom .checkpoint import save_checkpoint\n",
    ],
)
def test_relative_and_module_imports_resolve_across_files(tmp_path: Path, imports: str) -> None:
    body = "\n\ndef train(state):\n    if is_main():\n        save_checkpoint(state)\n"
    make_package(
        tmp_path,
        {"ranks.py": RANKS, "checkpoint.py": CHECKPOINT, "train.py": imports + body},
    )

    assert divergent(tmp_path, jobs=1) == [("train.py", 7)]


@pytest.mark.parametrize(
    "imports",
    [
        "from . import ranks, checkpoint\nis_main = ranks.is_main\n"
        "save_checkpoint = checkpoint.save_checkpoint\n",
        "import pkg.ranks as r\nimport pkg.checkpoint as c\nis_main = r.is_main\n"
        "save_checkpoint = c.save_checkpoint\n",
    ],
)
def test_documented_limit_module_level_aliases_of_functions_are_not_followed(
    tmp_path: Path, imports: str
) -> None:
    # docs/rules/RNK102.md, "Known limits": variables holding functions are not
    # followed. Lifting the limit should turn this into [("train.py", 7)].
    body = "\n\ndef train(state):\n    if is_main():\n        save_checkpoint(state)\n"
    make_package(
        tmp_path,
        {"ranks.py": RANKS, "checkpoint.py": CHECKPOINT, "train.py": imports + body},
    )

    assert divergent(tmp_path, jobs=1) == []


def test_module_attribute_calls_resolve_across_files(tmp_path: Path) -> None:
    train = """
    from pkg import ranks
    import pkg.checkpoint


    def train(state):
        if ranks.is_main():
            pkg.checkpoint.save_checkpoint(state)
    """
    make_package(tmp_path, {"ranks.py": RANKS, "checkpoint.py": CHECKPOINT, "train.py": train})

    assert divergent(tmp_path, jobs=1) == [("train.py", 7)]


def test_method_inherited_from_a_base_class_in_another_file_is_followed(tmp_path: Path) -> None:
    base = """
    import torch.distributed as dist


    class BaseTrainer:
        def sync(self):
            dist.barrier()
    """
    trainer = """
    from pkg.base import BaseTrainer


    class Trainer(BaseTrainer):
        def __init__(self, rank):
            self.rank = rank

        def step(self):
            if self.rank == 0:
                self.sync()
    """
    make_package(tmp_path, {"base.py": base, "trainer.py": trainer})

    assert divergent(tmp_path, jobs=1) == [("trainer.py", 10)]


def test_constructor_that_creates_a_group_counts_as_group_creation(tmp_path: Path) -> None:
    source = """
    import torch.distributed as dist


    class Groups:
        def __init__(self):
            self.dp = dist.new_group([0, 1])


    def setup(rank):
        if rank == 0:
            return Groups()
        return None
    """
    result = lint_source(
        textwrap.dedent(source), "groups.py", Config(confidence="low", select=("RNK105",))
    )

    assert [(f.line, f.code) for f in result.findings] == [(12, "RNK105")]


def test_recursive_call_graph_terminates_and_still_reports(tmp_path: Path) -> None:
    source = """
    import torch.distributed as dist


    def ping(n):
        dist.barrier()
        if n:
            pong(n - 1)


    def pong(n):
        ping(n)


    def run(rank):
        if rank == 0:
            pong(3)
    """
    result = lint_source(
        textwrap.dedent(source), "cycle.py", Config(confidence="low", select=("RNK102",))
    )

    assert [f.line for f in result.findings] == [17]


@pytest.mark.parametrize(("argument", "expected"), [("False", []), ("flag", [12])])
def test_literal_false_argument_disables_a_parameter_guarded_collective(
    argument: str, expected: list[int]
) -> None:
    source = f"""
    import torch.distributed as dist


    def log(msg, barrier=True):
        if barrier:
            dist.barrier()


    def report(rank, flag):
        if rank == 0:
            log("done", barrier={argument})
    """
    result = lint_source(
        textwrap.dedent(source), "log.py", Config(confidence="low", select=("RNK102",))
    )

    assert [f.line for f in result.findings] == expected


def test_parallel_run_gives_the_same_cross_file_findings_as_a_serial_run(tmp_path: Path) -> None:
    files = {"ranks.py": RANKS, "checkpoint.py": CHECKPOINT, "train.py": TRAIN}
    files.update({f"filler{i}.py": f"X{i} = {i}\n" for i in range(10)})
    make_package(tmp_path, files)

    assert divergent(tmp_path, jobs=2) == divergent(tmp_path, jobs=1) == [("train.py", 7)]


def test_noqa_on_the_call_line_suppresses_a_cross_file_finding(tmp_path: Path) -> None:
    train = TRAIN.replace(
        "save_checkpoint(state)\n    save", "save_checkpoint(state)  # noqa: RNK102\n    save", 1
    )
    make_package(tmp_path, {"ranks.py": RANKS, "checkpoint.py": CHECKPOINT, "train.py": train})

    assert divergent(tmp_path, jobs=1) == []


def test_per_file_ignores_apply_to_the_file_of_the_reported_call(tmp_path: Path) -> None:
    make_package(tmp_path, {"ranks.py": RANKS, "checkpoint.py": CHECKPOINT, "train.py": TRAIN})
    config = Config(
        select=("RNK102",), root=tmp_path, per_file_ignores={"pkg/train.py": ("RNK102",)}
    )

    assert lint_paths([tmp_path], config, jobs=1).findings == []


def test_file_summaries_are_plain_picklable_data(tmp_path: Path) -> None:
    path = make_package(tmp_path, {"checkpoint.py": CHECKPOINT}) / "checkpoint.py"

    summary = Linter(Config()).lint_file(str(path)).summary

    assert summary is not None
    again = pickle.loads(pickle.dumps(summary))
    assert set(again.functions) == {"_sync", "save_checkpoint"}
    assert again.functions["save_checkpoint"].events[0].target == "@local:_sync"


def test_module_names_follow_package_init_files_in_a_src_layout(tmp_path: Path) -> None:
    write(tmp_path / "src" / "pkg" / "__init__.py", "")
    write(tmp_path / "src" / "pkg" / "sub" / "__init__.py", "")
    leaf = write(tmp_path / "src" / "pkg" / "sub" / "mod.py", "")

    assert module_name(str(leaf)) == "pkg.sub.mod"
    assert module_name(str(tmp_path / "src" / "pkg" / "__init__.py")) == "pkg"
    assert module_name(str(tmp_path / "script.py")) == "script"


def test_project_rules_run_in_the_flake8_face(tmp_path: Path) -> None:
    source = (
        "import torch.distributed as dist\n\n\n"
        "def f():\n    if dist.get_rank() == 0:\n        dist.barrier()\n"
    )
    write(tmp_path / "mod.py", source)

    done = run_subprocess("flake8", "--select", "RNK102", "mod.py", cwd=tmp_path)

    assert "mod.py:6:9: RNK102 `barrier` is reached only when `dist.get_rank() == 0`" in done.stdout


@pytest.mark.parametrize(
    ("name", "body", "expected_lines"),
    [
        pytest.param(
            "and-chain",
            "    x = rank == 0 and " + " and ".join(f"f{i}()" for i in range(3000)) + "\n",
            [],  # a long rank-dependent condition, but no collective
            id="and-chain",
        ),
        pytest.param(
            "elif-chain",
            "    if rank == 1:\n        dist.barrier()\n"
            + "".join(f"    elif x == {i}:\n        dist.all_reduce(x)\n" for i in range(800)),
            [6],  # the barrier on the rank branch against the all_reduce of the others
            id="elif-chain",
        ),
        pytest.param(
            "nested-conditional-expressions",
            "    y = " + " if x else ".join(f"dist.all_reduce(x{i})" for i in range(900)) + "\n",
            [],  # every arm depends on `x`, not on the rank
            id="nested-conditional-expressions",
        ),
    ],
)
@pytest.mark.slow  # thousands of branches in 24 files, twice, in a process pool
def test_pathological_branching_is_analysed_in_parallel_and_cached_with_the_expected_findings(
    tmp_path: Path, name: str, body: str, expected_lines: list[int]
) -> None:
    source = "import torch.distributed as dist\n\n\ndef g(rank, x):\n" + body
    for index in range(8):  # enough files for the process pool
        write(tmp_path / f"{name}{index}.py", source)
    config = Config(confidence="low", select=("RNK102",), root=tmp_path)

    cold = lint_paths([tmp_path], config, jobs=2, cache_dir=tmp_path / "cache")
    warm = lint_paths([tmp_path], config, jobs=2, cache_dir=tmp_path / "cache")

    assert cold.errors == warm.errors == []
    assert cold.findings == warm.findings
    found = sorted((Path(f.path).name, f.line, f.code) for f in cold.findings)
    assert found == sorted(
        (f"{name}{index}.py", line, "RNK102") for index in range(8) for line in expected_lines
    )


_DIST = "import torch.distributed as dist\n\n\n"


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        pytest.param(
            {
                "train.py": _DIST + "class Outer:\n    class Trainer:\n"
                "        def save(self):\n            dist.barrier()\n\n"
                "        def step(self, rank):\n            if rank == 0:\n"
                "                self.save()\n",
            },
            [("train.py", 11)],
            id="method-of-a-nested-class",
        ),
        pytest.param(
            {
                "train.py": _DIST + "def outer(rank):\n    def sync():\n"
                "        dist.barrier()\n\n    if rank == 0:\n        sync()\n",
            },
            [("train.py", 9)],
            id="nested-function",
        ),
        pytest.param(
            {
                "ckpt.py": _DIST + "class Saver:\n    @staticmethod\n"
                "    def save_all():\n        dist.barrier()\n",
                "__init__.py": "from .ckpt import Saver\n",
                "train.py": "from pkg import Saver\n\n\ndef f(rank):\n    if rank == 0:\n"
                "        Saver.save_all()\n",
            },
            [("train.py", 6)],
            id="method-through-a-package-re-export",
        ),
        pytest.param(
            {
                "base.py": _DIST + "class Base:\n    def sync(self):\n        dist.barrier()\n",
                "child.py": "from pkg.base import Base\n\n\nclass Child(Base):\n"
                "    def step(self, rank):\n        if rank == 0:\n            self.sync()\n",
            },
            [("child.py", 7)],
            id="method-inherited-from-another-module",
        ),
        pytest.param(
            {
                "saver.py": _DIST + "class Saver:\n    def __init__(self):\n"
                "        dist.barrier()\n",
                "train.py": "from pkg.saver import Saver\n\n\ndef f(rank):\n"
                "    if rank == 0:\n        return Saver()\n",
            },
            [("train.py", 6)],
            id="constructor-that-synchronises",
        ),
        pytest.param(
            {
                "sub/__init__.py": "",
                "sub/ops.py": _DIST + "def sync():\n    dist.barrier()\n",
                "sub/use.py": "from .ops import sync\nfrom ..ranks import is_main\n\n\n"
                "def f():\n    if is_main():\n        sync()\n",
                "ranks.py": RANKS,
            },
            [("use.py", 7)],
            id="relative-imports-one-and-two-levels-up",
        ),
    ],
)
def test_calls_resolve_through_nesting_reexports_inheritance_and_relative_imports(
    tmp_path: Path, files: dict[str, str], expected: list[tuple[str, int]]
) -> None:
    make_package(tmp_path, files)

    assert divergent(tmp_path, jobs=1) == expected


@pytest.mark.parametrize(
    ("body", "line", "message"),
    [
        pytest.param(
            "def f(rank):\n    if rank == 0:\n        dist.barrier()\n",
            6,
            "`dist.barrier()`"[0:0]
            + "`barrier` is reached only when `rank == 0`; ranks that skip it "
            "hang in their next collective; call it on every rank, outside the rank-dependent "
            "branch",
            id="one-side",
        ),
        pytest.param(
            "def f(rank, t):\n    if rank == 0:\n        dist.all_reduce(t)\n    else:\n"
            "        dist.broadcast(t, src=0)\n",
            6,
            "ranks where `rank == 0` call `all_reduce` here, the others call `broadcast`: the "
            "collectives pair up wrongly or hang; issue the same collectives in the same order "
            "on every rank",
            id="mismatch",
        ),
        pytest.param(
            "def f(rank, t):\n    if rank != 0:\n        dist.barrier()\n    else:\n"
            "        dist.all_reduce(t)\n",
            6,
            "ranks where `rank != 0` call `barrier` here, the others call `all_reduce`: the "
            "collectives pair up wrongly or hang; issue the same collectives in the same order "
            "on every rank",
            id="mismatch-negated",
        ),
        pytest.param(
            "def f(rank, t):\n    if rank == 0:\n        return\n    dist.all_reduce(t)\n",
            7,
            "`all_reduce` is skipped by ranks that return early when `rank == 0`; the ranks "
            "that reach it hang in it; move the collective before the early exit or make every "
            "rank reach it",
            id="after-early-return",
        ),
        pytest.param(
            "def f(rank, t):\n    for _ in range(rank):\n        dist.all_reduce(t)\n",
            6,
            "`all_reduce` runs in a loop whose trip count or order depends on the rank "
            "(`range(rank)`); ranks that iterate fewer times, or over other items, hang in it "
            "or pair it with another rank's collective; make the iteration the same on every "
            "rank: all-reduce the count first, or iterate a list every rank agrees on (the "
            "sorted union of the ranks' keys)",
            id="loop",
        ),
        pytest.param(
            "@rank_zero_only\ndef f(t):\n    dist.all_reduce(t, group=None)\n",
            6,
            "`all_reduce` runs only on the rank that `@rank_zero_only` selects; the other ranks "
            "never call it and hang in their next collective",
            id="rank-only-decorator",
        ),
        pytest.param(
            "def sync():\n    dist.barrier()\n\n\n"
            "def f(rank):\n    if rank == 0:\n        sync()\n",
            10,
            "`sync()` (which reaches `barrier`: sync() -> dist.barrier() at {path}:5) is reached "
            "only when `rank == 0`; ranks that skip it hang in their next collective; call it on "
            "every rank, outside the rank-dependent branch",
            id="through-a-helper",
        ),
    ],
)
def test_each_way_ranks_diverge_has_its_own_message(
    tmp_path: Path, body: str, line: int, message: str
) -> None:
    path = write(tmp_path / "m.py", "import torch.distributed as dist\n\n\n" + body)

    result = lint_paths([path], Config(confidence="low", select=("RNK102",), root=tmp_path), jobs=1)

    assert [(f.line, f.message) for f in result.findings] == [(line, message.format(path=path))]


def test_a_name_bound_by_a_walrus_keeps_the_rank_dependence_of_its_value() -> None:
    source = (
        _DIST + "def f():\n"
        "    if (leader := dist.get_rank() == 0):\n        pass\n"
        "    if leader:\n        dist.barrier()\n"
    )

    result = lint_source(source, "m.py", Config(confidence="low", select=("RNK102",)))

    assert [(f.line, f.message.split(";")[0]) for f in result.findings] == [
        (8, "`barrier` is reached only when `leader`")
    ]


def test_a_rank_that_raises_before_a_collective_is_a_crash_not_a_divergence() -> None:
    # Raising ends the job (the launcher tears every rank down); returning early
    # leaves the other ranks waiting in the collective.
    source = (
        _DIST + "def g(rank):\n    if rank == 0:\n        raise ValueError('no')\n"
        "    dist.barrier()\n\n\n"
        "def h(rank):\n    if rank == 0:\n        return\n    dist.barrier()\n"
    )

    result = lint_source(source, "m.py", Config(confidence="low", select=("RNK102",)))

    assert [(f.line, f.code) for f in result.findings] == [(13, "RNK102")]


def test_group_creation_arguments_are_quoted_once_each_in_the_message() -> None:
    source = (
        _DIST + 'def f(rank):\n    if rank == 0:\n        dist.new_group([0, 1], backend="gloo")\n'
    )

    result = lint_source(source, "m.py", Config(confidence="low", select=("RNK105",)))

    assert [f.message.split(" is reached")[0] for f in result.findings] == [
        '`new_group([0, 1], backend="gloo")`'
    ]


@pytest.mark.parametrize(("index", "expected"), [("[1]", []), ("[0]", [("use.py", 7)])])
def test_element_of_a_helpers_returned_tuple_is_judged_by_that_element(
    tmp_path: Path, index: str, expected: list[tuple[str, int]]
) -> None:
    make_package(
        tmp_path,
        {
            "env.py": """
                import os


                def node_setting():
                    node_rank = int(os.getenv("NODE_RANK", 0))
                    nnodes = int(os.getenv("NNODES", 1))
                    return node_rank, nnodes
            """,
            "use.py": f"""
                import torch.distributed as dist
                from pkg.env import node_setting


                def check():
                    if node_setting(){index} <= 1:
                        dist.barrier()
            """,
        },
    )

    assert divergent(tmp_path) == expected
