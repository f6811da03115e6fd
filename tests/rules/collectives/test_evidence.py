"""Evidence and confidence tiers of collective findings (issue 35).

Each collective finding records its argument link by link; its tier is the
weakest link's; the default run reports high findings and counts the others.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ranklint import Config, lint_source
from ranklint.config import ConfigError, load_config
from ranklint.findings import Confidence, Evidence, Finding, Link
from ranklint.rules.collectives._evidence import (
    context_link,
    entry_context_link,
    group_text_link,
    guard_kind,
    source_link,
)
from tests.conftest import findings_of, write

HIGH, MEDIUM, LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW

# A parameter named `rank`: only its name says it holds the caller's rank.
_NAME_ONLY = """\
import torch.distributed as dist


def finish(rank):
    if rank == 0:
        dist.barrier()
"""
# A rank query on the default group: every link is high.
_QUERIED = """\
import torch.distributed as dist


def finish():
    if dist.get_rank() == 0:
        dist.barrier()
"""


def _one(source: str, select: tuple[str, ...] = ("RNK102",)) -> Finding:
    found = findings_of(source, select=select)
    assert len(found) == 1, found
    return found[0]


def _links(finding: Finding) -> dict[str, tuple[str, Confidence]]:
    assert finding.evidence is not None
    return {aspect: (link.kind, link.confidence) for aspect, link in finding.evidence.links()}


# -- the model ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("run", "finding", "admitted"),
    [
        (HIGH, HIGH, True),
        (HIGH, MEDIUM, False),
        (HIGH, LOW, False),
        (MEDIUM, HIGH, True),
        (MEDIUM, MEDIUM, True),
        (MEDIUM, LOW, False),
        (LOW, LOW, True),
        (LOW, MEDIUM, True),
    ],
)
def test_a_run_admits_findings_at_its_confidence_or_surer(
    run: Confidence, finding: Confidence, admitted: bool
) -> None:
    assert run.admits(finding) is admitted


def test_evidence_confidence_is_its_weakest_link_and_high_without_links() -> None:
    strong = Link("rank-query", "`dist.get_rank()`", HIGH)
    named = Link("rank-name", "`rank`", MEDIUM)
    unknown = Link("unknown-members", "`pg`", LOW)

    assert Evidence().confidence is HIGH
    assert Evidence(source=strong).confidence is HIGH
    assert Evidence(source=strong, guard=named).confidence is MEDIUM
    assert Evidence(source=named, group=unknown, context=strong).confidence is LOW
    assert [aspect for aspect, _ in Evidence(context=strong, source=named).links()] == [
        "source",
        "context",
    ]


def test_finding_without_evidence_is_high() -> None:
    found = findings_of('import os\nos.environ["CUDA_LAUNCH_BLOCKING"] = "1"\n', select=("RNK505",))

    assert [f.confidence for f in found] == [HIGH]
    assert found[0].evidence is None


# -- links -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("condition", "kind", "confidence"),
    [
        ("dist.get_rank() == 0", "rank-query", HIGH),
        ('int(os.environ["RANK"]) == 0', "launcher-variable", HIGH),
        ("rank == 0", "rank-name", MEDIUM),
        ("random.random() < 0.5", "random-draw", MEDIUM),
        ("accelerator.is_main_process", "rank-query", HIGH),
        ("ctx.get_world_rank() == 0", "rank-query", HIGH),
    ],
)
def test_source_link_says_where_the_rank_dependence_comes_from(
    condition: str, kind: str, confidence: Confidence
) -> None:
    source = f"""\
import os
import random

import torch.distributed as dist


def step(rank, accelerator, ctx):
    if {condition}:
        dist.barrier()
