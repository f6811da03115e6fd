"""Evidence for each implicit-collective row of the catalog: a test that runs it, or a citation.

``CONFIRMED`` maps a catalog row (:func:`row_key`) to the tests that run the
API on two threaded ranks and assert the collectives it issues
(``test_catalog_confirmed.py``, ``test_catalog_confirmed_fsdp.py``).
``CITED`` holds what cannot run here (DeepSpeed, accelerate, Lightning, Hugging
Face, Megatron are not installed; ``async_save`` needs a CPU backend the
threaded group does not register): the library source lines that issue the
collective. Entries with ``in_catalog=False`` are APIs the catalog does not
list yet, kept here as evidence for a decision.
``test_catalog_coverage.py`` checks that every row of the families below has
one or the other, so a new row comes with its evidence.
"""

from __future__ import annotations

from dataclasses import dataclass

from ranklint.analysis.walk import catalog
from ranklint.analysis.walk.catalog import CallSpec


def row_key(spec: CallSpec) -> str:
    """A catalog row's identity: its first qualified name, else its name (method rows)."""
    return spec.qualified_names[0] if spec.qualified_names else spec.name


def implicit_rows() -> list[CallSpec]:
    """The rows whose collective a caller does not spell: the families this evidence covers."""
    objects = [spec for spec in catalog._TORCH_COLLECTIVES if spec.short.endswith(_OBJECT)]
    return [
        *objects,
        *catalog._DTENSOR,
        *catalog._CHECKPOINTING,
        *catalog._WRAPPERS,
        *catalog._METRICS,
        *catalog.PROPERTY_COLLECTIVES.values(),
    ]


_OBJECT = ("_object", "_object_list")

_FILE = "test_catalog_confirmed.py"
_FSDP = "test_catalog_confirmed_fsdp.py"

