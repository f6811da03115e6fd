"""Finding the callers of some files without parsing the project (analysis/project/reach.py's
CallerSearch and its guard files; api.py's text search): which functions start the
search, which names and module words a caller must mention, round by round."""

from __future__ import annotations

from pathlib import Path

import pytest

from ranklint import Config, lint_paths
from ranklint import engine as engine_module
from ranklint.analysis.project.dependencies import ModuleMap
from ranklint.analysis.project.reach import CallerSearch, files_to_load
from ranklint.api import _mentions, _text, lint_files
from ranklint.model.events import ModuleSummary
from tests.conftest import write


def _summaries(root: Path, files: dict[str, str]) -> dict[str, ModuleSummary]:
    for name, text in files.items():
        write(root / name, text)
    paths = [str(root / name) for name in files]
    results = lint_files(paths, Config(root=root, confidence="low"), jobs=1, cache=None)
    return {
        Path(result.path).relative_to(root).as_posix(): summary
        for result in results
        if (summary := result.module_summary()) is not None
    }


HELPERS = """
import torch
import torch.distributed as dist


def in_branch(t, flag):
    if flag:
        dist.barrier()


def in_loop(t, n):
    for _ in range(n):
        t.item()


def in_handler(t):
    try:
        pass
    except ValueError:
        dist.all_reduce(t)


def first(t):
    return second(t)


def second(t):
    return third(t)


def third(t):
    dist.barrier()


def quiet(t):
    return t + 1


def test_helper():
    dist.barrier()


def outer():
    def inner():
        dist.barrier()

    return inner


class Saver:
    def save(self):
        dist.barrier()

    def idle(self):
        return 1


class TestSaver:
    def test_save(self):
        dist.barrier()


dist.barrier()
"""


def test_search_starts_from_the_given_files_functions_that_communicate_or_reach_one(
    tmp_path: Path,
) -> None:
    summaries = _summaries(tmp_path, {"pkg/__init__.py": "", "pkg/helpers.py": HELPERS})

    search = CallerSearch(summaries.values(), {str(tmp_path / "pkg/helpers.py")})

    qualnames = {qualname for _, qualname in search.targets}
    assert qualnames == {
        "in_branch",
        "in_loop",
        "in_handler",
        "first",
        "second",
        "third",
        "test_helper",
        "outer.inner",
        "Saver.save",
        "TestSaver.test_save",
    }
    words = frozenset({"pkg", "helpers"})
    assert search.pending() == {
        (name, words)
        for name in ("in_branch", "in_loop", "in_handler", "first", "second", "third", "Saver")
    }
    assert search.pending() == set()  # each name is searched for once


def test_search_of_a_files_other_than_the_given_ones_starts_from_nothing(tmp_path: Path) -> None:
    summaries = _summaries(tmp_path, {"helpers.py": HELPERS, "other.py": "def f():\n    pass\n"})

    search = CallerSearch(summaries.values(), {str(tmp_path / "other.py")})

    assert search.targets == frozenset()
    assert search.pending() == set()


SYNC = "import torch.distributed as dist\n\n\ndef sync():\n    dist.barrier()\n"


def test_package_init_helpers_are_searched_with_the_package_name(tmp_path: Path) -> None:
    summaries = _summaries(
        tmp_path,
        {"pkg/__init__.py": SYNC},
    )

    search = CallerSearch(summaries.values(), {str(tmp_path / "pkg/__init__.py")})

    assert search.pending() == {("sync", frozenset({"pkg"}))}


CALLERS = """
from pkg.helpers import first, quiet


def guarded(rank, t):
    if rank == 0:
        first(t)


def relay(t):
    return guarded(0, t)


def ignores(t):
    return quiet(t)


class Runner:
    def run(self, t):
        return relay(t)
"""