"""
    assert _links(_one(source))["source"] == (kind, confidence)


def test_source_link_prefers_the_surest_source_and_says_the_test_when_none() -> None:
    sources = {("rank-name", "rank"), ("rank-query", "dist.get_rank()")}

    assert source_link(sources, "x") == Link("rank-query", "`dist.get_rank()`", HIGH)
    assert source_link((), "flag") == Link("unrecorded", "`flag`", MEDIUM)


@pytest.mark.parametrize(
    ("test", "kind"),
    [
        ("rank in ranks", "membership"),
        ("rank == 0", "equality"),
        ("rank != 0", "equality"),
        ("rank < 2", "ordering"),
        ("is_main", "truth-test"),
    ],
)
def test_guard_kind_from_the_text_of_the_test(test: str, kind: str) -> None:
    assert guard_kind(test, None) == kind


@pytest.mark.parametrize(
    ("group", "axes", "kind", "confidence"),
    [
        ('mesh["tp"]', frozenset({"tp"}), "mesh-axis", HIGH),
        ("gpc.get_group(ParallelMode.DATA)", frozenset({"dp"}), "mesh-axis", HIGH),
        ("mpu.get_data_parallel_group()", frozenset({"dp"}), "axis-getter", HIGH),
        ("self.tp_group", frozenset({"tp"}), "axis-from-name", MEDIUM),
        ("self._model_update_group", frozenset({"tp"}), "axis-from-name", MEDIUM),
        ("pg", None, "unknown-members", LOW),
        ("dist.group.WORLD", frozenset(), "default-group", HIGH),
    ],
)
def test_group_link_is_high_only_for_declared_axes(
    group: str, axes: frozenset[str] | None, kind: str, confidence: Confidence
) -> None:
    link = group_text_link(group, axes)

    assert (link.kind, link.confidence) == (kind, confidence)


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("pkg/tests/test_sync.py", "test"),
        ("pkg/conftest.py", "test"),
        ("pkg/sync_test.py", "test"),
        ("examples/train.py", "script"),
        ("scripts/run.py", "script"),
        ("pkg/sync.py", "library"),
    ],
)
def test_context_link_reads_the_path(path: str, kind: str) -> None:
    assert context_link(path).kind == kind
    assert context_link(path).confidence is HIGH


@pytest.mark.parametrize(
    ("path", "confidence"),
    [
        ("tests/test_launch.py", MEDIUM),
        ("conftest.py", MEDIUM),
        ("pkg/launch_test.py", MEDIUM),
        ("tests/helpers.py", HIGH),
        ("pkg/state.py", HIGH),
    ],
)
def test_entry_context_is_medium_for_test_modules_a_launcher_may_run(
    path: str, confidence: Confidence
) -> None:
    assert entry_context_link(path).confidence is confidence


# -- tiers of whole findings -------------------------------------------------


def test_rank_query_on_the_default_group_is_high_in_every_link() -> None:
    finding = _one(_QUERIED)

    assert finding.confidence is HIGH
    assert _links(finding) == {
        "source": ("rank-query", HIGH),
        "guard": ("equality", HIGH),
        "group": ("default-group", HIGH),
        "reach": ("direct", HIGH),
        "context": ("library", HIGH),
    }


def test_a_rank_name_alone_never_makes_a_finding_high() -> None:
    assert _one(_NAME_ONLY).confidence is MEDIUM


def test_an_axis_word_in_a_group_name_is_no_evidence_of_an_axis() -> None:
    source = """\
import torch.distributed as dist


class Trainer:
    def sync_weights(self, p):
        if dist.get_rank() == 0:
            dist.all_reduce(p, group=self._model_update_group)
"""
    finding = _one(source)

    assert _links(finding)["group"] == ("axis-from-name", MEDIUM)
    assert finding.confidence is MEDIUM


def test_a_call_chain_is_recorded_hop_by_hop() -> None:
    source = """\
import torch.distributed as dist


def sync():
    dist.barrier()


def finish():
    if dist.get_rank() == 0:
        sync()
"""
    finding = _one(source)

    assert finding.evidence is not None
    assert finding.evidence.reach is not None
    assert finding.evidence.reach.kind == "call-chain"
    assert finding.evidence.reach.detail == "`sync()` -> `dist.barrier()`"


@pytest.mark.parametrize(
    ("annotation", "call", "confidence"),
    [
        (": ProcessGroup", "dist.all_reduce(t)", HIGH),
        ("", "dist.all_reduce(t)", HIGH),  # `pg` is the group of the other collective
        (": ProcessGroup", "dist.barrier()", MEDIUM),  # a barrier may be for every rank
    ],
)
def test_ignored_group_tier_follows_what_shows_the_parameter_is_a_group(
    annotation: str, call: str, confidence: Confidence
) -> None:
    source = f"""\
