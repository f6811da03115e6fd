"""The real-bug set: re-created public reports, each a buggy/fixed pair in tests/realbugs.

The set is split into a tuning half and a test half (``realbugs.half``, seeded).
The cases of the test half that ranklint misses are listed with one reason,
``_TEST_HALF``: they were measured once and not read to tune the analysis
(docs/dev/realbugs.md); the tuning half's misses each say why.

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
from realbugs import cases, check, half

_LAYOUT = (
    "`src=0` with a subgroup is wrong only when the layout leaves global rank 0 out of the "
    "group, which the code does not show (RNK109, opt-in, reviews such roots)"
)
# case -> why ranklint does not report it yet.
_TEST_HALF = (
    "test half: missed when measured, and not read to tune the analysis (docs/dev/realbugs.md)"
)
_NAME_ONLY = "found at medium: the rank is a parameter named `rank`, a rank by its name only"
_OWN_GROUP_RANKS = (
    "the ranks list is built from this rank's own group (its TP/DP/PP peers, read from the "
    "group or computed from the rank inside a helper or class): not followed as rank-dependent"
)
_RE_REDUCED = (
    "running totals that an earlier call reduced are reduced again: the value carried "
    "across calls (or loop iterations) is not followed"
)
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
    # Tuning half, written for issue 36.
    "a20_transformers_run_glue_eval_barrier_rank0": (
        "reported on the barrier inside the helper and the `local_rank` tests, not on the "
        "`evaluate()` call the report marks (the chain goes through `load_and_cache_examples`)"
    ),
    "a22_mmdet_fcos_reduce_mean_under_pos_inds": (
        "`len(pos_inds)` counts a `nonzero()` of this rank's targets: the size of a "
        "data-dependent tensor op is not treated as per-rank data"
    ),
    "a24_shampoo_skip_step_without_grads": (
        "the `continue` tests a dict entry filled from this rank's gradients, and the step is "
        "called through an attribute bound to a function: neither is followed"
    ),
    "a27_valle_dataloader_exhausted_rank_breaks_loop": (
        "DDP's all-reduce in `backward()` is implicit and the loop ends on this rank's own "
        "`StopIteration`: neither is modelled"
    ),
    "a33_kempnerforge_load_branch_on_per_rank_exists": (
        "`path.exists()` on a shared file system can differ between ranks; only paths the "
        "function writes on some ranks are treated as rank-dependent"
    ),
    "b32_sglang_hicache_new_group_own_tp_ranks": _OWN_GROUP_RANKS,
    "b34_lightllm_dp_group_from_own_rank": _OWN_GROUP_RANKS,
    "b62_megatron_bridge_mimo_embedding_groups_own_pp": _OWN_GROUP_RANKS,
    "c53_lightllm_node_group_broadcast_src0": _LAYOUT,
    "e51_veomni_collator_default_arg_parallel_state": (
        "a default argument evaluated at import calls a function that reads the parallel "
        "state: import-time reads are followed into calls only at module level"
    ),
    "f61_swift_infonce_gathered_loss_divided_by_world_size": (
        "a loss over a batch gathered from every rank, divided by the world size: gathered "
        "batches are not told apart from local ones"
    ),
    "f62_allennlp_rouge_global_sums_over_local_count": (
        "sums all-reduced over ranks divided by a local count in another method: the count's "
        "locality is not followed across methods"
    ),
    "f80_fairchem_running_totals_reduced_every_batch": _RE_REDUCED,
    "f83_miles_diffusion_mean_of_rank_means_and_max": (
        "a mean of per-rank means computed in Python over `gather_object` results: gathered "
        "objects are not followed into arithmetic"
    ),
    # Tuning half, written in the second round for issue 36.
    "b90_param_comm_replay_groups_from_own_trace": (
        "each rank's group lists come from its own trace file, stored in another object's "
        "`commsParams.groupRanks` and read back in another class: per-rank data kept in "
        "object state across classes is not followed"
    ),
    "c90_olmo_hybrid_shard_reduce_dst0": (
        "the group is a parameter that defaults to the world group (None); that callers pass "
        "FSDP's hybrid-shard group, which global rank 0 is not in everywhere, is not in view"
    ),
    "d91_rtdetr_empty_gt_rank_skips_denoising_embed": (
        "an early `return None` on this rank's empty targets skips a module whose parameters "
        "DDP's implicit all-reduce in `backward()` waits for: not modelled"
    ),
    "a94_alpaca_rlhf_reward_eval_under_global_rank0": (
        "the evaluation all-reduces through `get_all_reduce_mean`, imported from the project's "
        "utils module, which a one-file run does not see"
    ),
    "b91_etha_broadcast_groups_first_touch_per_direction": (
        "groups created on first use per direction, in an order that depends on which side "
        "of the pair a rank is: the order of lazy creations is not compared between ranks"
    ),
    "c93_nvalchemi_controller_broadcast_src0_domain_group": (
        "`src = 0` on `self._strategy.process_group`, a group no axis name tells a subgroup "
        "(RNK109 reports integer roots on groups along a parallel axis only)"
    ),
    "d92_pytext_best_epoch_counter_rank0_extra_ddp_epoch": (
        "rank 0 alone resets an early-stop counter kept in a state object, and the model's DDP "
        "forward and backward in the next epoch are implicit collectives: neither is followed"
    ),
    "d93_flagperf_longformer_local_acc_ends_training_on_some_ranks": (
        "a rank-local accuracy ends the training loop through a status object set in another "
        "method, and the collectives left waiting are DDP's implicit ones: not modelled"
    ),
    "f91_fairchem_force_loss_mean_of_replica_means": (
        "a per-replica mean loss that DDP's gradient averaging weighs equally: the implicit "
        "reduction of DDP is not read as a mean of means"
    ),
}
NOT_FOUND_YET |= {
    name: _TEST_HALF
    for name in (
        "a25_deepforest_metric_compute_gated_on_local_labels",
        "a28_pytorch_fsdp_save_branch_on_reduced_loss",
        "a29_tao_oneformer_log_loop_over_local_dataloaders",
        "a62_megatron_bridge_param_norm_sharded_allreduce_if_nonempty",
        "b33_transformer_engine_ub_intra_node_group_own_node",
        "b80_pytorch_broadcast_on_group_without_caller",
        "c50_flashinfer_bcast_group_local_root",
        "c51_rtp_llm_cpp_broadcast_group_local_root",
        "c52_tokenspeed_broadcast_pyobj_tp_local_rank",
        "c54_vllm_omni_tensor_dict_global_src_to_local_api",
        "d32_open_clip_val_forward_through_ddp_on_master",
        "d51_starvla_zero3_get_state_dict_main_process",
        "d53_centergroup_self_log_under_global_rank0",
        "d61_lightning_spawn_state_dict_metrics_rank0",
        "e33_torchtune_world_size_rank_before_init_from_env",
        "e50_olmo_logging_setup_before_init",
        "e52_colossalai_dist_logger_module_level",
        "f33_pyg_train_acc_all_reduced_three_times",
        "f81_ignite_sync_all_reduce_overwrites_state",
        "f82_miles_rank_max_min_metrics_averaged",
        "f84_neuralforecast_val_loss_mean_of_rank_means",
        "a90_simpletuner_lora_save_hook_wait_for_everyone_main_only",
        "a91_speechbrain_tokenizer_run_on_main_behind_isfile",
        "a92_sparsify_indivisible_dataset_shard_uneven_loop",
        "c91_pytorch_chunk_sharding_scatter_group_src",
        "d90_prime_rl_sft_eval_fsdp_forward_uneven_batches",
        "f90_hydragnn_local_loss_over_global_dataset_len",
        "a93_speechbrain_intra_epoch_ckpt_time_decision_main_only",
        "a95_ms_swift_master_only_meta_model_load_safe_ddp_barrier",
        "c92_veomni_fp32_master_broadcast_dp_local_src",
    )
}
# case -> why it is found only below the default tier (`--confidence medium` or low).
FOUND_BELOW_DEFAULT: dict[str, str] = {
    # Test half: measured after the rank-test round (the guard's `global_rank == 0`
    # is a parameter, a rank by its name only: medium).
    "a26_bergson_save_moments_gated_on_rank0": _TEST_HALF,
    "a60_particleflow_validation_barrier_under_rank0": _NAME_ONLY,
    "a61_bergson_one_shot_score_saver_barrier_rank0": _NAME_ONLY,
    "a63_particleflow_epoch_test_run_under_rank0": _NAME_ONLY,
    # Issue 36, fourth session: an exit under a rank test reaches past the test's
    # own block (analysis.project.sequences.Tail); a64 tuning, a32 test half (found
    # when measured; its guard also tests a `rank` parameter, per docs/dev/realbugs.md).
    "a64_particleflow_rank0_patience_return_skips_barrier": _NAME_ONLY,
    "a32_vlmevalkit_rank0_continue_skips_loop_end_barrier": _TEST_HALF,
    "d80_train_llm_final_eval_ddp_forward_rank0": (
        "found at medium: `ctx.is_main` is a property of a context object whose `rank` the "
        "constructor is passed in another function, read as a rank by its name only"
    ),
    "b20_composer_syncbn_group_for_own_node_only": _TEST_HALF,
    "d50_diffusers_save_state_main_process_deepspeed": _TEST_HALF,
    "d52_strix_halo_fsdp_save_model_is_main": _TEST_HALF,
}
# case -> why the buggy version has findings besides the marked ones: at low
# confidence, or in every tier.
MORE_AT_LOW: dict[str, str] = {
    "a80_oscar_vqa_logging_barrier_rank0_only": _TEST_HALF,
    "a92_sparsify_indivisible_dataset_shard_uneven_loop": _TEST_HALF,
}
MORE_FOUND: dict[str, str] = {
    "e32_star_attention_rank_world_size_module_globals": _TEST_HALF,
    "f60_allennlp_accuracy_running_totals_reduced_every_call": (
        "the report marks the first of its two running totals; the second "
        "(`_total_count`, the next line) is re-summed the same way"
    ),
}
# case -> why its fixed version still has a finding of its bug's codes.
FIXED_FLAGGED: dict[str, str] = {
    "a20_transformers_run_glue_eval_barrier_rank0": (
        "the fix moves the barrier; the helper's `local_rank not in [-1, 0]` barrier pair "
        "still reads as rank-dependent through the call"
    ),
    "a61_bergson_one_shot_score_saver_barrier_rank0": (
        "the fixed writer still calls the barrier-holding helper under a test of the "
        "parameter `global_rank` (medium, a rank by its name)"
    ),
    "a80_oscar_vqa_logging_barrier_rank0_only": _TEST_HALF,
    "a92_sparsify_indivisible_dataset_shard_uneven_loop": _TEST_HALF,
    "b81_pytorch_col_group_only_own_column": (
        "RNK104 on `src=col_ranks[0]`-style roots computed from the rank's own column: the "
        "root is the group's first member, which the rule cannot tell from the caller's rank"
    ),
    "e32_star_attention_rank_world_size_module_globals": (
        "test half; the project's fix keeps the module-level rank read behind an error when "
        "no process group exists, which RNK111 still reports (the report's own note)"
    ),
}
CASES = cases()


def _xfail(reason: str | None) -> list[pytest.MarkDecorator]:
    return [] if reason is None else [pytest.mark.xfail(reason=reason, strict=True)]


def _buggy_params() -> list[object]:
    """Each case at each confidence, expected to fail where a list says why."""
    params = []
    for case in CASES:
        name = case.name
        for confidence in (Confidence.HIGH, Confidence.LOW):
            reason = NOT_FOUND_YET.get(name) or MORE_FOUND.get(name)
            if confidence is Confidence.HIGH:
                reason = reason or FOUND_BELOW_DEFAULT.get(name)
            else:
                reason = reason or MORE_AT_LOW.get(name)
            params.append(
                pytest.param(
                    case, confidence, id=f"{confidence.value}-{name}", marks=_xfail(reason)
                )
            )
    return params


def test_real_bug_set_holds_enough_cited_cases() -> None:
    results = [check(case, confidence=Confidence.LOW) for case in CASES]

    assert len(results) >= 25
    assert all(r.report.startswith("https://") for r in results)
    assert all(r.expected for r in results)
    names = {case.name for case in CASES}
    for listed in (NOT_FOUND_YET, FOUND_BELOW_DEFAULT, MORE_AT_LOW, MORE_FOUND, FIXED_FLAGGED):
        assert set(listed) <= names


def test_real_bug_set_has_two_halves_of_at_least_forty_cases_each() -> None:
    halves = [half(case.name) for case in CASES]

    assert len(CASES) >= 100
    assert min(halves.count("tuning"), halves.count("test")) >= 40


def test_test_half_misses_are_listed_only_as_test_half_misses() -> None:
    """A test-half case is never given a tuning reason: its misses were not read."""
    for listed in (NOT_FOUND_YET, FOUND_BELOW_DEFAULT, MORE_AT_LOW, MORE_FOUND):
        for name, reason in listed.items():
            if int(name[1:3]) >= 20 and half(name) == "test":
                assert reason == _TEST_HALF, name


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(case, id=case.name, marks=_xfail(FIXED_FLAGGED.get(case.name)))
        for case in CASES
    ],
)
def test_fixed_version_has_no_finding_of_its_bug_at_any_confidence(case: Path) -> None:
    result = check(case, confidence=Confidence.LOW)

    assert result.false_alarms == []


@pytest.mark.parametrize(("case", "confidence"), _buggy_params())
def test_buggy_version_is_reported_on_the_marked_line_in_its_tier(
    case: Path, confidence: Confidence
) -> None:
    """A marker without a tier is a finding of the default run; one marked
    `(medium)` is reported only when lower tiers are asked for."""
    result = check(case, confidence=confidence)

    assert result.found == result.expected


@pytest.mark.parametrize(
    "case",
    [case for case in CASES if case.name not in NOT_FOUND_YET | FOUND_BELOW_DEFAULT | MORE_FOUND],
    ids=lambda case: case.name,
)
def test_default_run_reports_the_cases_whose_rule_and_tier_are_default(case: Path) -> None:
    """Opt-in rules (RNK110, RNK111) and medium findings are left out of the
    default run; every other marked finding is in it."""
    result = check(case, default_rules=True)

    assert result.found == result.expected
