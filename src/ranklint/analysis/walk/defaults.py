"""Default values of options whose meaning belongs to the analysis.

A leaf module with no imports: the configuration reads these defaults without
importing the analysis (or libcst), so that a run served from the cache never
loads the parser.
"""

from __future__ import annotations

# Default `rank-names`: names (variables, attributes, called functions) whose
# value is the caller's rank or a predicate on it. `lora_rank`, `matrix_rank`
# and `rank_dim` deliberately do not match.
DEFAULT_RANK_NAMES: tuple[str, ...] = (
    "rank",
    "local_rank",
    "global_rank",
    "node_rank",
    "group_rank",
    "world_rank",
    "my_rank",
    "rank_id",
    "dp_rank",
    "tp_rank",
    "pp_rank",
    "cp_rank",
    "ep_rank",
    "sp_rank",
    "*_parallel_rank",
    "is_main",
    "is_main_*",
    "is_master",
    "is_master_*",
    "is_local_main_process",
    "is_rank_zero",
    "is_rank_0",
    "is_rank0",
    "is_global_zero",
    "is_local_zero",
    "is_world_process_zero",
    "is_local_process_zero",
    "process_index",
    "local_process_index",
    "get_rank",
    "get_local_rank",
    "get_node_local_rank",
    "get_world_rank",
    "get_coordinate",
    "get_*_parallel_rank",
    "is_pipeline_first_stage",
    "is_pipeline_last_stage",
)

# Default `hot-functions`: functions that run once per step or micro-batch.
# `train_one_epoch` is deliberately absent: it runs once per epoch, and the
# step loop inside it is found as a loop.
DEFAULT_HOT_FUNCTIONS: tuple[str, ...] = (
    "train_step",
    "training_step",
    "train_batch",
    "train_on_batch",
    "validation_step",
    "eval_step",
    "test_step",
    "predict_step",
    "generate_step",
    "rollout_step",
    "forward",
)

# Defaults of options the rules read (heavy imports, machine paths, mesh axes,
# test markers of distributed tests).
DEFAULT_HEAVY_MODULES: tuple[str, ...] = (
    "vllm",
    "sglang",
    "deepspeed",
    "apex",
    "transformer_engine",
    "flash_attn",
    "wandb",
    "tensorboard",
    "tensorboardX",
    "mlflow",
    "megatron",
    "triton",
    "xformers",
    "bitsandbytes",
    "comet_ml",
    "neptune",
)
DEFAULT_MACHINE_PATH_PREFIXES: tuple[str, ...] = (
    "/home/",
    "/Users/",
    "/mnt/",
    "/data/",
    "/scratch/",
    "/nfs/",
    "/fsx/",
    "/lustre/",
    "/gpfs/",
    "/root/",
    "/workspace/",
    "C:\\Users\\",
)
DEFAULT_MESH_AXES: tuple[str, ...] = (
    "dp_replicate",
    "dp_shard",
    "dp",
    "cp",
    "tp",
    "pp",
    "ep",
    "etp",
    "sp",
    "dp_shard_cp",
    "dp_cp",
    "ep_tp",
    "fsdp",
    "ddp",
    "hsdp",
    "replicate",
    "shard",
)
DEFAULT_DISTRIBUTED_MARKERS: tuple[str, ...] = (
    "distributed",
    "multigpu",
    "multi_gpu",
    "gpu",
    "cuda",
    "accelerator",
    "requires_gpu",
    "requires_cuda",
)