CONFIRMED: dict[str, tuple[str, ...]] = {
    **{
        f"torch.distributed.{name}": (
            f"{_FILE}::test_object_collective_on_every_rank_issues_size_then_payload_collectives",
        )
        for name in (
            "broadcast_object_list",
            "all_gather_object",
            "gather_object",
            "scatter_object_list",
        )
    },
    "torch.distributed.tensor.distribute_tensor": (
        f"{_FILE}::test_distribute_tensor_from_rank_zero_issues_scatter_or_broadcast",
        f"{_FILE}::test_distribute_tensor_without_source_rank_issues_none",
    ),
    "DTensor.full_tensor": (
        f"{_FILE}::test_full_tensor_gathers_a_shard_reduces_a_partial_and_leaves_a_replica",
    ),
    "DTensor.redistribute": (
        f"{_FILE}::test_redistribute_issues_a_collective_unless_the_placement_stays",
    ),
    "torch.nn.utils.clip_grad_norm_": (
        f"{_FSDP}::test_torch_clip_grad_norm_function_on_fsdp2_dtensor_grads_all_reduces",
        f"{_FSDP}::test_torch_clip_grad_norm_function_on_fsdp1_flat_parameters_issues_none",
    ),
    "torch.distributed.tensor.DTensor.from_local": (
        f"{_FILE}::test_from_local_checks_the_local_tensors_only_with_run_check",
    ),
    "torch.distributed.tensor.distribute_module": (
        f"{_FILE}::test_distribute_module_broadcasts_each_parameter_from_rank_zero",
    ),
    "torch.distributed.tensor.parallel.parallelize_module": (
        f"{_FILE}::test_parallelize_module_distributes_parameters_unless_no_source_rank",
    ),
    **{
        f"torch.distributed.checkpoint.{name}": (
            f"{_FILE}::test_dcp_save_of_a_plain_state_dict_plans_and_commits_with_collectives",
            f"{_FILE}::test_dcp_save_with_no_dist_issues_none",
        )
        for name in ("save", "save_state_dict")
    },
    **{
        f"torch.distributed.checkpoint.{name}": (
            f"{_FILE}::test_dcp_load_issues_plan_collectives_on_every_rank",
        )
        for name in ("load", "load_state_dict")
    },
    **{
        f"torch.distributed.checkpoint.state_dict.{name}": (
            f"{_FILE}::test_state_dict_function_on_an_unsharded_module_issues_none",
            f"{_FILE}::test_state_dict_function_on_fsdp2_with_default_sharded_options_issues_none",
            f"{_FILE}::test_state_dict_function_on_fsdp2_with_full_state_dict"
            "_gathers_or_scatters_each_tensor",
        )
        for name in catalog.STATE_DICT_FUNCTIONS
    },
    "torch.distributed.fsdp.FullyShardedDataParallel.full_optim_state_dict": (
        f"{_FSDP}::test_fsdp1_full_optim_state_dict_gathers_on_every_rank",
    ),
    "torch.distributed.fsdp.FullyShardedDataParallel.optim_state_dict": (
        f"{_FSDP}::test_fsdp1_optim_state_dict_gathers_with_or_without_rank0_only",
    ),
    "torch.distributed.fsdp.FullyShardedDataParallel.sharded_optim_state_dict": (
        f"{_FSDP}::test_fsdp1_sharded_optim_state_dict_gathers_like_the_full_one",
    ),
    "torch.distributed.fsdp.FullyShardedDataParallel.load_state_dict": (
        f"{_FSDP}::test_fsdp1_load_state_dict_all_gathers_to_write_the_full_parameters",
    ),
    "torch.distributed.fsdp.FSDPModule.unshard": (
        f"{_FSDP}::test_fsdp2_unshard_all_gathers_and_reshard_issues_none",
    ),
    "torch.distributed.fsdp.FullyShardedDataParallel.scatter_full_optim_state_dict": (
        f"{_FSDP}::test_fsdp1_scatter_full_optim_state_dict_broadcasts_from_rank_zero",
    ),
    "torch.distributed.fsdp.FullyShardedDataParallel.optim_state_dict_to_load": (
        f"{_FSDP}::test_fsdp1_optim_state_dict_to_load_with_rank0_only_broadcasts_rank_zeros_state",
        f"{_FSDP}::test_fsdp1_optim_state_dict_to_load_without_rank0_only_issues_none",
    ),
    **{
        f"torch.distributed.fsdp.FullyShardedDataParallel.{method}": (
            f"{_FSDP}::test_fsdp1_forward_all_gathers_the_flat_parameter",
        )
        for method in ("__call__", "forward")
    },
    "torch.distributed.fsdp.FullyShardedDataParallel.generate": (
        f"{_FSDP}::test_fsdp1_generate_of_auto_wrapped_layers_all_gathers_each_layer",
    ),
    "torch.distributed.fsdp.FullyShardedDataParallel.state_dict": (
        f"{_FSDP}::test_fsdp1_state_dict_issues_collectives_in_every_state_dict_type",
    ),
    **{
        f"torch.distributed.fsdp.FSDPModule.{method}": (
            f"{_FSDP}::test_fsdp2_forward_and_generate_all_gather_each_sharded_layer",
        )
        for method in ("__call__", "forward", "generate")
    },
    "torch.nn.parallel.DistributedDataParallel": (
        f"{_FSDP}::test_ddp_construction_verifies_shapes_and_broadcasts_module_states",
    ),
    **{
        f"torch.nn.parallel.DistributedDataParallel.{method}": (
            f"{_FSDP}::test_ddp_forward_of_a_model_with_buffers_broadcasts_them",
            f"{_FSDP}::test_ddp_forward_without_buffers_to_broadcast_issues_none",
        )
        for method in ("__call__", "forward")
    },
    "torch.distributed.fsdp.FullyShardedDataParallel.summon_full_params": (
        f"{_FSDP}::test_fsdp1_summon_full_params_all_gathers_even_for_rank0_only",
    ),
    "torch.distributed.fsdp.FullyShardedDataParallel.clip_grad_norm_": (
        f"{_FSDP}::test_fsdp1_clip_grad_norm_method_all_reduces_the_norm",
    ),
}


@dataclass(frozen=True)
class Source:
    """Lines of a library's source: ``repo`` at ``commit`` (or a released version)."""

    repo: str
    commit: str
    path: str
    lines: str
    what: str


