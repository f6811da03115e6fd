"""The layer picture holds in the code: imports point down, facts never know the rules."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from ranklint import Config
from ranklint.engine import Linter
from ranklint.rules import all_rules

from .conftest import REPO_ROOT

PACKAGE = REPO_ROOT / "src" / "ranklint"
# Modules longer than this hold several rooms; data tables are the exception.
_LONGEST_MODULE = 620
_DATA_TABLES = frozenset({"analysis/walk/catalog.py"})


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, package: str) -> set[str]:
    """Modules of ranklint that ``path`` imports (at any level, TYPE_CHECKING included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {name for name in found if name == "ranklint" or name.startswith("ranklint.")}


def import_graph() -> dict[str, set[str]]:
    files = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        graph[name] = {target for target in _imports(path, package) if target in files} - {name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return [*stack[stack.index(target) :], target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_import_graph_of_the_package_has_no_cycle() -> None:
    graph = import_graph()

    assert _cycle(graph) is None


def test_cycle_detector_finds_a_planted_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}

    assert _cycle(graph) == ["a", "b", "c", "a"]


@pytest.mark.parametrize(
    ("lower", "higher"),
    [
        ("ranklint.analysis", "ranklint.rules"),
        ("ranklint.analysis", "ranklint.engine"),
        ("ranklint.analysis", "ranklint.config"),
        ("ranklint.rules", "ranklint.engine"),
        ("ranklint.config", "ranklint.rules"),
        ("ranklint.engine", "ranklint.faces"),
        ("ranklint.engine", "ranklint.api"),
        ("ranklint.fixing.plan", "ranklint.faces"),
        ("ranklint.fixing.plan", "ranklint.api"),
    ],
)
def test_lower_layer_never_imports_a_higher_one(lower: str, higher: str) -> None:
    graph = import_graph()

    offending = sorted(
        (module, target)
        for module, targets in graph.items()
        if module == lower or module.startswith(lower + ".")
        for target in targets
        if target == higher or target.startswith(higher + ".")
    )

    assert offending == []


# The bottom layer: modules every other layer may read.
_LEAVES = (
    "ranklint.findings",
    "ranklint.fixing.edits",
    "ranklint.model",
    "ranklint.positions",
    "ranklint.registry",
    "ranklint.results",
    "ranklint.source",
    "ranklint.suppressions",
    "ranklint.syntax",
)
_ABOVE_THE_LEAVES = (
    "ranklint.analysis",
    "ranklint.rules",
    "ranklint.engine",
    "ranklint.config",
    "ranklint.cache",
    "ranklint.faces",
    "ranklint.api",
)


def test_leaves_never_import_a_layer_above_them() -> None:
    graph = import_graph()

    upward = sorted(
        (leaf, target)
        for leaf, targets in graph.items()
        if leaf.startswith(_LEAVES)
        for target in targets
        if target.startswith(_ABOVE_THE_LEAVES)
    )

    assert upward == []


def test_the_per_file_walk_never_reads_the_project_facts() -> None:
    graph = import_graph()

    upward = sorted(
        (module, target)
        for module, targets in graph.items()
        if module.startswith("ranklint.analysis.walk")
        for target in targets
        if target.startswith("ranklint.analysis.project")
    )

    assert upward == []


def test_no_two_modules_of_the_package_share_a_name() -> None:
    names: dict[str, list[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        if path.name != "__init__.py":
            names.setdefault(path.stem, []).append(str(path.relative_to(PACKAGE)))
    for path in PACKAGE.rglob("__init__.py"):
        if path.parent != PACKAGE:
            names.setdefault(path.parent.name, []).append(str(path.parent.relative_to(PACKAGE)))

    shared = {name: sorted(paths) for name, paths in names.items() if len(paths) > 1}

    assert shared == {}


def test_no_module_of_the_package_is_named_like_a_test() -> None:
    named = sorted(
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if path.stem.startswith("test_")
    )

    assert named == []


def test_analysis_holds_no_rule_code() -> None:
    code = re.compile(r"RNK\d{3}")

    mentions = [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in sorted((PACKAGE / "analysis").rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if code.search(line)
    ]

    assert mentions == []


def test_every_module_is_short_enough_to_navigate() -> None:
    long = [
        f"{path.relative_to(PACKAGE)}: {count} lines"
        for path in sorted(PACKAGE.rglob("*.py"))
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > _LONGEST_MODULE
        and path.relative_to(PACKAGE).as_posix() not in _DATA_TABLES
    ]

    assert long == []


def test_every_rule_lives_in_a_module_of_its_own_named_after_it() -> None:
    misplaced = [
        f"{rule.code}: {rule.__module__}"
        for rule in all_rules()
        if rule.__module__.rsplit(".", 1)[-1] != rule.name.replace("-", "_")
    ]

    assert misplaced == []


def test_a_family_module_holds_its_one_rule_or_is_a_private_helper_holding_none() -> None:
    rules_by_module: dict[str, list[str]] = {}
    for rule in all_rules():
        rules_by_module.setdefault(rule.__module__, []).append(rule.code)
    wrong = []
    for path in sorted((PACKAGE / "rules").glob("*/*.py")):
        if path.name == "__init__.py":
            continue
        held = rules_by_module.get(_module_name(path), [])
        private = path.name.startswith("_")
        if (private and held) or (not private and len(held) != 1):
            wrong.append(f"{path.relative_to(PACKAGE)}: {held}")

    assert wrong == []


_SUMMARY_PROBE = """
import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh

mesh = init_device_mesh("cuda", (2, 4), mesh_dim_names=("dp", "tp"))


def train(model, loader, optimizer, rank):
    for batch in loader:
        loss = model(batch).mean()
        loss.backward()
        optimizer.step()
        print(loss.item())
        if rank == 0:
            dist.barrier()
        tp = mesh["tp"]
        scale = torch.ones(3)


async def fetch():
    return 1


def caller():
    fetch()
"""


def _summary_under(select: tuple[str, ...]) -> object:
    result = Linter(Config(select=select)).lint_source(_SUMMARY_PROBE, "probe.py")
    assert result.errors == []
    return result.summary


def test_file_summary_is_the_same_whatever_rules_are_selected() -> None:
    every_rule = _summary_under(("ALL",))
    one_rule = _summary_under(("RNK301",))

    assert every_rule is not None
    assert one_rule == every_rule


# A launched script (module-level `sys.exit`) that creates a group at import
# time, gathers objects, and trains: every kind of fact a rule could be
# tempted to write.
_SCRIPT_PROBE = """
import sys

import torch.distributed as dist

dist.init_process_group("nccl")
group = dist.new_group([0, 1])
objects = [None] * dist.get_world_size()
dist.all_gather_object(objects, dist.get_rank())


def train(model, loader, optimizer):
    for batch in loader:
        loss = model(batch).mean()
        loss.backward()
        optimizer.step()
        print(loss.item())


sys.exit(train(None, [], None))
"""


@pytest.mark.parametrize(
    "select", [("RNK301",), ("RNK101",), ("RNK201",), ("RNK102", "RNK105"), ("RNK113",)]
)
def test_a_launched_scripts_summary_is_the_same_whatever_rules_are_selected(
    select: tuple[str, ...],
) -> None:
    def summary_under(codes: tuple[str, ...]) -> object:
        result = Linter(Config(select=codes)).lint_source(_SCRIPT_PROBE, "launch.py")
        assert result.errors == []
        return result.summary

    every_rule = summary_under(("ALL",))

    assert every_rule is not None
    assert every_rule.deferred_creations  # type: ignore[attr-defined]
    assert summary_under(select) == every_rule


# What the fact builder and the walk's shared state offer for writing.
_FACT_WRITERS = re.compile(
    r"\bfacts\.(enter_function|leave_function|enter_class|leave_class|call|property_read|"
    r"exit|host_cost|record_site|returned|begin_branch|switch_arm|end_branch|rank_exit_seen|"
    r"begin_loop|end_loop|begin_opaque|end_opaque|record_import|defer_creation)\("
)
_STATE_WRITE = re.compile(r"\bctx\.(rank|calls|facts|tensors|names)\.\w+\s*=[^=]")


def _lines_matching(folder: str, pattern: re.Pattern[str]) -> list[str]:
    return [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in sorted((PACKAGE / folder).rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]


def test_rules_never_write_facts_and_nothing_patches_analysis_state_after_construction() -> None:
    # The walker (engine) drives the fact builder; rules only read what it built.
    assert _lines_matching("rules", _FACT_WRITERS) == []
    assert _lines_matching("rules", _STATE_WRITE) == []
    assert _lines_matching("engine", _STATE_WRITE) == []


def test_summary_records_costs_mesh_and_collectives_of_the_probe() -> None:
    summary = _summary_under(("RNK301",))

    assert summary is not None
    assert summary.mesh_names == frozenset({"dp", "tp"})  # type: ignore[attr-defined]
    assert [name for _, name in summary.mesh_uses] == ["tp"]  # type: ignore[attr-defined]
    events = summary.functions["train"].events  # type: ignore[attr-defined]
    assert events, "the train loop was summarised"
