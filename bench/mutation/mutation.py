"""Mutation testing of ranklint with mutmut 3, one module group at a time.

    pip install -e '.[test,mutation]'
    python bench/mutation/mutation.py --list                 # the groups and their tests
    python bench/mutation/mutation.py suppressions positions # mutate and test these groups
    python bench/mutation/mutation.py --report               # scores of every group run so far
    python bench/mutation/mutation.py exits_held --only '*xǁTailǁ*'  # some mutants only
    python bench/mutation/mutation.py --overall              # each module once, from its latest run
    python bench/mutation/mutation.py --try rank NAME tests/analysis/walk/test_rank_taint.py
                                                    # does this test kill that mutant?

Each group (a few modules of ``src/ranklint``) runs in a working copy of its own
under ``.cache/mutation/<group>/`` (git-ignored): the repository's ``src``,
``tests``, ``fixtures``, ``docs``, ``bench`` and ``README.md``, with a
``pyproject.toml`` whose ``[tool.mutmut]`` mutates only that group's modules
(``only_mutate``) and selects only the test files that exercise them
(``pytest_add_cli_args_test_selection``; mutmut then runs, per mutant, only the
selected tests that reach the mutated function). mutmut keeps its results in
that copy, so an interrupted run resumes where it stopped; delete the folder to
start a group afresh (``--fresh``). Tests that start ``python -m ranklint`` or
flake8 in a subprocess do not see the mutants (the subprocess imports the
installed package: pointing ``PYTHONPATH`` at the mutated copy fails, because
mutmut's trampolines look for their configuration in the subprocess's working
folder); the in-process tests of each face cover them. Tests marked ``slow``
or ``distributed`` are not run (minutes each).

Skipped everywhere: ``analysis/walk/catalog.py`` (a data table, pinned by
``tests/analysis/walk/test_catalog.py`` and the rule examples), ``_version.py`` and
``__main__.py``. Message text is not skipped: a mutant of a message is killed
by the fixtures' and examples' exact messages, or survives where a message is
not pinned, which is worth knowing. Equivalent mutants are marked in the source
with ``# pragma: no mutate`` and a reason (docs/dev/testing.md lists them).

The score of a group is killed / (killed + survived + timeouts + suspicious);
mutants with no test reaching them count as survivors.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
WORK = REPO / ".cache" / "mutation"
_COPIED = ("src", "tests", "fixtures", "docs", "bench", "README.md", ".pre-commit-hooks.yaml")

# Every test that runs the analysis on code and checks what it found: the unit
# tests of each analysis module, the rules' own examples, the fixtures' markers
# and the whole-project tests. mutmut runs, per mutant, only those that reach it.
_ANALYSIS_TESTS = (
    "tests/analysis/walk/test_names.py",
    "tests/analysis/walk/test_literals.py",
    "tests/analysis/walk/test_rank_taint.py",
    "tests/analysis/walk/test_guards.py",
    "tests/analysis/walk/test_rank_values.py",
    "tests/analysis/walk/test_rank_taint_edges.py",
    "tests/test_realbugs.py",
    "tests/rules/collectives/test_import_time_process_group.py",
    "tests/analysis/project/test_hot_regions.py",
    "tests/analysis/walk/test_host_costs.py",
    "tests/analysis/walk/test_mesh.py",
    "tests/rules/test_engineering_rules.py",
    "tests/rules/collectives/test_ignored_process_group.py",
    "tests/analysis/project/test_project.py",
    "tests/analysis/project/test_project_facts.py",
    "tests/rules/test_rule_examples.py",
    "tests/test_docs.py",
    "tests/test_fixtures.py",
    "tests/rules/test_default_precision.py",
    "tests/test_file_kinds.py",
    "tests/rules/hot_path/test_hot_path_precision.py",
    "tests/rules/hot_path/test_host_sync_in_hot_path.py",
    "tests/rules/imports/test_imports_precision.py",
    "tests/rules/portability/test_portability_precision.py",
    "tests/rules/testsuite/test_testsuite_precision.py",
    "tests/analysis/walk/test_collective_protocols.py",
    "tests/analysis/walk/test_flags.py",
    "tests/analysis/project/test_sequences.py",
    "tests/analysis/walk/test_decorators.py",
    "tests/rules/collectives/test_import_time_process_group_entry_scripts.py",
    "tests/analysis/walk/test_per_rank_state.py",
    "tests/analysis/walk/test_batch_data.py",
    "tests/analysis/walk/test_framework.py",
    "tests/analysis/walk/test_flags.py",
    "tests/analysis/walk/test_complementary_assignments.py",
    "tests/analysis/walk/test_configured_calls.py",
    "tests/analysis/walk/test_configured_wrappers.py",
    "tests/analysis/walk/test_membership.py",
    "tests/model/test_taint.py",
    "tests/analysis/walk/test_hot_markers.py",
    "tests/test_syntax.py",
    "tests/rules/test_core_rules.py",
)

# group -> (modules to mutate, relative to src/ranklint; test files that exercise them)
GROUPS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "suppressions": (("suppressions.py",), ("tests/test_suppressions.py",)),
    "positions": (("positions.py",), ("tests/test_positions.py",)),
    "discovery": (("discovery.py",), ("tests/test_discovery.py",)),
    "config": (
        ("config.py", "options.py", "registry.py"),
        (
            "tests/test_config.py",
            "tests/test_config_errors.py",
            "tests/test_docs.py",
            "tests/test_file_kinds.py",
        ),
    ),
    "cache": (("cache.py",), ("tests/test_cache.py",)),
    "source": (
        ("source.py", "_process.py"),
        (
            "tests/engine/test_engine.py",
            "tests/engine/test_adversarial.py",
            "tests/test_source_scan.py",
            "tests/test_own_process.py",
        ),
    ),
    "engine": (
        (
            "engine/__init__.py",
            "engine/linter.py",
            "engine/project_phase.py",
            "engine/pool.py",
            "engine/walker.py",
            "engine/locate.py",
            "engine/threads.py",
            "results.py",
        ),
        (
            "tests/engine/test_engine.py",
            "tests/engine/test_engine_paths.py",
            "tests/test_one_file_runs.py",
            "tests/test_file_kinds.py",
            "tests/analysis/project/test_project.py",
            "tests/rules/test_rule_examples.py",
            "tests/test_fixtures.py",
            "tests/test_suppressions.py",
            "tests/test_positions.py",
            "tests/test_cache.py",
        ),
    ),
    "faces": (
        ("faces/cli.py", "faces/formatters.py", "faces/flake8_plugin.py", "api.py", "docs.py"),
        (
            "tests/faces/test_cli.py",
            "tests/faces/test_formatters.py",
            "tests/test_api.py",
            "tests/faces/test_flake8_plugin.py",
            "tests/test_docs.py",
            "tests/analysis/project/test_project.py",
            "tests/test_one_file_runs.py",
            "tests/test_cache.py",
        ),
    ),
    "names": (("analysis/walk/names.py", "analysis/walk/literals.py"), _ANALYSIS_TESTS),
    "rank": (
        ("analysis/walk/rank.py", "analysis/walk/axes.py", "analysis/walk/guards.py"),
        _ANALYSIS_TESTS,
    ),
    "facts": (
        (
            "model/events.py",
            "analysis/walk/summary.py",
            "analysis/walk/canonical.py",
            "analysis/walk/classify.py",
            "analysis/project/callgraph.py",
            "analysis/project/divergences.py",
            "analysis/project/decisions.py",
            "analysis/project/facts.py",
        ),
        _ANALYSIS_TESTS,
    ),
    "hot": (
        (
            "analysis/walk/hot_markers.py",
            "analysis/project/hot_regions.py",
            "analysis/walk/host_costs.py",
            "analysis/walk/tensors.py",
            "analysis/walk/mesh.py",
        ),
        _ANALYSIS_TESTS,
    ),
    # Issue 37: what a sync's value is for, Ray drivers, and Python loops over tensors.
    "sync_uses": (
        ("analysis/walk/host_uses.py", "analysis/walk/tensor_loops.py"),
        (
            "tests/rules/hot_path/test_host_sync_in_hot_path.py",
            "tests/analysis/walk/test_host_costs.py",
            "tests/analysis/project/test_hot_regions.py",
            "tests/rules/hot_path/test_hot_path_precision.py",
        ),
    ),
    "layout": (
        ("analysis/project/layout.py",),
        (
            "tests/analysis/project/test_layout.py",
            "tests/rules/imports/test_imports_precision.py",
            "tests/test_cache.py",
            "tests/test_api.py",
        ),
    ),
    "rules": (("rules/*",), _ANALYSIS_TESTS),
    # The rule modules no other group mutates: "rules" less "conventions", the
    # rules of "values" and "protocols", and RNK102's example tables (data).
    "core_rules": (
        (
            "rules/__init__.py",
            "rules/base.py",
            "rules/asynchronous/*",
            "rules/framework/*",
            "rules/hot_path/*",
            "rules/collectives/barrier_as_sync.py",
            "rules/collectives/_divergence.py",
            "rules/collectives/global_root_with_subgroup.py",
            "rules/collectives/ignored_process_group.py",
            "rules/collectives/implicit_reduce_op.py",
            "rules/collectives/missing_root.py",
            "rules/collectives/partial_group_creation.py",
            "rules/collectives/rank_dependent_root.py",
            "rules/collectives/rank_divergent_collective.py",
        ),
        _ANALYSIS_TESTS,
    ),
    # The small shared modules under every analysis and rule: node helpers, the
    # file context, the settings, call targets, the visitor base, spans, findings.
    "support": (
        (
            "analysis/walk/context.py",
            "syntax.py",
            "analysis/walk/settings.py",
            "analysis/walk/targets.py",
            "analysis/walk/visitor.py",
            "analysis/walk/recorders.py",
            "engine/spans.py",
            "findings.py",
            "testing.py",
            "links.py",
        ),
        (
            *_ANALYSIS_TESTS,
            "tests/engine/test_engine.py",
            "tests/test_api.py",
            "tests/faces/test_formatters.py",
        ),
    ),
    # The runtime companion's pure parts (the diff and the stack reading); its
    # threads and gloo modes are exercised by tests that start process groups.
    "runtime": (
        ("runtime/report.py", "runtime/stacks.py"),
        ("tests/runtime/test_report.py",),
    ),
    # Decorators read through their wrapper, module flags, state a method sets
    # under a rank test (the oracle's decorator, local-exit and state-later classes).
    "late_facts": (
        (
            "analysis/project/wrappers.py",
            "analysis/walk/constants.py",
            "analysis/walk/late_state.py",
        ),
        (
            "tests/analysis/project/test_wrappers.py",
            "tests/analysis/walk/test_constants.py",
            "tests/analysis/walk/test_late_state.py",
            "tests/analysis/walk/test_container_views.py",
        ),
    ),
    # Rank tests read through names bound once, and groups whose make-up a
    # function or a class shows (the oracle's membership and unknown-group classes).
    "rank_tests": (
        ("analysis/walk/definitions.py", "analysis/walk/membership.py"),
        (
            "tests/analysis/walk/test_rank_tests.py",
            "tests/analysis/walk/test_membership.py",
        ),
    ),
    # Models wrapped in DDP/FSDP followed into helpers, annotations and wrapping helpers.
    "wrapped_models": (
        ("analysis/walk/wrapped.py",),
        (
            "tests/analysis/project/test_wrapped_models.py",
            "tests/analysis/walk/test_rank_tests.py",
            "tests/analysis/project/test_argument_flow.py",
        ),
    ),
    # Issue 36, fourth session: early exits past their block (sequences.Tail,
    # events.exiting_conditions, the divergence checks) and library objects kept
    # in attributes (CallClassifier.held_class), and the speed fix of bodies.py and
    # definitions.py (TextGates, walrus targets). Meant to run with --only on the
    # functions that session added or changed (docs/dev/testing.md).
    "exits_held": (
        (
            "analysis/project/sequences.py",
            "analysis/project/divergences.py",
            "model/events.py",
            "analysis/walk/classify.py",
            "analysis/walk/names.py",
            "analysis/walk/wrapped.py",
            "analysis/walk/bodies.py",
            "analysis/walk/definitions.py",
        ),
        (
            "tests/analysis/project/test_nested_exits.py",
            "tests/analysis/walk/test_rank_tests.py",
            "tests/analysis/walk/test_configured_calls.py",
            "tests/analysis/project/test_sequences.py",
            "tests/analysis/walk/test_held_objects.py",
            "tests/analysis/project/test_wrapped_models.py",
            "tests/analysis/project/test_project_facts.py",
            "tests/analysis/walk/test_classify_cache.py",
            "tests/analysis/walk/test_configured_wrappers.py",
        ),
    ),
    # Jupyter notebooks read as Python and written back, and their cell placement.
    "notebooks": (
        ("notebook.py", "places.py"),
        ("tests/test_notebook.py", "tests/test_notebooks.py", "tests/test_places.py"),
    ),
    # The equivalence check's comparison, and Flight Recorder dumps read without torch.
    "runtime_v2": (
        ("runtime/equivalence.py", "runtime/flight_recorder.py", "runtime/trace.py"),
        (
            "tests/runtime/test_equivalence.py",
            "tests/runtime/test_equivalence_compare.py",
            "tests/runtime/test_trace.py",
            "tests/runtime/test_flight_recorder.py",
        ),
    ),
    # Threads mode's process group and its static notes: their tests run rank
    # threads in the test process (seconds each). runtime/threads.py (the World)
    # is left out: its mutants of the waiting loops hang until the run's deadline,
    # a minute or more per mutant (docs/dev/testing.md).
    "runtime_threads": (
        ("runtime/group.py", "runtime/static.py"),
        (
            "tests/runtime/test_world.py",
            "tests/runtime/test_threads.py",
            "tests/runtime/test_adapter.py",
        ),
    ),
    # Fixes: text edits, the engine's node-to-edit step, the codemods rules build
    # fixes from, and --fix/--diff's planning and writing.
    "fixes": (
        ("fixes.py", "engine/fixing.py", "rules/codemods.py", "faces/fixing.py"),
        (
            "tests/fixing/test_edits.py",
            "tests/fixing/test_apply.py",
            "tests/rules/test_rule_fixes.py",
        ),
    ),
    # The rules' fixes (the rule modules that build one; their other code is also
    # in "core_rules", "values" and "rules", with wider test selections).
    "fix_rules": (
        (
            "rules/collectives/missing_root.py",
            "rules/collectives/implicit_reduce_op.py",
            "rules/collectives/ignored_process_group.py",
            "rules/imports/wildcard_import.py",
            "rules/testsuite/tensor_compare_without_tolerance.py",
        ),
        (
            "tests/rules/test_rule_fixes.py",
            "tests/rules/test_rule_examples.py",
            "tests/rules/collectives/test_ignored_process_group.py",
            "tests/rules/imports/test_imports_precision.py",
            "tests/rules/testsuite/test_testsuite_precision.py",
            "tests/rules/test_core_rules.py",
            "tests/rules/collectives/test_implicit_reduce_op.py",
            "tests/rules/collectives/test_missing_root.py",
            "tests/rules/imports/test_wildcard_import.py",
            "tests/rules/testsuite/test_tensor_compare_without_tolerance.py",
        ),
    ),
    # The trust issue: which names a wildcard gives (RNK301's fix), and the audit
    # of every fix (no fix silences a finding without doing what it asked).
    "trust": (
        ("analysis/walk/wildcards.py", "fix_audit.py"),
        (
            "tests/fixing/test_audit.py",
            "tests/analysis/walk/test_wildcards.py",
            "tests/rules/imports/test_imports_precision.py",
            "tests/rules/test_rule_fixes.py",
        ),
    ),
    # Evidence and tiers (issue 35): the links of collective findings, what a
    # run reports at a confidence, and the lines a text run ends with.
    "evidence": (
        ("rules/collectives/_evidence.py", "faces/summary.py"),
        ("tests/rules/collectives/test_evidence.py", "tests/faces/test_cli.py"),
    ),
    # The adoption faces: baselines, --add-noqa, and RNK002 (unused suppressions).
    "adoption": (
        ("faces/baseline.py", "faces/noqa.py", "rules/framework/unused_suppression.py"),
        (
            "tests/faces/test_baseline.py",
            "tests/faces/test_noqa.py",
            "tests/rules/meta/test_unused_suppression.py",
            "tests/rules/test_rule_fixes.py",
        ),
    ),
    # The value analyses and rules of the collective-analysis round (RNK110-RNK113,
    # framework collectives): small enough to run alone.
    "values": (
        (
            "rules/collectives/_group_local.py",
            "analysis/walk/dist_state.py",
            "rules/collectives/_reductions.py",
            "analysis/walk/framework.py",
            "rules/collectives/group_local_root.py",
            "rules/collectives/import_time_distributed_state.py",
            "rules/collectives/reduction_semantics.py",
            "rules/collectives/root_not_a_rank.py",
        ),
        (
            *_ANALYSIS_TESTS,
            "tests/rules/collectives/test_group_local_root.py",
            "tests/rules/collectives/test_import_time_distributed_state.py",
            "tests/rules/collectives/test_reduction_semantics.py",
            "tests/rules/collectives/test_root_not_a_rank.py",
        ),
    ),
    # The modules the third collective-analysis round added (objects, leader/worker
    # protocols, flags restating a rank test, RNK101 in entry scripts).
    "protocols": (
        (
            "analysis/walk/creations.py",
            "analysis/walk/flags.py",
            "analysis/project/sequences.py",
            "analysis/walk/arguments.py",
            "analysis/walk/decorators.py",
            "analysis/walk/bodies.py",
            "rules/collectives/import_time_process_group.py",
        ),
        (
            "tests/analysis/walk/test_collective_protocols.py",
            "tests/analysis/walk/test_flags.py",
            "tests/analysis/project/test_sequences.py",
            "tests/analysis/walk/test_decorators.py",
            "tests/analysis/walk/test_framework.py",
            "tests/analysis/walk/test_per_rank_state.py",
            "tests/analysis/walk/test_batch_data.py",
            "tests/rules/collectives/test_import_time_process_group_entry_scripts.py",
            "tests/rules/collectives/test_import_time_process_group.py",
            "tests/analysis/walk/test_rank_values.py",
            "tests/analysis/project/test_project_facts.py",
            "tests/test_realbugs.py",
            "tests/rules/test_rule_examples.py",
            "tests/test_fixtures.py",
            "tests/analysis/walk/test_configured_calls.py",
            "tests/analysis/walk/test_complementary_assignments.py",
            "tests/analysis/walk/test_rank_tests.py",
            "tests/analysis/project/test_argument_flow.py",
        ),
    ),
    # Calls that communicate only in some configurations, groups of written-out
    # ranks, and the taint value.
    "configured": (
        ("analysis/walk/classify.py", "model/taint.py", "analysis/walk/membership.py"),
        (
            "tests/model/test_taint.py",
            "tests/analysis/walk/test_membership.py",
            "tests/analysis/walk/test_classify_cache.py",
            "tests/analysis/walk/test_configured_calls.py",
            "tests/analysis/walk/test_complementary_assignments.py",
            "tests/analysis/walk/test_framework.py",
            "tests/analysis/walk/test_per_rank_state.py",
            "tests/analysis/walk/test_rank_taint.py",
            "tests/analysis/walk/test_rank_values.py",
            "tests/analysis/walk/test_batch_data.py",
            "tests/test_realbugs.py",
            "tests/rules/test_rule_examples.py",
        ),
    ),
    # The speed issue's second round: what a run over some files loads, the
    # project phase's cache entry, the warm path, the placing of call sites.
    "partial": (
        (
            "analysis/project/dependencies.py",
            "analysis/project/reach.py",
            "cache.py",
            "api.py",
            "results.py",
        ),
        (
            "tests/test_one_file_runs.py",
            "tests/test_cache.py",
            "tests/test_api.py",
            "tests/engine/test_engine_paths.py",
            "tests/analysis/project/test_project.py",
            "tests/analysis/project/test_hot_regions.py",
            "tests/test_through_given_files.py",
            "tests/analysis/project/test_reach.py",
        ),
    ),
    # The rule modules the default-set precision work changed (a subset of "rules").
    "conventions": (
        ("rules/imports/*", "rules/portability/*", "rules/testsuite/*"),
        (
            "tests/rules/test_engineering_rules.py",
            "tests/rules/test_rule_examples.py",
            "tests/rules/imports/test_imports_precision.py",
            "tests/rules/portability/test_portability_precision.py",
            "tests/rules/testsuite/test_testsuite_precision.py",
            "tests/test_file_kinds.py",
            "tests/rules/test_default_precision.py",
            "tests/test_doc_examples.py",
            "tests/test_docs.py",
            "tests/analysis/walk/test_mesh.py",
            "tests/analysis/project/test_layout.py",
        ),
    ),
    # Issue 38: one walk per file (functions read from the walk), the phase's cache.
    "one_walk": (
        (
            "analysis/walk/function_nodes.py",
            "syntax.py",
            "rules/collectives/reduction_semantics.py",
            "rules/collectives/group_local_root.py",
            "rules/portability/hard_coded_topology.py",
            "engine/project_phase.py",
        ),
        (
            "tests/analysis/walk/test_function_nodes.py",
            "tests/test_syntax.py",
            "tests/engine/test_one_walk.py",
            "tests/rules/collectives/test_reduction_semantics.py",
            "tests/rules/collectives/test_group_local_root.py",
            "tests/rules/portability/test_portability_precision.py",
            "tests/rules/test_rule_examples.py",
            "tests/engine/test_engine_paths.py",
            "tests/test_cache.py",
            "tests/analysis/project/test_project.py",
            "tests/rules/test_rule_fixes.py",
            "tests/rules/collectives/test_evidence.py",
            "tests/rules/meta/test_unused_suppression.py",
            "tests/test_one_file_runs.py",
        ),
    ),
}
_ALWAYS_SKIPPED = (
    "src/ranklint/analysis/walk/catalog.py",
    "src/ranklint/_version.py",
    "src/ranklint/__main__.py",
)
# Log calls: their text is for people reading a debug log, not behaviour.
_SKIPPED_LINES = (
    r"logger\.(debug|info|warning|error|exception)\(",
    # argparse's help text (the CLI tests check the options themselves).
    r"\b(help|description)=",
)
_KILLED = {1, 3}
_SURVIVED = {0, 5, 33}  # 5 and 33: no test reached the mutant
_NOT_COUNTED = {None, 2, 34, 37}  # not run yet, interrupted, skipped, type check


def _toml_list(items: tuple[str, ...] | list[str]) -> str:
    return "[" + ", ".join(json.dumps(item) for item in items) + "]"


def prepare(group: str, *, fresh: bool) -> Path:
    """The group's working copy, made (or refreshed from the repository) for a run."""
    modules, tests = GROUPS[group]
    work = WORK / group
    if fresh:
        shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)
    # A repository root of its own: the checkout's .gitignore ignores .cache/, and
    # ranklint skips what git ignores when it walks folders.
    (work / ".git").mkdir(exist_ok=True)
    for name in _COPIED:
        source = REPO / name
        target = work / name
        if source.is_dir():
            shutil.copytree(
                source,
                target,
                dirs_exist_ok=True,
                ignore=shutil.ignore_patterns("__pycache__", ".ranklint_cache", "trainer-out"),
            )
        elif source.is_file():
            shutil.copy2(source, target)
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    head, _, rest = pyproject.partition("[tool.mutmut]")
    tail = rest[rest.index("\n[", 1) :] if "\n[" in rest[1:] else ""
    section = "\n".join(
        [
            "[tool.mutmut]",
            'source_paths = ["src/ranklint"]',
            f"only_mutate = {_toml_list([f'src/ranklint/{m}' for m in modules])}",
            f"do_not_mutate = {_toml_list(list(_ALWAYS_SKIPPED))}",
            f"do_not_mutate_patterns = {_toml_list(list(_SKIPPED_LINES))}",
            'also_copy = ["fixtures/", "docs/", "README.md", ".pre-commit-hooks.yaml", "bench/"]',
            'pytest_add_cli_args = ["-m", "not slow and not distributed", "-q", "-x"]',
            f"pytest_add_cli_args_test_selection = {_toml_list(tests)}",
            "",
        ]
    )
    (work / "pyproject.toml").write_text(head + section + tail, encoding="utf-8")
    return work