@dataclass(frozen=True)
class Citation:
    """Why a row is a collective, read in the source of a library that cannot run here."""

    issues: str
    why_not_run: str
    sources: tuple[Source, ...]
    in_catalog: bool = True


_DS = ("microsoft/DeepSpeed", "38327e07f6cd39b63418f60cedd1651b0be3e7c3")
_ACC = ("huggingface/accelerate", "16cb6eb80dd9aa8b4df1a63ef57863e455d53b83")
_PL = ("Lightning-AI/pytorch-lightning", "7f0c3436cd3f6ad3753125672024fc415cbcb414")
_MEG = ("NVIDIA/Megatron-LM", "d98e8a64ddf34856e74b24714e3bedb2f5a39553")
_HF = ("huggingface/transformers", "release 5.25.0 (PyPI wheel)")
_TORCH = ("pytorch/pytorch", "release 2.13.0 (installed wheel)")
_TM = ("Lightning-AI/torchmetrics", "release 1.9.0 (PyPI wheel)")

_OPS = "src/accelerate/utils/operations.py"
_ACCELERATOR = "src/accelerate/accelerator.py"
_NOT_INSTALLED = "{} is not installed here (and needs several devices)"
_ZERO3_FORWARD = (
    Source(
        *_DS,
        "deepspeed/runtime/zero/parameter_offload.py",
        "445, 457-467",
        "a forward pre-hook on every submodule fetches its parameters",
    ),
    Source(
        *_DS,
        "deepspeed/runtime/zero/partitioned_param_coordinator.py",
        "285-314, 460-500",
        "fetch_sub_module -> __all_gather_params -> all_gather_coalesced",
    ),
    Source(
        *_DS,
        "deepspeed/runtime/zero/partition_parameters.py",
        "94-95, 1188, 1200, 1320",
        "all_gather_coalesced -> dist.allgather_fn on the parameter's group",
    ),
)
_LIGHTNING_BARRIER = Source(
    *_PL, "src/lightning/pytorch/strategies/ddp.py", "308-315", "torch.distributed.barrier()"
)
_LIGHTNING_BROADCAST = Source(
    *_PL, "src/lightning/pytorch/strategies/ddp.py", "318-323", "broadcast_object_list on WORLD"
)


def _accelerate(lines: str, what: str) -> Citation:
    return Citation(what, _NOT_INSTALLED.format("accelerate"), (Source(*_ACC, _OPS, lines, what),))


def _accelerator(method_lines: str, what: str, helper: Source) -> Citation:
    return Citation(
        "what the accelerate.utils function it calls issues",
        _NOT_INSTALLED.format("accelerate"),
        (Source(*_ACC, _ACCELERATOR, method_lines, what), helper),
    )


_GATHER = Source(*_ACC, _OPS, "322-355, 425-439", "all_gather_into_tensor (all_gather on gloo)")
_REDUCE = Source(*_ACC, _OPS, "846-879", "all_reduce")
_PAD = Source(*_ACC, _OPS, "750-781", "gathers every rank's size first")

