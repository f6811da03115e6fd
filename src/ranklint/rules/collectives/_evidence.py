"""The evidence of collective findings, link by link, and the confidence each link carries.

A collective finding argues in links: where the rank-dependence comes from
(``source``), how the code uses it to split the ranks (``guard``), which group
the collective runs on and what is known of its members (``group``), how the
collective is reached (``reach``) and where the code runs (``context``). Each
link carries a confidence of its own; the finding's tier is its weakest link
(:attr:`ranklint.findings.Evidence.confidence`). What gives which tier is
documented in docs/usage.md ("Evidence and confidence"); the rules' docs say
which links they record.

The one principle: a guess from a name alone (a ``rank-names`` match, an
axis word inside a variable name) never makes a link high.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ranklint.analysis.project.callgraph import Hop
from ranklint.analysis.project.divergences import Divergence, DivergenceKind
from ranklint.analysis.project.sequences import (
    CollectiveLeaf,
    RankCond,
    alone_on_its_side,
    unknown_members,
)
from ranklint.analysis.walk.catalog import BACKEND_OPS
from ranklint.findings import Confidence, Evidence, Link
from ranklint.model.kinds import CallKind
from ranklint.model.taint import (
    CONFIGURED_NAME,
    FILE_SYSTEM,
    LAUNCHER_VARIABLE,
    PER_RANK_DATA,
    RANDOM_DRAW,
    RANK_NAME,
    RANK_QUERY,
    SOURCE_KINDS,
)
from ranklint.source import file_name

HIGH, MEDIUM, LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW

# The "Evidence and confidence" doc of the divergence rules (RNK102, RNK105).
DIVERGENCE_TIERS = """\
Each finding records five links (`--show-evidence`, and the `evidence` field of
JSON and SARIF); its tier is its weakest link's.

- **source**, where the rank-dependence comes from. High: a rank query
  (`dist.get_rank()`, `mesh.get_local_rank()`, a call named like one such as
  `get_world_rank()`, a framework's own rank attribute such as
  `trainer.global_rank` or `accelerator.is_main_process`), a launcher variable
  (`RANK`, `LOCAL_RANK`), a name the project declares in its own
  `rank-names`/`extend-rank-names`, per-rank data (a step's batch, what a rank
  contributes to an object gather), a `rank_zero_only`-style decorator.
  Medium: a name matched by `rank-names` and nothing else (a parameter
  `rank`), an unseeded random draw (a seeded run draws alike on every rank),
  a file-system test on a path the function writes, a test whose source was
  not recorded.
- **guard**, how the test splits the ranks: equality, ordering, truth test,
  loop trip count, early exit (high); membership (`rank in ranks`: medium,
  the members of a group pass it alike; high before a group creation, which
  every rank must reach).
- **group**, the group the collective runs on: the default group, explicit
  ranks, a quoted mesh dimension (`mesh["tp"]`), a `ParallelMode` member or a
  getter that names the group (`get_data_parallel_group()`) (high); the group
  a framework object holds, or an axis read from a variable's name
  (`tp_group`, `_model_update_group`) (medium); a group nothing says the
  members of (low).
- **reach**: directly, through the project's calls (the chain is shown), or
  through a framework's implicit collective (a wrapped model's forward,
  Lightning's `log(..., sync_dist=True)`) (high), and a framework call that
  communicates only under some backends (accelerate's `save_state`, the
  Hugging Face Trainer's `save_model`: collective under DeepSpeed or FSDP,
  local under DDP) in a file that configures or tests for DeepSpeed or FSDP
  (`deepspeed_plugin`, `DistributedType.DEEPSPEED`, `fsdp=...`) (high).
  Medium: such a call in a file that shows no such backend, and a chain that
  reaches the collective only under a test
  of a parameter whose argument the call passes and the analysis cannot
  evaluate (`if state is None:` in a callee given `state=...`).
- **context**: library code, a test or a script, as the path says (shown; it
  does not lower the tier).