import torch.distributed as dist
from torch.distributed import ProcessGroup


def reduce(t, pg{annotation}):
    dist.all_gather_into_tensor(t, t, group=pg)
    {call}
"""
    assert _one(source, ("RNK108",)).confidence is confidence


def test_ignored_group_of_a_parameter_only_passed_on_is_medium() -> None:
    source = """\
import torch.distributed as dist


def reduce(t, dims):
    helper(t, group=dims)
    dist.all_reduce(t)
"""
    finding = _one(source, ("RNK108",))

    assert _links(finding)["group"] == ("group-like-parameter", MEDIUM)


def test_assert_on_a_group_rank_does_not_make_a_literal_root_group_local() -> None:
    source = """\
import torch.distributed as dist


def publish(t, group):
    if dist.get_rank() == 0:
        assert dist.get_rank(group) == 0
    dist.broadcast(t, src=0, group=group)
"""
    assert findings_of(source, select=("RNK110",)) == []


def test_group_local_root_records_the_query_and_stays_high_on_an_unknown_group() -> None:
    source = """\
import torch.distributed as dist


def publish(obj, pg, rank):
    if pg.rank() == rank:
        obj = [obj]
    dist.broadcast_object_list(obj, rank, group=pg)
"""
    finding = _one(source, ("RNK110",))

    assert finding.confidence is HIGH
    assert _links(finding)["source"] == ("rank-query", HIGH)


@pytest.mark.parametrize(("path", "confidence"), [("state.py", HIGH), ("test_state.py", MEDIUM)])
def test_import_time_rank_read_is_medium_in_a_test_module(
    path: str, confidence: Confidence
) -> None:
    source = 'import os\n\nRANK = int(os.environ.get("RANK", "0"))\n'
    result = lint_source(source, path, Config(select=("RNK111",), confidence="low"))

    assert [f.confidence for f in result.findings] == [confidence]


# -- what a run reports ------------------------------------------------------


def test_default_run_reports_high_findings_and_counts_the_others() -> None:
    result = lint_source(_NAME_ONLY, "train.py", Config(select=("RNK102",)))

    assert result.findings == []
    assert result.below_confidence == 1


@pytest.mark.parametrize(("confidence", "shown"), [("high", 0), ("medium", 1), ("low", 1)])
def test_confidence_option_admits_lower_tiers(confidence: str, shown: int) -> None:
    result = lint_source(_NAME_ONLY, "train.py", Config(select=("RNK102",), confidence=confidence))

    assert len(result.findings) == shown
    assert result.below_confidence == 1 - shown


def test_noqa_on_a_hidden_finding_is_still_used() -> None:
    source = _NAME_ONLY.replace("dist.barrier()", "dist.barrier()  # noqa: RNK102")
    result = lint_source(source, "train.py", Config(select=("RNK102", "RNK002")))

    assert result.findings == []
    assert result.below_confidence == 0


def test_confidence_key_is_read_from_pyproject_and_checked(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[tool.ranklint]\nconfidence = "medium"\n')
    assert load_config(None, cwd=tmp_path).reported_confidence() is MEDIUM

    write(tmp_path / "pyproject.toml", '[tool.ranklint]\nconfidence = "certain"\n')
    with pytest.raises(ConfigError, match="confidence"):
        load_config(None, cwd=tmp_path)


# -- the command line and the formats -----------------------------------------


def test_cli_default_run_says_how_many_findings_of_lower_confidence_it_left_out(
    run_cli, tmp_path: Path
) -> None:
    write(tmp_path / "train.py", _NAME_ONLY)

    done = run_cli("check", "--select", "RNK102", "train.py", cwd=tmp_path)

    assert done.code == 0
    assert "1 finding of lower confidence not shown" in done.err


def test_cli_confidence_flag_overrides_the_configuration(run_cli, tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[tool.ranklint]\nconfidence = "high"\n')
    write(tmp_path / "train.py", _NAME_ONLY)

    done = run_cli(
        "check", "--select", "RNK102", "--confidence", "medium", "train.py", cwd=tmp_path
    )

    assert done.code == 1
    assert "train.py:6:9: RNK102" in done.out
    assert "lower confidence" not in done.err


def test_cli_show_evidence_prints_the_tier_and_each_link(run_cli, tmp_path: Path) -> None:
    write(tmp_path / "train.py", _NAME_ONLY)

    done = run_cli(
        "check",
        "--select",
        "RNK102",
        "--confidence",
        "low",
        "--show-evidence",
        "--output-format",
        "concise",
        "train.py",
        cwd=tmp_path,
    )

    lines = done.out.splitlines()
    assert lines[0].startswith("train.py:6:9: RNK102")
    assert lines[1:3] == ["    confidence: medium", "    source: rank-name (medium): `rank`"]
    assert "    group: default-group (high): the default group (every rank)" in lines


def test_cli_show_evidence_with_json_is_a_usage_error(run_cli, tmp_path: Path) -> None:
    write(tmp_path / "train.py", _QUERIED)

    done = run_cli("check", "--format", "json", "--show-evidence", "train.py", cwd=tmp_path)

    assert done.code == 2
    assert "--show-evidence" in done.err


def test_json_and_sarif_carry_the_tier_and_a_field_per_link(run_cli, tmp_path: Path) -> None:
    write(tmp_path / "train.py", _NAME_ONLY)
    args = ("check", "--select", "RNK102", "--confidence", "medium", "train.py")

    record = json.loads(run_cli(*args, "--format", "json", cwd=tmp_path).out)[0]
    sarif = json.loads(run_cli(*args, "--format", "sarif", cwd=tmp_path).out)

    assert record["confidence"] == "medium"
    assert record["evidence"]["source"] == {
        "kind": "rank-name",
        "detail": "`rank`",
        "confidence": "medium",
    }
    assert set(record["evidence"]) == {"source", "guard", "group", "reach", "context"}
    properties = sarif["runs"][0]["results"][0]["properties"]
    assert properties["confidence"] == "medium"
    assert properties["evidence"] == record["evidence"]


def test_rules_with_evidence_document_their_tiers() -> None:
    from ranklint.rules import all_rules

    documented = {rule.code for rule in all_rules() if rule.tiers.strip()}

    assert {"RNK101", "RNK102", "RNK105", "RNK108", "RNK110", "RNK111"} <= documented


_EARLY_EXIT = """\
import torch.distributed as dist