CITED: dict[str, Citation] = {
    # torchmetrics is no dependency of ranklint's tests. Run once by hand, with the
    # 1.9.0 wheel on 2 threaded ranks (`ranklint.runtime.run_ranks`): `compute()` of
    # a `BinaryAccuracy`, or of a `MetricCollection`, on rank 0 alone diverges at
    # the barrier of `gather_all_tensors`; with `sync_on_compute=False`, or a
    # rank-0-only forward, the ranks complete.
    "torchmetrics.Metric.compute": Citation(
        "a barrier, then all_gathers of each state's size and of the states",
        "torchmetrics is not installed for the tests (run once by hand, see above)",
        (
            Source(*_TM, "torchmetrics/metric.py", "141, 163", "sync_on_compute defaults to True"),
            Source(
                *_TM,
                "torchmetrics/metric.py",
                "676-696",
                "compute() runs inside sync_context(should_sync=self._to_sync)",
            ),
            Source(
                *_TM,
                "torchmetrics/metric.py",
                "573-615, 501-522",
                "sync -> _sync_dist applies gather_all_tensors to every state",
            ),
            Source(
                *_TM,
                "torchmetrics/utilities/distributed.py",
                "100-147",
                "gather_all_tensors: barrier, all_gather of the sizes, all_gather",
            ),
            Source(
                *_TM,
                "torchmetrics/collections.py",
                "358-360",
                "MetricCollection.compute() calls compute() of each metric",
            ),
        ),
    ),
    # DeepSpeed
    **{
        f"deepspeed.DeepSpeedEngine.{method}": Citation(
            "all_gather of each submodule's ZeRO-3 partitions",
            _NOT_INSTALLED.format("deepspeed"),
            (
                Source(*_DS, "deepspeed/runtime/engine.py", "1926, 1973-1989", "forward"),
                *_ZERO3_FORWARD,
            ),
        )
        for method in ("__call__", "forward")
    },
    "deepspeed.zero.GatheredParameters": Citation(
        "all_gather on enter; on exit, with modifier_rank, a broadcast from it",
        _NOT_INSTALLED.format("deepspeed"),
        (
            Source(
                *_DS,
                "deepspeed/runtime/zero/partition_parameters.py",
                "2121, 2242-2245",
                "__enter__: params[0].all_gather(param_list=...)",
            ),
            Source(
                *_DS,
                "deepspeed/runtime/zero/partition_parameters.py",
                "2247-2257",
                "__exit__: dist.broadcast(p.data, src_rank) for each parameter",
            ),
        ),
    ),
    # accelerate
    "accelerate.utils.broadcast": _accelerate(
        "526-528, 601-617", "_gpu_broadcast: torch.distributed.broadcast"
    ),
    "accelerate.utils.broadcast_object_list": _accelerate(
        "675-695", "torch.distributed.broadcast_object_list"
    ),
    "accelerate.utils.gather": _accelerate(
        "322-355, 425-439", "_gpu_gather: all_gather_into_tensor (all_gather on gloo)"
    ),
    "accelerate.utils.gather_object": _accelerate("498-505", "torch.distributed.all_gather_object"),
    "accelerate.utils.reduce": _accelerate("846-879", "torch.distributed.all_reduce"),
    "accelerate.utils.pad_across_processes": _accelerate(
        "750-781", "gather(size) of every rank's length"
    ),
    "Accelerator.gather": _accelerator("3036-3066", "gather(tensor)", _GATHER),
    "Accelerator.gather_for_metrics": _accelerator("3068-3110", "self.gather(...)", _GATHER),
    "Accelerator.reduce": _accelerator("3141-3176", "reduce(...)", _REDUCE),
    "Accelerator.pad_across_processes": _accelerator("3178-3211", "pad_across_processes", _PAD),
    "Accelerator.save_state": _accelerator(
        "3584, 3647, 3660",
        "wait_for_everyone(), then save_fsdp_model (get_model_state_dict / dcp.save)",
        Source(*_ACC, "src/accelerate/utils/fsdp_utils.py", "103-169", "dist_cp.save"),
    ),
    "Accelerator.wait_for_everyone": _accelerator(
        "3247-3269",
        "wait_for_everyone()",
        Source(*_ACC, "src/accelerate/state.py", "377-412", "torch.distributed.barrier"),
    ),
    **{
        f"accelerate.PreparedModel.{method}": Citation(
            "torch FSDP's forward all-gathers (confirmed in test_catalog_confirmed_fsdp.py)",
            _NOT_INSTALLED.format("accelerate"),
            (
                Source(*_ACC, _ACCELERATOR, "1731, 1964", "prepare wraps with FSDP / FSDP2"),
                Source(*_ACC, "src/accelerate/utils/fsdp_utils.py", "741-864", "fully_shard"),
            ),
        )
        for method in ("__call__", "forward", "generate")
    },
    # Lightning
    "LightningModule.all_gather": Citation(
        "all_gather of sizes then of padded tensors",
        _NOT_INSTALLED.format("lightning"),
        (
            Source(*_PL, "src/lightning/pytorch/core/module.py", "679-701", "strategy.all_gather"),
            Source(
                *_PL,
                "src/lightning/pytorch/strategies/parallel.py",
                "90-92",
                "_all_gather_ddp_if_available",
            ),
            Source(
                *_PL,
                "src/lightning/fabric/utilities/distributed.py",
                "102-158, 226-247",
                "torch.distributed.all_gather",
            ),
        ),
    ),
    "Trainer.save_checkpoint": Citation(
        "a barrier after the strategy saves",
        _NOT_INSTALLED.format("lightning"),
        (
            Source(
                *_PL,
                "src/lightning/pytorch/trainer/trainer.py",
                "1445, 1470-1471",
                'strategy.barrier("Trainer.save_checkpoint")',
            ),
            _LIGHTNING_BARRIER,
            Source(
                *_DS,
                "deepspeed/runtime/engine.py",
                "3201-3246",
                "DeepSpeedEngine.save_checkpoint: all_reduce of the tag, barrier",
            ),
        ),
    ),
    **{
        f"Fabric.{name}": Citation(
            issues,
            _NOT_INSTALLED.format("lightning"),
            (Source(*_PL, "src/lightning/fabric/fabric.py", lines, what), *strategy),
        )
        for name, issues, lines, what, strategy in (
            ("barrier", "barrier", "629-638", "self._strategy.barrier", (_LIGHTNING_BARRIER,)),
            (
                "broadcast",
                "broadcast_object_list",
                "640-655",
                "self._strategy.broadcast",
                (_LIGHTNING_BROADCAST,),
            ),
            (
                "all_gather",
                "all_gather",
                "657-679",
                "self._strategy.all_gather",
                (),
            ),
            (
                "all_reduce",
                "all_reduce",
                "681-710",
                "self._strategy.all_reduce",
                (),
            ),
            ("save", "barrier", "820-867", "ends in self.barrier()", (_LIGHTNING_BARRIER,)),
            ("load", "barrier", "869-915", "ends in self.barrier()", (_LIGHTNING_BARRIER,)),
        )
    },
    "Strategy.barrier": Citation(
        "barrier", _NOT_INSTALLED.format("lightning"), (_LIGHTNING_BARRIER,)
    ),
    "Strategy.broadcast": Citation(
        "broadcast_object_list", _NOT_INSTALLED.format("lightning"), (_LIGHTNING_BROADCAST,)
    ),
    "Trainer.log_dir": Citation(
        "broadcast of the directory from rank 0",
        _NOT_INSTALLED.format("lightning"),
        (
            Source(
                *_PL,
                "src/lightning/pytorch/trainer/trainer.py",
                "1317-1337",
                "dirpath = self.strategy.broadcast(dirpath)",
            ),
            _LIGHTNING_BROADCAST,
        ),
    ),
    "Trainer.callback_metrics": Citation(
        "all_reduce of each metric logged with sync_dist=True, while the loop runs",
        _NOT_INSTALLED.format("lightning"),
        (
            Source(
                *_PL,
                "src/lightning/pytorch/trainer/trainer.py",
                "1707-1720",
                "_logger_connector.callback_metrics",
            ),
            Source(
                *_PL,
                "src/lightning/pytorch/trainer/connectors/logger_connector/logger_connector.py",
                "250-252",
                "self.metrics['callback']",
            ),
            Source(
                *_PL,
                "src/lightning/pytorch/trainer/connectors/logger_connector/result.py",
                "246-248, 470-475",
                "compute(): self.meta.sync(...)",
            ),
        ),
    ),
    "LightningModule.log(sync_dist=True)": Citation(
        "all_reduce per logged value (framework.synced_log, not a catalog row)",
        _NOT_INSTALLED.format("lightning"),
        (
            Source(
                *_PL,
                "src/lightning/pytorch/core/module.py",
                "387, 551",
                "sync_dist_fn=trainer.strategy.reduce",
            ),
            Source(
                *_PL, "src/lightning/pytorch/strategies/ddp.py", "363-379", "_sync_ddp_if_available"
            ),
            Source(
                *_PL,
                "src/lightning/fabric/utilities/distributed.py",
                "182-214",
                "barrier, then all_reduce",
            ),
        ),
        in_catalog=False,
    ),
    # Hugging Face
    "transformers.Trainer.save_model": Citation(
        "gathers the full state dict under FSDP or ZeRO-3",
        _NOT_INSTALLED.format("transformers"),
        (
            Source(
                *_HF,
                "transformers/trainer.py",
                "4129, 4149-4151",
                "FSDP FULL_STATE_DICT: accelerator.get_state_dict(model)",
            ),
            Source(
                *_HF,
                "transformers/trainer.py",
                "4153-4164",
                "DeepSpeed: _zero3_consolidated_16bit_state_dict / get_state_dict",
            ),
            Source(
                *_ACC,
                _ACCELERATOR,
                "4002-4064",
                "get_state_dict: ZeRO-3 consolidation, get_model_state_dict(full), FSDP1",
            ),
            Source(
                *_DS, "deepspeed/runtime/engine.py", "3693-3715", "GatheredParameters per module"
            ),
        ),
    ),
    # torch, not runnable on the threaded group
    "torch.distributed.checkpoint.async_save": Citation(
        "what dcp.save issues (confirmed for save), from a background thread",
        "asserts that the group has a CPU backend, which the threaded group does not register",
        (
            Source(
                *_TORCH,
                "torch/distributed/checkpoint/state_dict_saver.py",
                "221, 300-305",
                "the CPU-backend check",
            ),
            Source(
                *_TORCH,
                "torch/distributed/checkpoint/state_dict_saver.py",
                "349",
                "upload_executor.execute_save(...) runs save()",
            ),
            Source(
                *_TORCH,
                "torch/distributed/checkpoint/state_dict_saver.py",
                "196, 487, 513",
                "_save_state_dict: reduce_scatter of plans, all_reduce of results",
            ),
        ),
    ),
    # Megatron (no catalog rows)
    "megatron.core.tensor_parallel.layers.RowParallelLinear.forward": Citation(
        "all_reduce over the tensor-parallel group",
        _NOT_INSTALLED.format("megatron-core"),
        (
            Source(
                *_MEG,
                "megatron/core/tensor_parallel/layers.py",
                "1516, 1566",
                "reduce_from_tensor_model_parallel_region",
            ),
            Source(
                *_MEG,
                "megatron/core/tensor_parallel/mappings.py",
                "22-35, 498",
                "torch.distributed.all_reduce",
            ),
        ),
        in_catalog=False,
    ),
    "megatron.core.tensor_parallel.layers.ColumnParallelLinear.forward": Citation(
        "all_gather over the tensor-parallel group when gather_output=True",
        _NOT_INSTALLED.format("megatron-core"),
        (
            Source(
                *_MEG,
                "megatron/core/tensor_parallel/layers.py",
                "1178, 1277-1281",
                "gather_from_tensor_model_parallel_region",
            ),
            Source(
                *_MEG,
                "megatron/core/tensor_parallel/mappings.py",
                "84-96, 510",
                "dist_all_gather_func",
            ),
        ),
        in_catalog=False,
    ),
    "megatron.core.tensor_parallel.layers.VocabParallelEmbedding.forward": Citation(
        "all_reduce over the tensor-parallel group",
        _NOT_INSTALLED.format("megatron-core"),
        (
            Source(
                *_MEG,
                "megatron/core/tensor_parallel/layers.py",
                "336, 383",
                "reduce_from_tensor_model_parallel_region",
            ),
        ),
        in_catalog=False,
    ),
    "megatron.core.parallel_state.initialize_model_parallel": Citation(
        "new_group for every parallel dimension (group creation, on every rank)",
        _NOT_INSTALLED.format("megatron-core"),
        (
            Source(
                *_MEG,
                "megatron/core/parallel_state.py",
                "601, 232-259",
                "create_group -> torch.distributed.new_group",
            ),
        ),
        in_catalog=False,
    ),
}
