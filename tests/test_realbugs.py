"""The real-bug set: re-created public reports, each a buggy/fixed pair in tests/realbugs.

Every ``fixed.py`` must be free of the codes its bug is reported with (and of
RNK102/RNK104/RNK105): a correct program is not flagged. Every ``buggy.py``
must be reported on the line its ``# expect:`` marker names, except the
cases listed in ``NOT_FOUND_YET`` with the reason, which are expected to
fail (strictly: a case that starts passing must be removed from the list).
``python bench/realbugs.py`` prints the whole table and the recall.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "bench"))
from realbugs import cases, check

_RNK110 = "RNK110 group-local-root (a group-local rank passed as a global root) is not built yet"
_RNK111 = "RNK111 (distributed state captured at import) is not built yet"
_RNK112 = "RNK112 (reduction semantics: sum versus mean) is not built yet"
_PROPERTY = "a framework property that synchronises (`trainer.log_dir`, `callback_metrics`)"
# case -> why ranklint does not report it yet.
NOT_FOUND_YET: dict[str, str] = {
    "a03_lightning_metrics_dict_only_rank0": (
        "`log_dict(..., sync_dist=True)` issues one collective per key; a dict whose keys "
        "differ per rank is not followed yet"
    ),
    "a04_lightning_log_dict_data_dependent_keys": (
        "keys built from data (`y.unique()`) differ per rank: data values are not rank-dependent"
    ),
    "a05_sglang_writing_check_early_return": (
        "the early return depends on rank-local state (`self.ongoing_write_through`) "
        "that no rank-dependent assignment shows"
    ),
    "a06_sglang_prefetch_membership_early_return": (
        "the early return depends on rank-local state (`self.ongoing_prefetch`)"
    ),
    "a07_empty_metrics_skip_all_gather_object": (
        "the early return depends on the contents of an argument (`local_metrics`)"
    ),
    "a08_nemo_automodel_per_rank_continue": (
        "an exception raised on some ranks skips DDP's implicit all-reduce in `backward()`; "
        "implicit collectives of wrapped models are not modelled yet"
    ),
    "a10_unsloth_collective_behind_isfile": (
        "file-system state (`os.path.isfile`) may differ per rank; not treated as rank-dependent"
    ),
    "a16_draco_lazy_seed_broadcast": (
        "a property that broadcasts on first use, reached after a data-dependent `continue`"
    ),
    "a17_fsdp_generate_without_synced_gpus": (
        "FSDP `generate` all-gathers once per generated token: the count is data-dependent"
    ),
    "c01_torchrec_broadcast_object_list_group_rank_as_src": _RNK110,
    "c02_art_cp_scan_group_local_src": _RNK110,
    "c03_sglang_src0_tp_cpu_group": _RNK110,
    "c04_fastmoe_dp_broadcast_src0": _RNK110,
    "c05_fsdp_optim_state_dict_src0_subgroup": _RNK110,
    "c06_vllm_gather_dst_local_rank": _RNK110,
    "c07_dcp_coordinator_rank_with_process_group": _RNK110,
    "c08_dist_nn_broadcast_rank_compare": _RNK110,
    "d03_transformers_sharded_state_dict_rank0": (
        "`state_dict()` of a model wrapped elsewhere (ZeRO-3 / FSDP) is an implicit collective; "
        "wrapped models are not tracked yet"
    ),
    "d04_lightning_log_dir_in_rank_zero_only": _PROPERTY,
    "d05_sleap_callback_metrics_under_global_zero": _PROPERTY,
    "e01_apex_amp_state_distributed_at_import": _RNK111,
    "e02_lightning_rank_zero_only_global_spawn": _RNK111,
    "e03_torchtune_log_rank_zero_before_init": _RNK111,
    "e04_sleap_get_rank_before_init_cache": _RNK111,
    "f01_hrnet_sum_logged_as_average": _RNK112,
    "f02_lightning_metric_already_summed": _RNK112,
    "f03_torchtune_scale_grads_world_size": _RNK112,
    "f04_speculators_aliased_metric_double_reduce": _RNK112,
    "f05_sparseml_loss_times_world_size": _RNK112,
    "f06_lightly_non_autograd_all_reduce_in_loss": _RNK112,
    "f07_transformers_aux_loss_times_world_size": _RNK112,
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
    results = [check(case) for case in CASES]

    assert len(results) >= 25
    assert all(r.report.startswith("https://") for r in results)
    assert all(r.expected for r in results)
    assert set(NOT_FOUND_YET) <= {case.name for case in CASES}


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_fixed_version_has_no_finding_of_its_bug(case: Path) -> None:
    result = check(case)

    assert result.false_alarms == []


@pytest.mark.parametrize("case", _buggy_params())
def test_buggy_version_is_reported_on_the_marked_line(case: Path) -> None:
    result = check(case)

    assert result.found == result.expected