def step(t):
    if dist.get_rank() != 0:
        return
    dist.all_reduce(t)
"""
_TRIP_COUNT = """\
import torch.distributed as dist


def step(t):
    for _ in range(dist.get_rank()):
        dist.all_reduce(t)
"""
_MEMBERS_CREATE = """\
import torch.distributed as dist

TRAINERS = [0, 1]


def build():
    rank = dist.get_rank()
    if rank in TRAINERS:
        dist.new_group(TRAINERS)
"""
_DECORATED = """\
import torch.distributed as dist
from lightning.pytorch.utilities import rank_zero_only


@rank_zero_only
def save(t):
    dist.barrier()
"""
_MESH_AXIS = """\
import torch.distributed as dist


def is_main():
    return dist.get_rank() == 0


def step(t, mesh):
    if is_main():
        dist.all_reduce(t, group=mesh.get_group("tp"))
"""
_EXPLICIT_RANKS = """\
import torch.distributed as dist


def step(t):
    g = dist.new_group([0, 1])
    if dist.get_rank() == 0:
        dist.all_reduce(t, group=g)
    else:
        dist.broadcast(t, src=0)
"""
_LIBRARY = ("context", "library", "library code", HIGH)
_DEFAULT_GROUP = ("group", "default-group", "the default group (every rank)", HIGH)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        pytest.param(
            _EARLY_EXIT,
            [
                ("source", "rank-query", "`dist.get_rank()`", HIGH),
                ("guard", "early-exit", "`return` when `dist.get_rank() != 0`", HIGH),
                _DEFAULT_GROUP,
                ("reach", "direct", "`dist.all_reduce()`", HIGH),
                _LIBRARY,
            ],
            id="early-exit",
        ),
        pytest.param(
            _TRIP_COUNT,
            [
                ("source", "rank-query", "`dist.get_rank()`", HIGH),
                ("guard", "loop-trip-count", "`range(dist.get_rank())`", HIGH),
                _DEFAULT_GROUP,
                ("reach", "direct", "`dist.all_reduce()`", HIGH),
                _LIBRARY,
            ],
            id="loop-trip-count",
        ),
        pytest.param(
            _MEMBERS_CREATE,
            [
                ("source", "rank-query", "`dist.get_rank()`", HIGH),
                ("guard", "membership", "`rank in TRAINERS`", HIGH),
                ("group", "default-group", "group creation runs on every rank of the job", HIGH),
                ("reach", "direct", "`dist.new_group()`", HIGH),
                _LIBRARY,
            ],
            id="membership-before-a-group-creation",
        ),
        pytest.param(
            _DECORATED,
            [
                ("source", "rank-only-decorator", "`@rank_zero_only`", HIGH),
                ("guard", "decorator", "`@rank_zero_only` runs the function on one rank", HIGH),
                _DEFAULT_GROUP,
                ("reach", "direct", "`dist.barrier()`", HIGH),
                _LIBRARY,
            ],
            id="rank-only-decorator",
        ),
        pytest.param(
            _MESH_AXIS,
            [
                ("source", "rank-query", "`is_main()`", HIGH),
                ("guard", "truth-test", "`is_main()`", HIGH),
                ("group", "mesh-axis", '`mesh.get_group("tp")` (axis tp)', HIGH),
                ("reach", "direct", "`dist.all_reduce()`", HIGH),
                _LIBRARY,
            ],
            id="mesh-axis",
        ),
        pytest.param(
            _EXPLICIT_RANKS,
            [
                ("source", "rank-query", "`dist.get_rank()`", HIGH),
                ("guard", "equality", "`dist.get_rank() == 0`", HIGH),
                ("group", "explicit-ranks", "`g`: global ranks 0, 1", HIGH),
                ("reach", "direct", "`dist.all_reduce()`", HIGH),
                _LIBRARY,
            ],
            id="explicit-ranks",
        ),
    ],
)
def test_divergence_evidence_names_every_link_with_its_detail(
    source: str, expected: list[tuple[str, str, str, Confidence]]
) -> None:
    finding = _one(source, ("RNK102", "RNK105"))

    assert finding.evidence is not None
    found = [
        (aspect, link.kind, link.detail, link.confidence)
        for aspect, link in finding.evidence.links()
    ]
    assert found == expected


def test_membership_guard_of_a_collective_on_a_known_group_is_medium() -> None:
    source = """\