def test_loaded_callers_become_targets_round_by_round_until_none_is_left(tmp_path: Path) -> None:
    summaries = _summaries(
        tmp_path,
        {"pkg/__init__.py": "", "pkg/helpers.py": HELPERS, "pkg/callers.py": CALLERS},
    )
    given = str(tmp_path / "pkg/helpers.py")
    search = CallerSearch([summaries["pkg/helpers.py"]], {given})
    search.pending()

    search.add([summaries["pkg/callers.py"]])

    callers = {qualname for path, qualname in search.targets if path != given}
    assert callers == {"guarded", "relay", "Runner.run"}
    assert search.pending() == {
        ("guarded", frozenset({"pkg", "callers"})),
        ("relay", frozenset({"pkg", "callers"})),
        ("Runner", frozenset({"pkg", "callers"})),
    }


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("from pkg.helpers import save\nsave()\n", True),
        ("import pkg\npkg.save()\n", True),
        ("from .helpers import save\n", True),
        ("save()\n", False),  # the name, but neither module word
        ("import helpers\nhelpers.saver()\n", False),  # a longer name holds it
        ("import helpers\n", False),  # a module word alone
    ],
)
def test_a_caller_must_mention_the_name_and_a_word_of_its_module(text: str, found: bool) -> None:
    wanted = {("save", frozenset({"pkg", "helpers"})), ("gone", frozenset())}

    assert _mentions(text, wanted) is found
    assert _mentions("gone()\n", wanted)  # no words to ask for


def test_text_of_a_file_is_read_once_leniently_and_empty_when_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "latin.py"
    path.write_bytes(b"# caf\xe9\nsave()\n")
    texts: dict[str, str] = {}

    first = _text(str(path), texts)
    path.write_bytes(b"changed\n")

    assert first == "# caf\ufffd\nsave()\n"
    assert _text(str(path), texts) == first
    assert _text(str(tmp_path / "missing.py"), texts) == ""


GUARDS = """
from pkg.ranks import is_main, pair
from pkg.other import other_flag, compute


def guarded(t):
    if is_main():
        t.item()
    while pair()[0]:
        t.item()
    compute(t)


def unrelated(t):
    if other_flag():
        return t
"""
RANKS = """
import torch.distributed as dist
from pkg.deeper import rank_of


def is_main():
    return rank_of() == 0


def pair():
    return rank_of(), 1
"""


def test_guard_files_are_those_that_decide_the_given_functions_rank_tests(tmp_path: Path) -> None:
    summaries = _summaries(
        tmp_path,
        {"pkg/__init__.py": "", "pkg/guards.py": GUARDS, "pkg/ranks.py": RANKS},
    )
    write(tmp_path / "pkg/other.py", "")
    write(tmp_path / "pkg/deeper.py", "")
    modules = ModuleMap(
        [str(tmp_path / f"pkg/{n}.py") for n in ("guards", "ranks", "other", "deeper")]
    )
    guards = str(tmp_path / "pkg/guards.py")
    loaded = [summaries["pkg/guards.py"], summaries["pkg/ranks.py"]]

    only_guarded = files_to_load(
        loaded, {guards}, modules, only={(guards, "guarded")}, guards_only=True
    )
    every_function = files_to_load(loaded, {guards}, modules, guards_only=True)
    every_call = files_to_load(loaded, {guards}, modules, only={(guards, "guarded")})
    other_file = files_to_load(loaded, {str(tmp_path / "pkg/ranks.py")}, modules, guards_only=True)

    name = lambda paths: sorted(Path(p).name for p in paths)  # noqa: E731
    assert name(only_guarded) == ["deeper.py"]  # through is_main's and pair's results
    assert name(every_function) == ["deeper.py", "other.py"]  # unrelated's other_flag
    assert name(every_call) == ["deeper.py", "other.py"]  # compute() too
    assert name(other_file) == []  # ranks.py has no rank test of its own


def test_cold_one_file_run_caches_the_callers_it_parsed(tmp_path: Path) -> None:
    write(tmp_path / "setup.py", "")
    write(tmp_path / "pkg/__init__.py", "")
    write(tmp_path / "pkg/helpers.py", HELPERS)
    write(tmp_path / "pkg/callers.py", CALLERS)
    config = Config(root=tmp_path, confidence="low")
    given = [tmp_path / "pkg/helpers.py"]
    cache = tmp_path / ".cache"
    first = lint_paths(given, config, jobs=1, cache_dir=cache, whole_project=True)
    linted: list[str] = []
    real = engine_module.FileLinter.lint_source

    def recording(self, source, path):  # type: ignore[no-untyped-def]
        linted.append(path)
        return real(self, source, path)

    engine_module.FileLinter.lint_source = recording  # type: ignore[method-assign]
    try:
        again = lint_paths(given, config, jobs=1, cache_dir=cache, whole_project=True)
    finally:
        engine_module.FileLinter.lint_source = real  # type: ignore[method-assign]

    assert [(Path(f.path).name, f.line) for f in first.findings if f.code == "RNK102"] == [
        ("callers.py", 6)
    ]
    assert again.findings == first.findings
    assert linted == []