def run(group: str, *, fresh: bool, max_children: int, only: Sequence[str] = ()) -> int:
    """Mutate and test ``group``; ``only``: the mutant names (globs) to run, else all."""
    work = prepare(group, fresh=fresh)
    started = time.perf_counter()
    mutmut = Path(sys.executable).parent / "mutmut"
    done = subprocess.run(
        [str(mutmut), "run", "--max-children", str(max_children), *only],
        cwd=work,
        # Property tests run 25 examples (not 300) per mutant: see tests/conftest.py.
        env={**os.environ, "HYPOTHESIS_PROFILE": "mutation"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        print(f"{group}: mutmut exited {done.returncode}: {done.stderr[-600:]}", file=sys.stderr)
    print(f"{group}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return done.returncode


def scores(group: str) -> tuple[dict[str, Counter[str]], list[str]]:
    """Outcome counts per mutated file, and the names of the surviving mutants."""
    per_file: dict[str, Counter[str]] = {}
    survivors: list[str] = []
    root = WORK / group / "mutants"
    for meta in sorted(root.rglob("*.py.meta")):
        data = json.loads(meta.read_text(encoding="utf-8"))
        relative = meta.relative_to(root).as_posix().removesuffix(".meta")
        counts = per_file.setdefault(relative, Counter())
        for name, code in data.get("exit_code_by_key", {}).items():
            if code in _KILLED:
                counts["killed"] += 1
            elif code in _SURVIVED:
                counts["survived"] += 1
                survivors.append(name)
            elif code in _NOT_COUNTED:
                counts["not run"] += 1
            else:
                counts["timeout or suspicious"] += 1
    return per_file, survivors


def _measured(group: str) -> Iterator[tuple[str, Counter[str]]]:
    """(module path, outcome counts) of each module the group's run mutated."""
    per_file, _ = scores(group)
    for path, counts in per_file.items():
        if sum(counts.values()):
            yield path, counts


def report(groups: list[str]) -> str:
    return _table([row for group in groups for row in _measured(group)])


def overall(groups: list[str]) -> str:
    """Each module once, from the latest group run that mutated it, and the total."""
    latest: dict[str, tuple[float, Counter[str]]] = {}
    for group in groups:
        for path, counts in _measured(group):
            when = (WORK / group / "mutants" / f"{path}.meta").stat().st_mtime
            if path not in latest or when > latest[path][0]:
                latest[path] = (when, counts)
    return _table([(path, latest[path][1]) for path in sorted(latest)])


def _table(rows: list[tuple[str, Counter[str]]]) -> str:
    """A Markdown table of ``rows`` and their total."""
    lines = [
        "| module | killed | survived | timeout/suspicious | not run | score |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    total: Counter[str] = Counter()
    for path, counts in rows:
        total += counts
        lines.append(_row(path, counts))
    lines.append(_row("**all**", total))
    return "\n".join(lines)


def _row(name: str, counts: Counter[str]) -> str:
    counted = counts["killed"] + counts["survived"] + counts["timeout or suspicious"]
    score = f"{100 * counts['killed'] / counted:.0f}%" if counted else "-"
    return (
        f"| {name} | {counts['killed']} | {counts['survived']} | "
        f"{counts['timeout or suspicious']} | {counts['not run']} | {score} |"
    )


def try_mutant(group: str, mutant: str, tests: list[str]) -> int:
    """Run ``tests`` (the checkout's current versions) against one mutant of a finished run.

    The quick way to see whether a new test kills a survivor without a whole run:
    exit status 0 means the mutant still survives these tests.
    """
    mutants = WORK / group / "mutants"
    if not (mutants / "mutmut-stats.json").is_file():
        print(f"{group}: no run yet; run the group first", file=sys.stderr)
        return 2
    # A copy of its own, so that a run still going on in mutants/ is not disturbed.
    trial = WORK / group / "trial"
    stamp = trial / ".copied-from"
    made = str((mutants / "mutmut-stats.json").stat().st_mtime_ns)
    if not stamp.is_file() or stamp.read_text(encoding="utf-8") != made:
        shutil.rmtree(trial, ignore_errors=True)
        shutil.copytree(
            mutants, trial, ignore=shutil.ignore_patterns("__pycache__", "tests", "*.meta")
        )
        stamp.write_text(made, encoding="utf-8")
    shutil.copytree(
        REPO / "tests",
        trial / "tests",
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests]
    env = {
        **os.environ,
        "MUTANT_UNDER_TEST": mutant,
        "PYTHONPATH": str(trial / "src"),
        "HYPOTHESIS_PROFILE": "mutation",
    }
    return subprocess.run(command, cwd=trial, env=env, check=False).returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("groups", nargs="*", metavar="GROUP", help=", ".join(GROUPS))
    parser.add_argument("--list", action="store_true", help="print the groups and their tests")
    parser.add_argument("--report", action="store_true", help="print the scores so far")
    parser.add_argument(
        "--overall",
        action="store_true",
        help="print each module once (from its latest run) and the total; runs nothing",
    )
    parser.add_argument("--survivors", action="store_true", help="also list surviving mutants")
    parser.add_argument("--fresh", action="store_true", help="discard earlier results first")
    parser.add_argument("--max-children", type=int, default=2)
    parser.add_argument(
        "--only",
        nargs="+",
        default=(),
        metavar="GLOB",
        help="run only the mutants whose names match (`*xǁTailǁ*`, `*x_lookup__mutmut_*`)",
    )
    parser.add_argument(
        "--try",
        dest="try_",
        nargs="+",
        metavar=("GROUP MUTANT", "TEST"),
        help="run TESTs against one MUTANT of GROUP's last run (status 0: it survives)",
    )
    args = parser.parse_args()
    if args.try_:
        if len(args.try_) < 3:
            parser.error("--try needs GROUP MUTANT TEST...")
        group, mutant, *tests = args.try_
        return try_mutant(group, mutant, tests)
    if args.overall:
        print(overall([g for g in GROUPS if (WORK / g / "mutants").is_dir()]))
        return 0
    if args.list:
        for group, (modules, tests) in GROUPS.items():
            print(f"{group}: {', '.join(modules)}  <-  {', '.join(tests)}")
        return 0
    unknown = [group for group in args.groups if group not in GROUPS]
    if unknown:
        parser.error(f"unknown group(s) {', '.join(unknown)}; see --list")
    code = 0
    for group in args.groups:
        code = max(
            code, run(group, fresh=args.fresh, max_children=args.max_children, only=args.only)
        )
    done = [g for g in GROUPS if (WORK / g / "mutants").is_dir()]
    if args.report or args.groups:
        print(report(done))
    if args.survivors:
        for group in done:
            for name in scores(group)[1]:
                print(f"{group}: {name}")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