import torch.distributed as dist

TRAINERS = [0, 1]


def publish(t):
    if dist.get_rank() in TRAINERS:
        dist.all_reduce(t)
"""
    assert _links(_one(source))["guard"] == ("membership", MEDIUM)


@pytest.mark.parametrize(
    ("call", "kind"),
    [
        ("self.log_dict(metrics, sync_dist=True)", "framework"),
        ("dist.all_reduce(metrics)", "direct"),
    ],
)
def test_reach_link_says_whether_a_framework_communicates_implicitly(call: str, kind: str) -> None:
    source = f"""\
import lightning.pytorch as pl
import torch.distributed as dist


class Model(pl.LightningModule):
    def validation_step(self, batch, batch_idx):
        metrics = {{"loss": 1.0}}
        if self.global_rank == 0:
            {call}
"""
    reach = _links(_one(source))["reach"]

    assert reach == (kind, HIGH)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("pkg\\tests\\test_sync.py", Link("test", "a test module", HIGH)),
        ("examples\\train.py", Link("script", "an example or script", HIGH)),
        ("pkg/sync.py", Link("library", "library code", HIGH)),
    ],
)
def test_context_link_reads_windows_and_posix_paths_alike(path: str, expected: Link) -> None:
    assert context_link(path) == expected


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (
            "pkg\\tests\\test_launch.py",
            Link("test", "a test module, which a launcher may run as its program", MEDIUM),
        ),
        ("pkg\\state.py", Link("library", "library code", HIGH)),
    ],
)
def test_entry_context_link_names_the_module_kind_and_why(path: str, expected: Link) -> None:
    assert entry_context_link(path) == expected


def test_group_text_link_quotes_the_group_it_knows_nothing_of() -> None:
    assert group_text_link("pg", None) == Link("unknown-members", "`pg`", LOW)
    assert group_text_link("self.tp_group", frozenset({"tp"})) == Link(
        "axis-from-name", "`self.tp_group` (axis tp, read from the name)", MEDIUM
    )


def test_source_returned_by_a_project_function_names_that_function() -> None:
    source = """\
