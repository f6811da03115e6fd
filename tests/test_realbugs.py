"""The real-bug set: re-created public reports, each a buggy/fixed pair in tests/realbugs.

Every ``fixed.py`` must be free of the codes its bug is reported with (and of
RNK102/RNK104/RNK105): a correct program is not flagged. Every ``buggy.py``
must be reported on the line its ``# expect:`` marker names, except the
cases listed in ``NOT_FOUND_YET`` with the reason, which are expected to
fail (strictly: a case that starts passing must be removed from the list).
``python bench/recall/realbugs.py`` prints the whole table and the recall.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ranklint.findings import Confidence
from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "bench" / "recall"))
from realbugs import cases, check

_LAYOUT = (
    "`src=0` with a subgroup is wrong only when the layout leaves global rank 0 out of the "
    "group, which the code does not show (RNK109, opt-in, reviews such roots)"
)
# case -> why ranklint does not report it yet.
NOT_FOUND_YET: dict[str, str] = {
    "a05_sglang_writing_check_early_return": (
        "the early return depends on rank-local state (`self.ongoing_write_through`) "
        "that no rank-dependent assignment shows"
    ),
    "a06_sglang_prefetch_membership_early_return": (
        "the early return depends on rank-local state (`self.ongoing_prefetch`)"
    ),
    "a08_nemo_automodel_per_rank_continue": (
        "an exception raised on some ranks skips DDP's implicit all-reduce in `backward()`; "
        "implicit collectives of wrapped models are not modelled yet"
    ),
    "a16_draco_lazy_seed_broadcast": (
        "a property that broadcasts on first use, reached after a data-dependent `continue`"
    ),
    "a17_fsdp_generate_without_synced_gpus": (
        "FSDP `generate` all-gathers once per generated token: the count is data-dependent"
    ),
    "c03_sglang_src0_tp_cpu_group": _LAYOUT,
    "c04_fastmoe_dp_broadcast_src0": _LAYOUT,
    "d03_transformers_sharded_state_dict_rank0": (
        "`state_dict()` of `self.model`, wrapped (ZeRO-3 / FSDP) in code the case does not "
        "show; wrappers are tracked only where a local is wrapped in view"
    ),
}
CASES = cases()


def _buggy_params() -> list[object]:
    return [
        pytest.param(
            case,
            id=case.name,
            marks=[pytest.mark.xfail(reason=NOT_FOUND_YET[case.name], strict=True)]
            if case.name in NOT_FOUND_YET
            else [],
        )
        for case in CASES
    ]


def test_real_bug_set_holds_enough_cited_cases() -> None:
    results = [check(case, confidence=Confidence.LOW) for case in CASES]

    assert len(results) >= 25
    assert all(r.report.startswith("https://") for r in results)
    assert all(r.expected for r in results)
    assert set(NOT_FOUND_YET) <= {case.name for case in CASES}


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_fixed_version_has_no_finding_of_its_bug_at_any_confidence(case: Path) -> None:
    result = check(case, confidence=Confidence.LOW)

    assert result.false_alarms == []


@pytest.mark.parametrize("case", _buggy_params())
@pytest.mark.parametrize("confidence", [Confidence.HIGH, Confidence.LOW], ids=lambda c: c.value)
def test_buggy_version_is_reported_on_the_marked_line_in_its_tier(
    case: Path, confidence: Confidence
) -> None:
    """A marker without a tier is a finding of the default run; one marked
    `(medium)` is reported only when lower tiers are asked for."""
    result = check(case, confidence=confidence)

    assert result.found == result.expected


@pytest.mark.parametrize(
    "case", [case for case in CASES if case.name not in NOT_FOUND_YET], ids=lambda case: case.name
)
def test_default_run_reports_the_cases_whose_rule_and_tier_are_default(case: Path) -> None:
    """Opt-in rules (RNK110, RNK111) and medium findings are left out of the
    default run; every other marked finding is in it."""
    result = check(case, default_rules=True)

    assert result.found == result.expected