The default run reports high findings; `--confidence medium` adds the rest
but the low ones, `--confidence low` every one.
"""

# How sure each kind of rank source is.
_SOURCE_CONFIDENCE = {
    RANK_QUERY: HIGH,
    LAUNCHER_VARIABLE: HIGH,
    CONFIGURED_NAME: HIGH,
    RANK_NAME: MEDIUM,
    RANDOM_DRAW: MEDIUM,
    PER_RANK_DATA: HIGH,
    FILE_SYSTEM: MEDIUM,
}

# Collectives a framework issues implicitly (no call names them as one): a
# model forward that all-gathers, Lightning's `self.log(..., sync_dist=True)`,
# `trainer.log_dir`.
_IMPLICIT_OPS = frozenset(
    {
        "log",
        "log_dict",
        "forward",
        "buffered_forward",
        "generate",
        "log_dir",
        "callback_metrics",
    }
)
_QUOTED = re.compile(r"""["'][A-Za-z_]\w*["']""")
# A call of a getter that names the group it returns: `get_data_parallel_group()`.
_GETTER = re.compile(r"(^|\.)get_\w*_group\(")
_TEST_FILE = re.compile(
    r"(^|/)(tests?|testing)/|(^|/)test_[^/]*\.py$|_test\.py$|(^|/)conftest\.py$"
)
_TEST_NAME = re.compile(r"^test_.*\.py$|_test\.py$|^conftest\.py$")
_SCRIPT_FOLDER = re.compile(r"(^|/)(examples?|scripts?|tools|benchmarks?|recipes|tutorials?)/")


def source_link(sources: Iterable[tuple[str, str]], test: str) -> Link:
    """The surest source of a rank-dependence (``test``: the condition, shown when
    no source was recorded: a rank seen only through the shape of the code)."""
    ordered = sorted(sources, key=lambda source: (SOURCE_KINDS.index(source[0]), source[1]))
    if not ordered:
        return Link("unrecorded", f"`{test}`", MEDIUM)
    kind, text = ordered[0]
    return Link(kind, f"`{text}`", _SOURCE_CONFIDENCE[kind])


def guard_kind(test: str, cond: RankCond | None) -> str:
    """How a test splits the ranks: equality, ordering, membership or truth-test."""
    if cond is not None and cond.membership:
        return "membership"
    if cond is not None and cond.rank_test is not None:
        return "ordering" if cond.rank_test[0] in ("<", "<=", ">", ">=") else "equality"
    if " in " in f" {test} ":
        return "membership"
    if "==" in test or "!=" in test:
        return "equality"
    if any(operator in test for operator in ("<", ">")):
        return "ordering"
    return "truth-test"


def group_link(leaf: CollectiveLeaf) -> Link:
    """The group a collective runs on and what is known of its members."""
    if leaf.kind is CallKind.GROUP_CREATION:
        return Link("default-group", "group creation runs on every rank of the job", HIGH)
    if leaf.members:
        ranks = ", ".join(str(rank) for rank in sorted(leaf.members))
        return Link("explicit-ranks", f"`{leaf.group}`: global ranks {ranks}", HIGH)
    if leaf.group is None and leaf.group_axes is not None and not leaf.group_axes:
        return Link("default-group", "the default group (every rank)", HIGH)
    if leaf.group is None:
        return Link("framework-group", "the group the framework's object holds", MEDIUM)
    return group_text_link(leaf.group, leaf.group_axes)


def group_text_link(group: str, axes: frozenset[str] | None) -> Link:
    """A group as written (``group``) and the axes read from it (empty: the
    world group; None: no axis is known).

    Declared axes are high: a quoted mesh dimension (``mesh["tp"]``), a
    ``ParallelMode`` member, a getter call that names one
    (``get_tensor_model_parallel_group()``). An axis word inside a variable or
    attribute name (``tp_group``, ``_model_update_group``) is medium; a group
    nothing names an axis of is low: its members may be every rank or none of
    the ones the code tests.
    """
    if axes is None:
        return Link("unknown-members", f"`{group}`", LOW)
    if not axes:
        return Link("default-group", f"`{group}` (every rank)", HIGH)
    shown = ", ".join(sorted(axes))
    if _QUOTED.search(group) or "ParallelMode." in group:
        return Link("mesh-axis", f"`{group}` (axis {shown})", HIGH)
    if _GETTER.search(group):
        return Link("axis-getter", f"`{group}` (axis {shown})", HIGH)
    return Link("axis-from-name", f"`{group}` (axis {shown}, read from the name)", MEDIUM)


def reach_link(
    chain: Sequence[Hop], op: str, conditional: str | None = None, backend_shown: bool = False
) -> Link:
    """How the collective is reached: directly, through project calls, or a framework.

    ``conditional``: the parameters whose arguments, passed on the way and not
    evaluated, decide a test the collective is under; ``backend_shown``: the
    file configures or tests for the sharding backend a backend op needs.
    """
    if op in BACKEND_OPS and backend_shown:
        return Link(
            "framework-backend",
            f"`{chain[-1].label}` communicates under DeepSpeed or FSDP, which this file "
            f"configures or tests for",
            HIGH,
        )
    if op in BACKEND_OPS:
        return Link(
            "framework-backend",
            f"`{chain[-1].label}` communicates only under a sharding backend "
            f"(DeepSpeed, FSDP), which the launch configuration picks",
            MEDIUM,
        )
    if op in _IMPLICIT_OPS:
        # The catalog names these only on a framework's own objects (a wrapped
        # model, a Lightning module or trainer): a fact of the API, not a guess.
        return Link("framework", f"`{chain[-1].label}` communicates implicitly", HIGH)
    if len(chain) == 1:
        return Link("direct", f"`{chain[0].label}`", HIGH)
    shown = " -> ".join(f"`{hop.label}`" for hop in chain)
    if conditional is not None:
        return Link(
            "conditional-chain",
            f"{shown}, only where a test of {conditional} lets it, "
            f"which an argument passed on the way decides",
            MEDIUM,
        )
    return Link("call-chain", shown, HIGH)


def context_link(path: str) -> Link:
    """Where the code runs, as its path tells: a test, a script or library code."""
    posix = path.replace("\\", "/")
    if _TEST_FILE.search(posix):
        return Link("test", "a test module", HIGH)
    if _SCRIPT_FOLDER.search(posix):
        return Link("script", "an example or script", HIGH)
    return Link("library", "library code", HIGH)


def entry_context_link(path: str) -> Link:
    """Where module-level code runs, for the import-time rules (RNK101, RNK111).

    Library code is imported by the program: its module level runs at import.
    A test module (named `test_*.py`, `*_test.py` or `conftest.py`) may itself
    be what a launcher starts (`torchrun -m pytest`), whose module level then
    runs once per launched process, as the run: medium. (Examples and scripts
    are entry scripts, which the rules do not report at all.)
    """
    name = file_name(path)
    if _TEST_NAME.search(name):
        return Link("test", "a test module, which a launcher may run as its program", MEDIUM)
    return context_link(path)


def divergence_evidence(divergence: Divergence) -> Evidence:
    """The evidence of a rank-divergent collective or group creation (RNK102, RNK105)."""
    leaf = divergence.leaf
    cond = divergence.rank_cond
    test = divergence.condition
    kind = divergence.kind
    if kind is DivergenceKind.RANK_ONLY_FUNCTION and cond.wrapper_test is not None:
        # A decorator of the project, judged by its wrapper's rank test.
        source = source_link(cond.sources, cond.wrapper_test)
        guard = Link(
            "decorator",
            f"`{test}` calls the function only under its wrapper's test `{cond.wrapper_test}`",
            HIGH,
        )
    elif kind is DivergenceKind.RANK_ONLY_FUNCTION:
        source = Link("rank-only-decorator", f"`{test}`", HIGH)
        guard = Link("decorator", f"`{test}` runs the function on one rank", HIGH)
    else:
        source = source_link(cond.sources, test)
        if cond.via is not None:
            source = Link(
                source.kind,
                f"{source.detail}, returned by `{_function_name(cond.via)}()`",
                source.confidence,
            )
        guard = _guard(divergence, cond, test)
    group = group_link(leaf)
    framework = leaf.group is None or leaf.mesh_group
    if framework and unknown_members(leaf) and alone_on_its_side(divergence):
        assert cond.rank_test is not None  # alone_on_its_side needs `rank == N`
        held = "the group the framework's object holds"
        if leaf.mesh_group:
            held = f"`{leaf.group}`, a device mesh's group"
        group = Link(
            "framework-group",
            f"{held}, which global rank {cond.rank_test[1]} would reach alone",
            HIGH,
        )
    return Evidence(
        source=source,
        guard=guard,
        group=group,
        reach=reach_link(leaf.chain, leaf.op, leaf.conditional, leaf.backend_shown),
        context=context_link(leaf.chain[0].path),
    )


def _guard(divergence: Divergence, cond: RankCond, test: str) -> Link:
    kind = divergence.kind
    if kind is DivergenceKind.LOOP_TRIP_COUNT:
        return Link("loop-trip-count", f"`{test}`", HIGH)
    if kind is DivergenceKind.SKIPPED_AFTER_EXIT:
        exit_kind = divergence.exit_kind
        shown = exit_kind.value if exit_kind is not None else "exit"  # pragma: no mutate
        some = " on some paths" if divergence.exit_on_some_paths else ""
        return Link("early-exit", f"`{shown}`{some} when `{test}`", HIGH)
    used = guard_kind(test, cond)
    # Members of a group all pass a membership test alike; but every rank must
    # create every group, members or not.
    creation = divergence.leaf.kind is CallKind.GROUP_CREATION
    confidence = MEDIUM if used == "membership" and not creation else HIGH
    return Link(used, f"`{test}`", confidence)


def _function_name(target: str) -> str:
    """``leader`` of a call target (``pkg.mod.leader``, ``@local:leader``)."""
    return target.rpartition(".")[2].rpartition(":")[2]