import torch.distributed as dist


def leader():
    return dist.get_rank() == 0


def finish():
    if leader():
        dist.barrier()
"""
    finding = _one(source)

    assert finding.evidence is not None
    assert finding.evidence.source == Link(
        "rank-query", "`dist.get_rank()`, returned by `leader()`", HIGH
    )


def test_ordering_guard_is_recorded_from_the_rank_test() -> None:
    source = """\
import torch.distributed as dist


def finish(t):
    if dist.get_rank() < 2:
        dist.all_reduce(t)
"""
    assert _links(_one(source))["guard"] == ("ordering", HIGH)


@pytest.mark.parametrize(
    ("group", "axes", "expected"),
    [
        (
            "dist.group.WORLD",
            frozenset(),
            Link("default-group", "`dist.group.WORLD` (every rank)", HIGH),
        ),
        (
            "mpu.get_data_parallel_group()",
            frozenset({"dp"}),
            Link("axis-getter", "`mpu.get_data_parallel_group()` (axis dp)", HIGH),
        ),
        (
            'mesh["dp", "tp"]',
            frozenset({"tp", "dp"}),
            Link("mesh-axis", '`mesh["dp", "tp"]` (axis dp, tp)', HIGH),
        ),
    ],
)
def test_group_text_link_shows_the_group_and_its_sorted_axes(
    group: str, axes: frozenset[str], expected: Link
) -> None:
    assert group_text_link(group, axes) == expected


@pytest.mark.parametrize(
    ("count", "expected"),
    [
        (0, ""),
        (1, "1 finding of lower confidence not shown (`--confidence medium` or `low` shows them)."),
        (
            2,
            "2 findings of lower confidence not shown (`--confidence medium` or `low` shows them).",
        ),
    ],
)
def test_hidden_line_counts_the_findings_left_out_in_singular_or_plural(
    count: int, expected: str
) -> None:
    from ranklint.api import LintResult
    from ranklint.faces.run_summary import hidden

    assert hidden(LintResult(findings=[], below_confidence=count)) == expected


# -- reach through an argument, and framework calls that depend on the backend --

_SAVE = """\
import torch.distributed as dist


def save(model, state=None, *, gather=True):
    if state is None:
        state = gather_state(model)
    write(state)


def gather_state(model):
    dist.barrier()
    return {{}}


def write(state):
    pass


def finish(model, state):
    if dist.get_rank() == 0:
        save(model, {call})
"""


@pytest.mark.parametrize(
    ("call", "kind", "confidence"),
    [
        # The argument decides `state is None`, and the analysis cannot evaluate it.
        ("state", "conditional-chain", MEDIUM),
        ("state=state", "conditional-chain", MEDIUM),
        # Not passed: the default (None) takes the branch, which is certain.
        ("", "call-chain", HIGH),
        # A literal None is evaluated: the branch is taken.
        ("None", "call-chain", HIGH),
        # Another parameter passed: it decides nothing on the way.
        ("gather=flag", "call-chain", HIGH),
    ],
)
def test_chain_under_a_test_of_a_parameter_the_call_passes_is_medium(
    call: str, kind: str, confidence: Confidence
) -> None:
    finding = _one(_SAVE.format(call=call))

    assert finding.evidence is not None
    reach = finding.evidence.reach
    assert reach is not None
    assert (reach.kind, reach.confidence) == (kind, confidence)
    assert reach.detail.startswith("`save()` -> `gather_state()` -> `dist.barrier()`")
    if kind == "conditional-chain":
        assert reach.detail.endswith(
            ", only where a test of `state` lets it, which an argument passed on the way decides"
        )


def test_argument_test_two_calls_up_still_lowers_the_tier() -> None:
    source = """\
import torch.distributed as dist


def sync(flag):
    if flag:
        dist.barrier()


