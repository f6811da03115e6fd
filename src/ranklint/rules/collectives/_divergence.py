"""Shared by RNK102 and RNK105: a divergence's finding, worded from the collective facts."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ranklint.analysis.project.divergences import Divergence, DivergenceKind
from ranklint.analysis.project.facts import ProjectFacts
from ranklint.analysis.project.sequences import CollectiveLeaf
from ranklint.analysis.walk.catalog import BACKEND_OPS
from ranklint.model.events import ExitKind
from ranklint.model.kinds import CallKind
from ranklint.rules.base import ProjectFinding
from ranklint.rules.collectives._evidence import divergence_evidence

# A test that names the sharding backend a backend op communicates under.
_BACKEND_TEST = re.compile(r"deepspeed|fsdp|zero_?3|zero_stage", re.IGNORECASE)
_EXIT_TEXT = {
    ExitKind.RETURN: "return early",
    ExitKind.RAISE: "raise",
    ExitKind.EXIT: "exit",
    ExitKind.CONTINUE: "skip to the next iteration",
    ExitKind.BREAK: "leave the loop",
}


def divergence_findings(project: ProjectFacts, *, group_creation: bool) -> Iterator[ProjectFinding]:
    """Findings for the divergences of group creations, or of the other collectives."""
    for divergence in project.divergences:
        leaf = divergence.leaf
        if (leaf.kind is CallKind.GROUP_CREATION) != group_creation:
            continue
        if leaf.op in BACKEND_OPS and _names_backend(divergence):
            continue  # `if is_deepspeed or is_main: save_state()`: split only where it is local
        hop = leaf.chain[0]
        yield ProjectFinding(
            hop.path,
            hop.site,
            _message(divergence),
            leaf.chain,
            evidence=divergence_evidence(divergence),
        )


def _names_backend(divergence: Divergence) -> bool:
    """Whether the rank test also tests for the sharding backend (in any operand)."""
    texts = (divergence.condition, *divergence.rank_cond.keys)
    return any(_BACKEND_TEST.search(text) for text in texts)


def _message(divergence: Divergence) -> str:
    subject = _subject(divergence.leaf)
    condition = divergence.condition
    false = " is false" if divergence.when_false else ""
    kind = divergence.kind
    if kind is DivergenceKind.RANK_ONLY_FUNCTION:
        return (
            f"{subject} runs only on the rank that `{condition}` selects; the other ranks "
            f"never call it and hang in their next collective"
        )
    if kind is DivergenceKind.LOOP_TRIP_COUNT and divergence.leaf.op == "log_dict":
        return (
            f"{subject} all-reduces once per key of `{condition}`, whose keys depend on the "
            f"rank: ranks with fewer keys hang in it or pair it with another rank's collective; "
            f"log the same keys on every rank (the sorted union, with a default value)"
        )
    if kind is DivergenceKind.LOOP_TRIP_COUNT:
        return (
            f"{subject} runs in a loop whose trip count or order depends on the rank "
            f"(`{condition}`); ranks that iterate fewer times, or over other items, hang in it "
            f"or pair it with another rank's collective; make the iteration the same on every "
            f"rank: all-reduce the count first, or iterate a list every rank agrees on (the "
            f"sorted union of the ranks' keys)"
        )
    if kind is DivergenceKind.MISMATCH:
        assert divergence.other is not None
        if divergence.other.key == divergence.leaf.key:
            return (
                f"ranks where `{condition}`{false} call {subject} with the reduce op "
                f"{divergence.leaf.reduce_op} here, the others with "
                f"{divergence.other.reduce_op}: the ranks reduce with different ops, which "
                f"gives wrong values or fails; pass the same reduce op on every rank"
            )
        return (
            f"ranks where `{condition}`{false} call {subject} here, the others call "
            f"{_describe(divergence.other)}: the collectives pair up wrongly or hang; issue the "
            f"same collectives in the same order on every rank"
        )
    if kind is DivergenceKind.SKIPPED_AFTER_EXIT:
        assert divergence.exit_kind is not None
        can = "can " if divergence.exit_on_some_paths else ""
        return (
            f"{subject} is skipped by ranks that {can}{_EXIT_TEXT[divergence.exit_kind]} when "
            f"`{condition}`{false}{_file_system(condition)}; the ranks that reach it hang in it; "
            f"move the collective before the early exit or make every rank reach it"
        )
    return (
        f"{subject} is reached only when `{condition}`{false}{_file_system(condition)}; ranks "
        f"that skip it hang in their next collective; call it on every rank, outside the "
        f"rank-dependent branch"
    )


# File-system tests are rank-dependent where the function writes the path it tests.
_FILE_SYSTEM_TESTS = ("os.path.", "listdir(", "glob(")


def _file_system(condition: str) -> str:
    """Why a test of the file system splits the ranks, when the condition is one."""
    if not any(test in condition for test in _FILE_SYSTEM_TESTS):
        return ""
    return (
        " (this function writes that path on some ranks: a rank that looks after the write "
        "sees the file, one that looks before does not)"
    )


def _subject(leaf: CollectiveLeaf) -> str:
    if len(leaf.chain) == 1:
        return _describe(leaf)
    return f"`{leaf.chain[0].label}` (which reaches {_describe(leaf)}: {{chain}})"


def _describe(leaf: CollectiveLeaf) -> str:
    if leaf.kind is CallKind.GROUP_CREATION:
        arguments = leaf.group or ""
        if len(arguments) > 40:
            arguments = arguments[:37] + "..."
        return f"`{leaf.op}({arguments})`"
    if leaf.op in _SHARDED_MODEL_CALLS:
        return _SHARDED_MODEL_CALLS[leaf.op]
    if leaf.group is None:
        return f"`{leaf.op}`"
    return f"`{leaf.op}` on `{leaf.group}`"


# Calls of a model wrapped by FSDP (`model = FSDP(m)`, `fully_shard(m)`), by
# ZeRO-3 or accelerate's FSDP, of a DDP model (`model = DDP(m)`), and of a metric.
_SHARDED_MODEL_CALLS = {
    "buffered_forward": "the forward of a DDP model (it broadcasts the module's buffers)",
    "forward": "the forward of a sharded model (it all-gathers the parameters)",
    "generate": "`generate` of a sharded model (each step all-gathers the parameters)",
    # And a torchmetrics metric's compute().
    "compute": "`compute` of a torchmetrics metric (it all-gathers every rank's state)",
}
