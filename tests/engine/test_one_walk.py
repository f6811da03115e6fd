"""One walk per file: after the walker's pass, nothing walks the whole module again.

A rule that needs a whole function reads the nodes the walk kept for it
(``analysis/walk/function_nodes.py``); one that needs a name defined further
down decides in ``leave_Module`` from what it recorded. Three readings of the
whole module remain, each on demand and documented in ``docs/dev/architecture.md``:
the module-level groups of written-out ranks (``created_groups``, not into
functions, once per file that passes such a group by name), libcst's scope
analysis for modules with a wildcard import, and nothing else. (Module flags
read a module's statements, not its expressions, and only where an ``if``
test names a flag: ``analysis/walk/constants.py``.)
"""

from __future__ import annotations

import collections
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path

import libcst as cst
import pytest

import ranklint.engine.linter
import ranklint.syntax
from ranklint import Config, lint_paths
from ranklint.engine import Linter
from ranklint.model.events import Site
from tests.conftest import REPO_ROOT

# (module of the caller, function) of the whole-module readings that stay.
_ON_DEMAND = {
    ("ranklint.analysis.walk.membership", "created_groups"),
    ("ranklint.analysis.walk.wildcards", "wildcard_names"),
}


@pytest.fixture
def module_walks(monkeypatch: pytest.MonkeyPatch) -> collections.Counter[tuple[str, str]]:
    """Counts each (caller module, caller function) that walks a whole ``cst.Module``."""
    walks: collections.Counter[tuple[str, str]] = collections.Counter()
    original = ranklint.syntax.iter_nodes
    visit = cst.Module.visit

    def caller() -> tuple[str, str]:
        frame = sys._getframe(2)
        return frame.f_globals.get("__name__", "?"), frame.f_code.co_name

    def iter_nodes(node: cst.CSTNode, *, into_functions: bool = True) -> Iterator[cst.CSTNode]:
        if isinstance(node, cst.Module):
            walks[caller()] += 1
        return original(node, into_functions=into_functions)

    def module_visit(self: cst.Module, visitor: cst.CSTVisitorT) -> cst.Module:
        # libcst's metadata providers visit from their own modules: name the
        # ranklint frame that asked for them.
        for entry in reversed(traceback.extract_stack()[:-1]):
            if "/ranklint/" in entry.filename.replace("\\", "/"):
                module = entry.filename.replace("\\", "/").split("/src/")[-1]
                walks[(module.removesuffix(".py").replace("/", "."), entry.name)] += 1
                break
        return visit(self, visitor)

    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("ranklint") and (
            getattr(module, "iter_nodes", None) is original
        ):
            monkeypatch.setattr(module, "iter_nodes", iter_nodes)
    monkeypatch.setattr(cst.Module, "visit", module_visit)
    return walks


def _lint_in_process(paths: list[Path]) -> int:
    result = lint_paths(paths, Config(select=("ALL",)), jobs=1)
    return len(result.findings)


def test_linting_real_trainers_with_every_rule_walks_no_module_again(
    module_walks: collections.Counter[tuple[str, str]],
) -> None:
    found = _lint_in_process([REPO_ROOT / "fixtures", REPO_ROOT / "tests" / "realbugs"])

    assert found > 0
    assert set(module_walks) <= _ON_DEMAND


def test_module_walk_spy_sees_a_rule_that_walks_the_module_again(
    module_walks: collections.Counter[tuple[str, str]],
) -> None:
    module = cst.parse_module("x = 1\n")

    list(ranklint.syntax.iter_nodes(module))

    assert module_walks == {
        (__name__, "test_module_walk_spy_sees_a_rule_that_walks_the_module_again"): 1
    }


class _RecorderThatMustNotRun:
    def __init__(self, ctx: object) -> None:
        raise AssertionError("a fact recorder ran while placing call sites")


_PLACED = "import torch.distributed as dist\n\n\ndef f(t):\n    dist.all_reduce(t)\n"


def test_placing_only_call_sites_runs_no_fact_recorder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ranklint.engine.linter, "FACT_RECORDERS", (_RecorderThatMustNotRun,))
    linter = Linter(Config())

    located = linter.locate("m.py", {Site(1, 1)}, _PLACED)

    assert [(span.line, span.col) for span in located.sites.values()] == [(5, 5)]


def test_placing_a_recorded_node_runs_the_fact_recorders(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ranklint.engine.linter, "FACT_RECORDERS", (_RecorderThatMustNotRun,))
    linter = Linter(Config())

    with pytest.raises(AssertionError, match="a fact recorder ran"):
        linter.locate("m.py", {Site(1, -1)}, _PLACED)