def middle(flag):
    sync(flag=True)


def outer(state):
    helper(state)


def helper(state):
    if state:
        middle(1)


def finish(state):
    if dist.get_rank() == 0:
        outer(state)
"""
    finding = _one(source)

    assert _links(finding)["reach"] == ("conditional-chain", MEDIUM)
    assert finding.evidence is not None
    assert finding.evidence.reach is not None
    assert "a test of `state` lets it" in finding.evidence.reach.detail


def test_rank_test_in_the_callee_is_no_argument_test() -> None:
    source = """\
import torch.distributed as dist


def sync(rank):
    if rank == 0:
        dist.barrier()


def finish():
    if dist.get_rank() == 0:
        sync(dist.get_rank())
"""
    reaches = {_links(finding)["reach"] for finding in findings_of(source, select=("RNK102",))}

    assert ("call-chain", HIGH) in reaches
    assert all(kind != "conditional-chain" for kind, _ in reaches)


@pytest.mark.parametrize(
    ("call", "kind", "confidence"),
    [
        ("accelerator.save_state(out)", "framework-backend", MEDIUM),
        ("trainer.save_model(out)", "framework-backend", MEDIUM),
        ("accelerator.gather(metrics)", "direct", HIGH),
    ],
)
def test_framework_call_collective_only_under_some_backends_is_medium(
    call: str, kind: str, confidence: Confidence
) -> None:
    source = f"""\
def finish(accelerator, trainer, out, metrics):
    if accelerator.is_main_process:
        {call}
"""
    finding = _one(source)

    assert _links(finding)["reach"] == (kind, confidence)
    assert finding.confidence is confidence


def test_backend_link_names_the_call_and_the_backends() -> None:
    finding = _one(
        "def finish(accelerator, out):\n"
        "    if accelerator.is_main_process:\n"
        "        accelerator.save_state(out)\n"
    )

    assert finding.evidence is not None
    assert finding.evidence.reach == Link(
        "framework-backend",
        "`accelerator.save_state()` communicates only under a sharding backend "
        "(DeepSpeed, FSDP), which the launch configuration picks",
        MEDIUM,
    )


@pytest.mark.parametrize(
    "shown",
    [
        "use_deepspeed = accelerator.state.deepspeed_plugin is not None",
        "plugin = FullyShardedDataParallelPlugin()",
        "zero3 = accelerator.distributed_type == DistributedType.DEEPSPEED",
        "args = TrainingArguments(out, deepspeed='ds.json')",
        "args = TrainingArguments(out, fsdp='full_shard')",
    ],
)
def test_backend_call_in_a_file_that_shows_a_sharding_backend_is_high(shown: str) -> None:
    finding = _one(
        f"def finish(accelerator, trainer, out):\n    {shown}\n"
        "    if accelerator.is_main_process:\n        trainer.save_model(out)\n"
    )

    assert finding.evidence is not None
    assert finding.evidence.reach == Link(
        "framework-backend",
        "`trainer.save_model()` communicates under DeepSpeed or FSDP, which this file "
        "configures or tests for",
        HIGH,
    )
    assert finding.confidence is HIGH


@pytest.mark.parametrize(
    "other",
    [
        "accelerator.distributed_type == DistributedType.DEEPSPEED",
        "args.deepspeed",
        "is_fsdp_enabled",
    ],
)
def test_backend_call_on_every_rank_where_its_backend_is_on_is_not_reported(other: str) -> None:
    source = (
        "def finish(accelerator, args, is_fsdp_enabled, out):\n"
        "    plugin = accelerator.state.deepspeed_plugin\n"
        f"    if {other} or accelerator.is_main_process:\n"
        "        accelerator.save_state(out)\n"
    )

    assert findings_of(source, select=("RNK102",)) == []


# -- RNK105's ranks argument -----------------------------------------------------


@pytest.mark.parametrize(
    ("ranks", "source_kind", "confidence"),
    [
        ("[dist.get_rank(), world - 1]", "rank-query", HIGH),
        ("[rank, world - 1]", "rank-name", MEDIUM),
    ],
)
def test_ranks_argument_finding_records_where_its_rank_comes_from(
    ranks: str, source_kind: str, confidence: Confidence
) -> None:
    source = f"""\
