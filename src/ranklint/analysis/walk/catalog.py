"""The catalog of distributed calls, as data.

Each :class:`CallSpec` names a distributed API by every qualified name it is
reachable under (re-exports and thin mirrors included), or by a distinctive
method name, its kind, and where its root, reduce-op and group parameters sit.
Rules and analyses look calls up here instead of writing ``if`` chains; new
APIs are new rows, not new code.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ranklint.model.kinds import CallKind


@dataclass(frozen=True)
class ParamRef:
    """A parameter by keyword, and by position when it may be passed positionally."""

    keyword: str
    position: int | None = None


@dataclass(frozen=True)
class CallSpec:
    """One distributed API.

    ``roots``: the parameters that name the root rank (``src``/``group_src``);
    ``root_required``: leaving them all out is a mistake (the root is implicit).
    ``op``: the reduce-op parameter when it has a default (an implicit SUM).
    ``methods``: distinctive method names this API is called by on objects
    whose type a linter cannot see (``accelerator.gather(...)``);
    ``receivers``: when not empty, the method only counts on a receiver whose
    name contains one of these words (``strategy.barrier()``).
    """

    name: str
    kind: CallKind
    qualified_names: tuple[str, ...] = ()
    roots: tuple[ParamRef, ...] = ()
    root_required: bool = False
    op: ParamRef | None = None
    group: ParamRef | None = None
    methods: tuple[str, ...] = ()
    receivers: tuple[str, ...] = ()
    # The group comes from the object (a DTensor's mesh), not from an argument.
    implicit_group: bool = False
    # The call communicates only in a configuration that the code spells out
    # (`FullOptimStateDictConfig(rank0_only=True)`): the row counts only in a
    # function (or, outside functions, a file) whose source matches this pattern.
    requires: str | None = None
    # With `requires`: look for the pattern in the whole file, not in the
    # calling function (a wrapper configured where the model is wrapped).
    requires_file: bool = False
    # A read of a module's state that communicates only once the module is
    # sharded (`get_model_state_dict(model)`): not a collective where the same
    # function shards that module later (see analysis.walk.bodies.FunctionScan).
    sharded_only: bool = False

    @property
    def short(self) -> str:
        return self.name.rsplit(".", 1)[-1]


_C10D = "torch.distributed.distributed_c10d"
_DS_COMM = ("deepspeed.comm", "deepspeed.comm.comm")
_FUNCOL = "torch.distributed._functional_collectives"
_MESH = "torch.distributed.device_mesh"
_DCP = "torch.distributed.checkpoint"
_FSDP1 = (
    "torch.distributed.fsdp.FullyShardedDataParallel",
    "torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel",
)
_DDP = (
    "torch.nn.parallel.DistributedDataParallel",
    "torch.nn.parallel.distributed.DistributedDataParallel",
)
_ACC_UTILS = ("accelerate.utils", "accelerate.utils.operations")
# What `deepspeed.initialize` returns first: the engine wrapping the model.
DEEPSPEED_INITIALIZE = "deepspeed.initialize"
DEEPSPEED_ENGINE = "deepspeed.DeepSpeedEngine"
# ZeRO stage 3 written in the file: a config with `"stage": 3` (or
# `zero_stage=3`), or `deepspeed.zero.Init`, which exists only for stage 3.
ZERO3_CONFIG = r"""["']stage["']\s*:\s*3\b|zero_stage["']?\s*[:=]\s*3\b|zero\.Init\("""
# What `accelerator.prepare(model)` returns: a model wrapped as the launch
# configures it, FSDP where the file sets up accelerate's FSDP plugin.
ACCELERATE_PREPARED = "accelerate.PreparedModel"
ACCELERATE_FSDP_CONFIG = r"FullyShardedDataParallelPlugin\(|fsdp_plugin\s*="
# Framework calls that communicate only under a sharding backend: accelerate's
# `save_state` and the Hugging Face Trainer's `save_model` gather the shards
# under DeepSpeed or FSDP (every process must call them there) and only write
# files under DDP or on one device. Which backend runs is launch configuration.
BACKEND_OPS = frozenset({"save_state", "save_model"})
# A file that configures, or tests for, such a backend: there, those calls
# communicate in a configuration the file itself sets up.
SHARDING_BACKEND_SHOWN = (
    r"deepspeed_plugin|DeepSpeedPlugin|DistributedType\.(DEEPSPEED|FSDP)|fsdp_plugin"
    r"|FullyShardedDataParallelPlugin|is_deepspeed_zero3_enabled|\b(deepspeed|fsdp)\s*="
)


def shows_backend(source: str) -> bool:
    """Whether a file configures, or tests for, a sharding backend."""
    return re.search(SHARDING_BACKEND_SHOWN, source) is not None


# What `fully_shard(model)` turns a module into (FSDP2, in place).
FSDP_MODULE = "torch.distributed.fsdp.FSDPModule"
FULLY_SHARD = frozenset(
    {
        "torch.distributed.fsdp.fully_shard",
        "torch.distributed._composable.fsdp.fully_shard",
        "torch.distributed._composable.fsdp.fully_shard.fully_shard",
    }
)
# Wrappers whose process group is the default one unless an argument names one.
WRAPPER_GROUP_KEYWORDS = frozenset({"process_group", "device_mesh", "mesh"})


def _names(prefixes: Iterable[str], name: str) -> tuple[str, ...]:
    return tuple(f"{prefix}.{name}" for prefix in prefixes)


def torch_distributed(name: str) -> frozenset[str]:
    """``torch.distributed.X`` and its home in ``distributed_c10d``: how X resolves."""
    return frozenset(_torch(name, mirrors=False))


def _torch(name: str, *, mirrors: bool = True) -> tuple[str, ...]:
    """``torch.distributed.X``, its home in ``distributed_c10d``, and DeepSpeed's mirror."""
    prefixes = ["torch.distributed", _C10D]
    if mirrors:
        prefixes += _DS_COMM
    return _names(prefixes, name)


def _p(keyword: str, position: int | None = None) -> ParamRef:
    return ParamRef(keyword, position)


def _collective(
    name: str,
    *,
    group: int | None,
    op: int | None = None,
    src: int | None = None,
    dst: int | None = None,
    required_root: bool = True,
    kind: CallKind = CallKind.COLLECTIVE,
) -> CallSpec:
    roots: tuple[ParamRef, ...] = ()
    if src is not None:
        roots = (_p("src", src), _p("group_src"))
    elif dst is not None:
        roots = (_p("dst", dst), _p("group_dst"))
    return CallSpec(
        name=f"torch.distributed.{name}",
        kind=kind,
        qualified_names=_torch(name),
        roots=roots,
        root_required=bool(roots) and required_root,
        op=None if op is None else _p("op", op),
        group=None if group is None else _p("group", group),
    )


_TORCH_COLLECTIVES: tuple[CallSpec, ...] = (
    _collective("all_reduce", op=1, group=2),
    _collective("all_reduce_coalesced", op=1, group=2),
    _collective("all_gather", group=2),
    _collective("all_gather_into_tensor", group=2),
    _collective("all_gather_single", group=2),
    _collective("all_gather_coalesced", group=2),
    _collective("all_gather_object", group=2),
    _collective("_all_gather_base", group=2),
    _collective("reduce_scatter", op=2, group=3),
    _collective("reduce_scatter_tensor", op=2, group=3),
    _collective("reduce_scatter_single", op=2, group=3),
    _collective("_reduce_scatter_base", op=2, group=3),
    _collective("all_to_all", group=2),
    _collective("all_to_all_single", group=4),
    _collective("broadcast", src=1, group=2),
    _collective("broadcast_object_list", src=1, group=2),
    _collective("scatter", src=2, group=3),
    _collective("scatter_object_list", src=2, group=3),
    _collective("gather", dst=2, group=3),
    _collective("gather_object", dst=2, group=3),
    _collective("reduce", dst=1, op=2, group=3),
    _collective("barrier", group=0, kind=CallKind.BARRIER),
    _collective("monitored_barrier", group=0, kind=CallKind.BARRIER),
)

_POINT_TO_POINT: tuple[CallSpec, ...] = tuple(
    CallSpec(f"torch.distributed.{name}", CallKind.POINT_TO_POINT, _torch(name))
    for name in (
        "send",
        "recv",
        "isend",
        "irecv",
        "batch_isend_irecv",
        "send_object_list",
        "recv_object_list",
    )
)


def _funcol(name: str, *, op: int | None = None, group: int) -> CallSpec:
    return CallSpec(
        name=f"{_FUNCOL}.{name}",
        kind=CallKind.COLLECTIVE,
        qualified_names=(f"{_FUNCOL}.{name}",),
        # Functional collectives take the op as a required string: never implicit.
        group=_p("group", group),
    )


_FUNCTIONAL: tuple[CallSpec, ...] = (
    _funcol("all_reduce", group=2),
    _funcol("all_reduce_coalesced", group=2),
    _funcol("all_gather_tensor", group=2),
    _funcol("all_gather_tensor_autograd", group=2),
    _funcol("all_gather_into_tensor_coalesced", group=1),
    _funcol("reduce_scatter_tensor", group=3),
    _funcol("reduce_scatter_tensor_autograd", group=3),
    _funcol("reduce_scatter_tensor_coalesced", group=3),
    _funcol("all_to_all_single", group=3),
    _funcol("all_to_all_single_autograd", group=3),
    _funcol("broadcast", group=2),
)

_DTENSOR: tuple[CallSpec, ...] = (
    CallSpec(
        "torch.distributed.tensor.distribute_tensor",
        CallKind.COLLECTIVE,
        (
            "torch.distributed.tensor.distribute_tensor",
            "torch.distributed.tensor.api.distribute_tensor",
            "torch.distributed._tensor.distribute_tensor",
        ),
        implicit_group=True,
    ),
    CallSpec(
        "DTensor.full_tensor", CallKind.COLLECTIVE, methods=("full_tensor",), implicit_group=True
    ),
    CallSpec(
        "DTensor.redistribute",
        CallKind.COLLECTIVE,
        methods=("redistribute",),
        implicit_group=True,
    ),
    # The norm of DTensor gradients (FSDP2, tensor parallel) is all-reduced: measured
    # on 2 threaded ranks; on plain and FSDP1 (flat) parameters it is local. Counts
    # only in a file that makes DTensors.
    CallSpec(
        "torch.nn.utils.clip_grad_norm_",
        CallKind.COLLECTIVE,
        (
            "torch.nn.utils.clip_grad_norm_",
            "torch.nn.utils.clip_grad.clip_grad_norm_",
            "torch.nn.utils.get_total_norm",
            "torch.nn.utils.clip_grad.get_total_norm",
        ),
        implicit_group=True,
        requires=r"\bfully_shard\b|\bparallelize_module\b|\bdistribute_tensor\b",
        requires_file=True,
    ),
    # Checks that the ranks' local tensors agree with the placements: measured on
    # 2 threaded ranks, it all-gathers their shapes and strides (and broadcasts a
    # replica from rank 0); local with the default `run_check=False`.
    CallSpec(
        "DTensor.from_local",
        CallKind.COLLECTIVE,
        (
            "torch.distributed.tensor.DTensor.from_local",
            "torch.distributed.tensor._api.DTensor.from_local",
            "torch.distributed._tensor.DTensor.from_local",
        ),
        implicit_group=True,
        requires=r"run_check\s*=\s*True",
    ),
    # Both distribute the module's parameters from rank 0 (`src_data_rank=0` by
    # default): measured on 2 threaded ranks (tests/analysis/walk/
    # test_catalog_confirmed.py), distribute_module broadcasts each parameter
    # and parallelize_module scatters (Colwise/Rowwise) or broadcasts them.
    CallSpec(
        "torch.distributed.tensor.distribute_module",
        CallKind.COLLECTIVE,
        (
            "torch.distributed.tensor.distribute_module",
            "torch.distributed.tensor._api.distribute_module",
            "torch.distributed._tensor.distribute_module",
        ),
        implicit_group=True,
    ),
    CallSpec(
        "torch.distributed.tensor.parallel.parallelize_module",
        CallKind.COLLECTIVE,
        (
            "torch.distributed.tensor.parallel.parallelize_module",
            "torch.distributed.tensor.parallel.api.parallelize_module",
        ),
        implicit_group=True,
    ),
)

_GROUP_CREATION: tuple[CallSpec, ...] = (
    CallSpec(
        "torch.distributed.init_process_group",
        CallKind.INITIALIZATION,
        _torch("init_process_group", mirrors=False),
    ),
    CallSpec("torch.distributed.new_group", CallKind.GROUP_CREATION, _torch("new_group")),
    CallSpec(
        "torch.distributed.new_subgroups",
        CallKind.GROUP_CREATION,
        _torch("new_subgroups", mirrors=False),
    ),
    CallSpec(
        "torch.distributed.new_subgroups_by_enumeration",
        CallKind.GROUP_CREATION,
        _torch("new_subgroups_by_enumeration", mirrors=False),
    ),
    CallSpec(
        "torch.distributed.init_device_mesh",
        CallKind.GROUP_CREATION,
        (f"{_MESH}.init_device_mesh", "torch.distributed.init_device_mesh"),
    ),
    CallSpec(
        "torch.distributed.DeviceMesh",
        CallKind.GROUP_CREATION,
        (f"{_MESH}.DeviceMesh", "torch.distributed.DeviceMesh"),
    ),
    CallSpec(
        "torch.distributed.DeviceMesh.from_group",
        CallKind.GROUP_CREATION,
        (f"{_MESH}.DeviceMesh.from_group", "torch.distributed.DeviceMesh.from_group"),
    ),
    CallSpec(
        "deepspeed.init_distributed",
        CallKind.INITIALIZATION,
        ("deepspeed.init_distributed", "deepspeed.comm.init_distributed"),
    ),
)

STATE_DICT_FUNCTIONS = (
    "get_model_state_dict",
    "get_optimizer_state_dict",
    "get_state_dict",
    "set_model_state_dict",
    "set_optimizer_state_dict",
    "set_state_dict",
)
# The getters read the module's state: on a module not sharded yet there is
# nothing to gather (measured on gloo: rank 0 alone takes the full state dict
# of a plain module and the ranks meet at the next barrier).
_STATE_DICT_GETTERS = frozenset(STATE_DICT_FUNCTIONS[:3])
# With the default options they are local on FSDP2 (sharded state dicts, read and
# written in place) and on plain modules; they communicate with
# `full_state_dict=True` (getters all-gather, setters scatter each tensor),
# `broadcast_from_rank0=True`, and on FSDP1 by default (all measured on 2
# threaded ranks: test_catalog_confirmed.py, test_catalog_confirmed_fsdp.py).
# Looked for in the whole file; options passed in from elsewhere count too.
STATE_DICT_COMMUNICATES = (
    r"full_state_dict\s*=\s*(?!False\b)"
    r"|broadcast_from_rank0\s*=\s*(?!False\b)"
    r"|\boptions\s*=\s*(?!StateDictOptions\b|None\b)[A-Za-z_]"
    r"|FullyShardedDataParallel|\bFSDP\("
)

_CHECKPOINTING: tuple[CallSpec, ...] = (
    *(
        CallSpec(
            f"{_DCP}.{name}",
            CallKind.COLLECTIVE,
            _names((_DCP,), name)
            + _names((f"{_DCP}.state_dict_saver", f"{_DCP}.state_dict_loader"), name),
        )
        for name in ("save", "load", "async_save", "save_state_dict", "load_state_dict")
    ),
    *(
        CallSpec(
            f"{_DCP}.state_dict.{name}",
            CallKind.COLLECTIVE,
            (f"{_DCP}.state_dict.{name}",),
            sharded_only=name in _STATE_DICT_GETTERS,
            requires=STATE_DICT_COMMUNICATES,
            requires_file=True,
        )
        for name in STATE_DICT_FUNCTIONS
    ),
    *(
        CallSpec(f"FullyShardedDataParallel.{name}", CallKind.COLLECTIVE, _names(_FSDP1, name))
        for name in (
            "full_optim_state_dict",
            "optim_state_dict",
            "scatter_full_optim_state_dict",
            # Measured on 2 threaded ranks: the same broadcasts, all_reduce and
            # all-gathers as optim_state_dict (test_catalog_confirmed_fsdp.py).
            "sharded_optim_state_dict",
        )
    ),
    # Local unless the optimizer state-dict config says `rank0_only=True`
    # (then rank 0's state is broadcast), which is looked for in the calling
    # function; `shard_full_optim_state_dict` is always local. Measured on
    # gloo: ranks taking turns to load with `rank0_only=False` finish, with
    # `rank0_only=True` they time out.
    CallSpec(
        "FullyShardedDataParallel.optim_state_dict_to_load",
        CallKind.COLLECTIVE,
        _names(_FSDP1, "optim_state_dict_to_load"),
        requires=r"rank0_only\s*=\s*True",
    ),
    # Calls of a model that FSDP wraps (`model = FSDP(m)`, `fully_shard(m)`):
    # its forward all-gathers the parameters, `generate` runs the forwards of
    # the wrapped modules, and FSDP1's state_dict() gathers the full state by
    # default, and its load_state_dict() all-gathers to write the full
    # parameters (measured on 2 threaded ranks: test_catalog_confirmed_fsdp.py);
    # FSDP2's unshard() all-gathers too. Only for models tracked by name (see
    # names.instance_of).
    *(
        CallSpec(f"FullyShardedDataParallel.{short}", CallKind.COLLECTIVE, _names(_FSDP1, method))
        for method, short in (
            ("__call__", "forward"),
            ("forward", "forward"),
            ("generate", "generate"),
            ("state_dict", "state_dict"),
            ("load_state_dict", "load_state_dict"),
        )
    ),
    *(
        CallSpec(f"FSDPModule.{short}", CallKind.COLLECTIVE, (f"{FSDP_MODULE}.{method}",))
        for method, short in (
            ("__call__", "forward"),
            ("forward", "forward"),
            ("generate", "generate"),
            ("unshard", "unshard"),
        )
    ),
    # The forward of a ZeRO-3 engine all-gathers each layer's parameters over
    # the data-parallel group (every rank must run it: transformers#11464);
    # only where the file configures stage 3.
    *(
        CallSpec(
            "DeepSpeedEngine.forward",
            CallKind.COLLECTIVE,
            (f"{DEEPSPEED_ENGINE}.{method}",),
            requires=ZERO3_CONFIG,
            requires_file=True,
        )
        for method in ("__call__", "forward")
    ),
    # Entering `deepspeed.zero.GatheredParameters(params)` all-gathers ZeRO-3
    # partitioned parameters, and leaving it with `modifier_rank` broadcasts them
    # (deepspeed/runtime/zero/partition_parameters.py at 38327e0, lines 2242-2257);
    # on parameters ZeRO-3 does not partition it does nothing: only where the
    # file configures stage 3.
    CallSpec(
        "deepspeed.zero.GatheredParameters",
        CallKind.COLLECTIVE,
        (
            "deepspeed.zero.GatheredParameters",
            "deepspeed.runtime.zero.GatheredParameters",
            "deepspeed.runtime.zero.partition_parameters.GatheredParameters",
        ),
        requires=ZERO3_CONFIG,
        requires_file=True,
    ),
    # Building a DDP model verifies the parameter shapes across ranks (an
    # all_gather) and broadcasts rank 0's module states (measured on 2 threaded
    # ranks: all_gather, broadcast, broadcast; test_catalog_confirmed_fsdp.py).
    CallSpec(
        "torch.nn.parallel.DistributedDataParallel",
        CallKind.COLLECTIVE,
        _DDP,
        group=ParamRef("process_group"),
    ),
    # DDP's forward broadcasts the module's buffers from rank 0 first
    # (`broadcast_buffers=True`, the default; measured on gloo: a rank-0-only
    # forward of a DDP model with a BatchNorm hangs, in eval() and no_grad()
    # too, and one without buffers does not). Only for `model = DDP(m)`
    # tracked by name, without `broadcast_buffers=False` (`forward_sync_buffers=False`).
    *(
        CallSpec(
            "DistributedDataParallel.buffered_forward", CallKind.COLLECTIVE, _names(_DDP, method)
        )
        for method in ("__call__", "forward")
    ),
    # A model `accelerator.prepare` wrapped with FSDP: its forward and
    # `generate` all-gather the parameters, as for FSDP(model) above.
    *(
        CallSpec(
            f"FullyShardedDataParallel.{short}",
            CallKind.COLLECTIVE,
            (f"{ACCELERATE_PREPARED}.{method}",),
            requires=ACCELERATE_FSDP_CONFIG,
            requires_file=True,
        )
        for method, short in (
            ("__call__", "forward"),
            ("forward", "forward"),
            ("generate", "generate"),
        )
    ),
    CallSpec(
        "FullyShardedDataParallel.summon_full_params",
        CallKind.COLLECTIVE,
        _names(_FSDP1, "summon_full_params"),
        methods=("summon_full_params",),
    ),
    CallSpec(
        "FullyShardedDataParallel.clip_grad_norm_",
        CallKind.COLLECTIVE,
        _names(_FSDP1, "clip_grad_norm_"),
        methods=("clip_grad_norm_",),
        # torch.nn.utils.clip_grad_norm_ is a function, not a method; a method
        # of this name on a model or accelerator reduces the norm across ranks.
        receivers=("model", "module", "fsdp", "accelerator", "engine", "wrapped"),
    ),
)

_WRAPPERS: tuple[CallSpec, ...] = (
    # accelerate: functions
    *(
        CallSpec(f"accelerate.utils.{name}", CallKind.COLLECTIVE, _names(_ACC_UTILS, name))
        for name in (
            "broadcast",
            "broadcast_object_list",
            "gather",
            "gather_object",
            "reduce",
            "pad_across_processes",
        )
    ),
    # accelerate: Accelerator methods
    *(
        CallSpec(
            f"Accelerator.{name}", CallKind.COLLECTIVE, methods=(name,), receivers=("accelerator",)
        )
        for name in ("gather", "gather_for_metrics", "reduce", "pad_across_processes", "save_state")
    ),
    CallSpec("Accelerator.wait_for_everyone", CallKind.BARRIER, methods=("wait_for_everyone",)),
    # Lightning
    CallSpec(
        "LightningModule.all_gather",
        CallKind.COLLECTIVE,
        methods=("all_gather",),
        receivers=("self", "module", "pl_module", "lightning_module"),
    ),
    CallSpec(
        "Trainer.save_checkpoint",
        CallKind.COLLECTIVE,
        methods=("save_checkpoint",),
        receivers=("trainer", "engine", "deepspeed"),
    ),
    CallSpec("Strategy.barrier", CallKind.BARRIER, methods=("barrier",), receivers=("strategy",)),
    # Lightning Fabric: its collectives, and `save`/`load`, which end in
    # `self.barrier()` (lightning/fabric/fabric.py at 7f0c343, lines 867 and 915).
    CallSpec("Fabric.barrier", CallKind.BARRIER, methods=("barrier",), receivers=("fabric",)),
    *(
        CallSpec(f"Fabric.{name}", CallKind.COLLECTIVE, methods=(name,), receivers=("fabric",))
        for name in ("broadcast", "all_gather", "all_reduce", "save", "load")
    ),
    # Hugging Face Trainer: with DeepSpeed or FSDP, saving gathers the shards
    # (transformers#10596); it is meant to be called on every process.
    CallSpec(
        "transformers.Trainer.save_model",
        CallKind.COLLECTIVE,
        methods=("save_model",),
        receivers=("trainer",),
    ),
    CallSpec(
        "Strategy.broadcast", CallKind.COLLECTIVE, methods=("broadcast",), receivers=("strategy",)
    ),
)

# torchmetrics: a metric's `compute()` gathers every rank's states first (a
# barrier, then all_gathers of the sizes and the states) unless it was built
# with `sync_on_compute=False` (then `names` does not track it); its forward and
# `update` stay local by default (`dist_sync_on_step=False`). Measured with
# torchmetrics 1.9.0 on 2 threaded ranks: `compute()` of a `BinaryAccuracy` or a
# `MetricCollection` on rank 0 alone diverges at that barrier, and with
# `sync_on_compute=False`, or a rank-0-only forward, it completes
# (tests/analysis/walk/catalog_citations.py). One row for the methods of every
# class of the package (see lookup), for objects tracked by name or attribute.
METRIC_COMPUTE = CallSpec(
    "torchmetrics.Metric.compute", CallKind.COLLECTIVE, ("torchmetrics.Metric.compute",)
)
_METRICS: tuple[CallSpec, ...] = (METRIC_COMPUTE,)

CATALOG: tuple[CallSpec, ...] = (
    *_TORCH_COLLECTIVES,
    *_POINT_TO_POINT,
    *_FUNCTIONAL,
    *_DTENSOR,
    *_GROUP_CREATION,
    *_CHECKPOINTING,
    *_WRAPPERS,
    *_METRICS,
)


def _index(specs: Iterable[CallSpec]) -> dict[str, CallSpec]:
    index: dict[str, CallSpec] = {}
    for spec in specs:
        for qualified in spec.qualified_names:
            if qualified in index:
                raise ValueError(f"catalog lists {qualified!r} twice")
            index[qualified] = spec
    return index


def _method_index(specs: Iterable[CallSpec]) -> dict[str, tuple[CallSpec, ...]]:
    index: dict[str, list[CallSpec]] = {}
    for spec in specs:
        for method in spec.methods:
            index.setdefault(method, []).append(spec)
    return {method: tuple(found) for method, found in index.items()}


BY_QUALIFIED_NAME: dict[str, CallSpec] = _index(CATALOG)
BY_METHOD: dict[str, tuple[CallSpec, ...]] = _method_index(CATALOG)


def lookup(qualified_name: str | None) -> CallSpec | None:
    """The catalog row for a resolved call target, or ``None``."""
    if qualified_name is None:
        return None
    spec = BY_QUALIFIED_NAME.get(qualified_name)
    if (
        spec is None
        and qualified_name.endswith(".compute")
        and is_metric_class(qualified_name.removesuffix(".compute"))
    ):
        return METRIC_COMPUTE  # `acc.compute()` of `acc = BinaryAccuracy()`
    return spec


def is_metric_class(qualified_name: str) -> bool:
    """A class of torchmetrics (``torchmetrics.classification.BinaryAccuracy``,
    ``torchmetrics.MetricCollection``): capitalised, outside its functional API."""
    head, _, last = qualified_name.rpartition(".")
    return (
        (head == "torchmetrics" or head.startswith("torchmetrics."))
        and not head.startswith("torchmetrics.functional")
        and last[:1].isupper()
    )


def lookup_method(method: str, receiver: str | None) -> CallSpec | None:
    """The catalog row for ``<receiver>.method(...)`` on an object of unknown type.

    ``receiver`` is the last name of the receiver expression (``accelerator``
    for ``self.accelerator.gather``), ``None`` when it has no name.
    """
    specs = BY_METHOD.get(method)
    if not specs:
        return None
    lowered = (receiver or "").lower()
    for spec in specs:
        if not spec.receivers or any(word in lowered for word in spec.receivers):
            return spec
    return None


# Framework *properties* whose read is a collective: `trainer.log_dir`
# broadcasts the directory from rank 0 (Lightning#18148); `callback_metrics`
# computes, and so syncs, the logged metrics (sleap-nn#476). By attribute name,
# each counting only on a receiver whose name contains one of the words.
PROPERTY_COLLECTIVES: dict[str, CallSpec] = {
    "log_dir": CallSpec("Trainer.log_dir", CallKind.COLLECTIVE, receivers=("trainer",)),
    "callback_metrics": CallSpec(
        "Trainer.callback_metrics", CallKind.COLLECTIVE, receivers=("trainer",)
    ),
}


# Properties that synchronise only while the loop runs: `callback_metrics`
# computes the epoch's logged metrics the first time it is read, in a hook
# (`on_validation_epoch_end`), and returns the cached values afterwards (the
# Lightning launchers read it on local rank 0 after `fit`, without a sync).
HOOK_ONLY_PROPERTIES: frozenset[str] = frozenset({"callback_metrics"})
# Callback hooks that Lightning 2.0 removed: the `lightning` package (the 2.x
# namespace) never calls them, so code in them never runs.
REMOVED_LIGHTNING_HOOKS: frozenset[str] = frozenset(
    {
        "on_keyboard_interrupt",
        "on_init_start",
        "on_init_end",
        "on_configure_sharded_model",
        "on_batch_start",
        "on_batch_end",
        "on_epoch_start",
        "on_epoch_end",
        "on_pretrain_routine_start",
        "on_pretrain_routine_end",
    }
)


def lookup_property(attribute: str, receiver: str | None) -> CallSpec | None:
    """The catalog row for reading ``<receiver>.attribute``, when that read is a collective."""
    spec = PROPERTY_COLLECTIVES.get(attribute)
    if spec is None:
        return None
    lowered = (receiver or "").lower()
    return spec if any(word in lowered for word in spec.receivers) else None


def extra_spec(entry: str) -> CallSpec:
    """A catalog row for a project wrapper named in ``extra-collectives``.

    ``pkg.comm.all_reduce_mean`` matches that function through any import;
    ``Class.method`` (first part capitalised) matches ``.method(...)`` calls.
    """
    head, _, method = entry.rpartition(".")
    if head and "." not in head and head[:1].isupper():
        return CallSpec(entry, CallKind.COLLECTIVE, methods=(method,))
    return CallSpec(entry, CallKind.COLLECTIVE, (entry,))


# Functions whose result is the caller's rank (rank-taint sources), by qualified name.
RANK_FUNCTIONS: frozenset[str] = frozenset(
    _torch("get_rank")
    + _torch("get_group_rank")
    + _torch("get_node_local_rank")
    + _torch("get_local_rank")
    + ("deepspeed.comm.get_local_rank",)
)

# Environment variables that hold the caller's rank.
RANK_ENVIRONMENT: frozenset[str] = frozenset(
    {
        "RANK",
        "LOCAL_RANK",
        "GROUP_RANK",
        "NODE_RANK",
        "ROLE_RANK",
        "GLOBAL_RANK",
        "SLURM_PROCID",
        "SLURM_LOCALID",
        "OMPI_COMM_WORLD_RANK",
        "OMPI_COMM_WORLD_LOCAL_RANK",
        "PMI_RANK",
    }
)

# torch calls that map a rank given as an argument (not the caller's).
ARGUMENT_RANK_FUNCTIONS = frozenset(
    {
        "torch.distributed.get_global_rank",
        "torch.distributed.distributed_c10d.get_global_rank",
        "torch.distributed.get_group_rank",
        "torch.distributed.distributed_c10d.get_group_rank",
    }
)

# torch calls that make a tensor of the value they are given (`torch.tensor(float(go))`):
# the tensor is as rank-dependent as the value, until a collective makes it equal.
TENSOR_OF_VALUE = frozenset({"torch.tensor", "torch.as_tensor", "torch.scalar_tensor"})
# Tensor methods that give the same value in another form (`flag.item()`, `flag.clone()`),
# and a copy of a container, with its length and order (`metrics.copy()`).
SAME_VALUE_METHODS = frozenset(
    {
        "copy",
        "item",
        "tolist",
        "clone",
        "detach",
        "cpu",
        "cuda",
        "to",
        "float",
        "double",
        "half",
        "int",
        "long",
        "bool",
    }
)

# Library functions that return a tuple holding the caller's rank, by the
# position of the rank in it: ``rank, world_size = get_dist_info()``.
RANK_TUPLE_FUNCTIONS: dict[str, int] = {
    "mmengine.dist.get_dist_info": 0,
    "mmengine.dist.utils.get_dist_info": 0,
    "mmcv.runner.get_dist_info": 0,
    "mmcv.runner.dist_utils.get_dist_info": 0,
}

# Draws from a process-global random state. Each rank has its own state (often
# seeded with the rank on purpose), so a decision taken on a draw may differ
# between ranks. A call given an explicit ``generator=`` is not one of these.
# Queries of the file system: each node has its own disks, and a file rank 0
# is writing appears to the others at different moments, so ranks can see
# different answers (unsloth-zoo#967: a barrier skipped where the file exists).
FILE_SYSTEM_QUERIES: frozenset[str] = frozenset(
    {
        "os.path.exists",
        "os.path.isfile",
        "os.path.isdir",
        "os.path.lexists",
        "os.listdir",
        "glob.glob",
    }
)
UNSEEDED_RANDOM: frozenset[str] = frozenset(
    {
        "random.random",
        "random.randint",
        "random.randrange",
        "random.uniform",
        "random.choice",
        "random.choices",
        "random.sample",
        "numpy.random.rand",
        "numpy.random.randn",
        "numpy.random.randint",
        "numpy.random.random",
        "numpy.random.random_sample",
        "numpy.random.uniform",
        "numpy.random.choice",
        "numpy.random.binomial",
        "torch.rand",
        "torch.randn",
        "torch.randint",
        "torch.randperm",
        "torch.bernoulli",
        "torch.multinomial",
    }
)

# Builtins whose result depends only on their arguments.
PASS_THROUGH: frozenset[str] = frozenset(
    {
        "int",
        "str",
        "bool",
        "float",
        "abs",
        "min",
        "max",
        "round",
        "len",
        "divmod",
        "hash",
        "range",
        "enumerate",
        "zip",
        "list",
        "tuple",
        "sorted",
        "reversed",
        "sum",
        "any",
        "all",
    }
)

# Top-level modules whose functions are never project functions.
EXTERNAL_ROOTS: frozenset[str] = frozenset(
    {
        "torch",
        "numpy",
        "os",
        "sys",
        "math",
        "time",
        "logging",
        "json",
        "re",
        "random",
        "functools",
        "itertools",
        "collections",
        "typing",
        "dataclasses",
        "pathlib",
        "copy",
        "warnings",
        "contextlib",
        "subprocess",
        "shutil",
        "datetime",
        "abc",
        "enum",
        "inspect",
        "pickle",
        "io",
        "threading",
        "multiprocessing",
        "asyncio",
        "tqdm",
        "wandb",
        "safetensors",
        "einops",
        "np",
        "yaml",
        "omegaconf",
        "psutil",
        "socket",
        "argparse",
    }
)