import torch.distributed as dist


def build(rank, world):
    return dist.new_group({ranks})
"""
    finding = _one(source, select=("RNK105",))

    assert finding.confidence is confidence
    assert finding.evidence is not None
    assert finding.evidence.links() == [
        ("source", finding.evidence.source),
        ("guard", Link("ranks-argument", f"`{ranks}` differs between the ranks", HIGH)),
        ("group", Link("default-group", "group creation runs on every rank of the job", HIGH)),
        ("reach", Link("direct", "`dist.new_group()`", HIGH)),
        ("context", Link("library", "library code", HIGH)),
    ]
    assert finding.evidence.source is not None
    assert finding.evidence.source.kind == source_kind


def test_test_in_a_callee_is_matched_only_against_the_arguments_of_its_own_call() -> None:
    # `inner` tests a module global that shares its name with `middle`'s
    # parameter; the call that passes `ready` does not decide `inner`'s test.
    source = """\
import torch.distributed as dist

ready = load()


def inner():
    if ready:
        dist.barrier()


def middle(ready):
    inner()


def finish(flag):
    if dist.get_rank() == 0:
        middle(flag)
"""
    assert _links(_one(source))["reach"] == ("call-chain", HIGH)


@pytest.mark.parametrize(
    ("test", "call", "kind", "confidence"),
    [
        # Each operand of an `and`/`or` is a test the argument may decide.
        ("state is None or refresh", "save(model, 1, state)", "conditional-chain", MEDIUM),
        ("other and refresh", "save(model, 1, refresh=flag)", "conditional-chain", MEDIUM),
        # Beside an operand that may depend on the rank, the others are assumed.
        ("READY and refresh", "save(model, 1, refresh=flag)", "conditional-chain", MEDIUM),
        # A literal for one operand leaves the test to the other, which no argument
        # passed here decides.
        ("full and other", "save(model, full=True)", "call-chain", HIGH),
        # A rank-named parameter is still a parameter whose argument decides.
        ("is_main", "save(model, 1, is_main=flag)", "conditional-chain", MEDIUM),
        # `*args` may pass any parameter.
        ("state is None", "save(model, *extra)", "conditional-chain", MEDIUM),
    ],
)
def test_operands_of_a_compound_test_and_unpacked_arguments_decide_the_reach(
    test: str, call: str, kind: str, confidence: Confidence
) -> None:
    source = f"""\
import torch.distributed as dist

READY = load()


def save(model, other, state=None, refresh=False, full=False, is_main=False):
    if {test}:
        dist.barrier()


def finish(model, state, flag, extra):
    if dist.get_rank() == 0:
        {call}
"""
    finding = next(
        finding
        for finding in findings_of(source, select=("RNK102",))
        if finding.evidence is not None
        and finding.evidence.reach is not None
        and finding.evidence.reach.detail.startswith("`save()`")
    )

    assert _links(finding)["reach"] == (kind, confidence)


# -- a framework's group reached by one global rank alone -----------------------------------


@pytest.mark.parametrize(
    "guard",
    ["if dist.get_rank() == 0:", "if dist.get_rank() != 2:\n        return\n    if True:"],
)
def test_framework_group_reached_by_one_global_rank_alone_is_high(guard: str) -> None:
    finding = _one(
        f"import torch.distributed as dist\n\n\ndef f(dt):\n    {guard}\n        dt.full_tensor()\n"
    )

    assert _links(finding)["group"] == ("framework-group", HIGH)
    assert finding.evidence is not None
    assert "global rank" in finding.evidence.group.detail


@pytest.mark.parametrize(
    "guard",
    [
        "if dist.get_rank() != 0:",
        "if dist.get_rank() > 0:",
        "if dist.get_rank() in ranks:",
        "if dist.get_rank() == 0:\n        return\n    if True:",
    ],
)
def test_framework_group_reached_by_several_ranks_is_not_reported(guard: str) -> None:
    source = (
        "import torch.distributed as dist\n\n\n"
        f"def f(dt, ranks):\n    {guard}\n        dt.full_tensor()\n"
    )

    assert findings_of(source, select=("RNK102",)) == []
