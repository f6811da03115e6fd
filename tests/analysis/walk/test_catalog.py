"""The catalog of distributed calls: complete, consistent with torch's real signatures."""

from __future__ import annotations

import inspect

import pytest

from ranklint.analysis.walk.catalog import (
    BY_QUALIFIED_NAME,
    CATALOG,
    CallKind,
    CallSpec,
    extra_spec,
    lookup,
    lookup_method,
)

REQUIRED_TORCH = [
    "all_reduce",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_single",
    "all_gather_object",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "reduce_scatter_single",
    "all_to_all",
    "all_to_all_single",
    "broadcast",
    "broadcast_object_list",
    "scatter",
    "scatter_object_list",
    "gather",
    "gather_object",
    "reduce",
    "barrier",
    "monitored_barrier",
    "_all_gather_base",
    "_reduce_scatter_base",
    "all_reduce_coalesced",
    "all_gather_coalesced",
    "new_group",
    "new_subgroups",
    "new_subgroups_by_enumeration",
    "send",
    "recv",
    "isend",
    "irecv",
    "batch_isend_irecv",
]


@pytest.mark.parametrize("name", REQUIRED_TORCH)
def test_torch_distributed_api_is_cataloged_under_both_homes(name: str) -> None:
    assert lookup(f"torch.distributed.{name}") is not None
    assert lookup(f"torch.distributed.distributed_c10d.{name}") is not None


@pytest.mark.parametrize(
    "qualified",
    [
        "torch.distributed._functional_collectives.all_reduce",
        "torch.distributed.tensor.distribute_tensor",
        "torch.distributed.checkpoint.save",
        "torch.distributed.checkpoint.async_save",
        "torch.distributed.checkpoint.state_dict.get_model_state_dict",
        "torch.distributed.checkpoint.state_dict.set_optimizer_state_dict",
        "torch.distributed.device_mesh.init_device_mesh",
        "deepspeed.comm.all_reduce",
        "accelerate.utils.broadcast",
        "accelerate.utils.gather_object",
    ],
)
def test_ecosystem_apis_are_cataloged(qualified: str) -> None:
    assert lookup(qualified) is not None


@pytest.mark.parametrize(
    ("method", "receiver", "name"),
    [
        ("gather_for_metrics", "accelerator", "Accelerator.gather_for_metrics"),
        ("wait_for_everyone", "state", "Accelerator.wait_for_everyone"),
        ("full_tensor", "grad", "DTensor.full_tensor"),
        ("barrier", "strategy", "Strategy.barrier"),
        ("save_checkpoint", "trainer", "Trainer.save_checkpoint"),
        ("all_gather", "self", "LightningModule.all_gather"),
        ("barrier", "fabric", "Fabric.barrier"),
        ("save", "self.fabric", "Fabric.save"),
        ("all_reduce", "fabric", "Fabric.all_reduce"),
    ],
)
def test_distinctive_methods_are_recognised_on_plausible_receivers(
    method: str, receiver: str, name: str
) -> None:
    spec = lookup_method(method, receiver)

    assert spec is not None
    assert spec.name == name


def test_generic_method_names_need_a_telling_receiver() -> None:
    assert lookup_method("gather", "df") is None
    assert lookup_method("barrier", "threading") is None
    assert lookup_method("reduce", "np_add") is None
    assert lookup_method("save", "model") is None
    assert lookup_method("load", "torch") is None


def test_point_to_point_operations_are_not_synchronising() -> None:
    for name in ("send", "recv", "isend", "irecv", "batch_isend_irecv"):
        spec = lookup(f"torch.distributed.{name}")
        assert spec is not None
        assert not spec.kind.synchronising


def _torch_specs() -> list[CallSpec]:
    return [
        spec
        for spec in CATALOG
        if spec.name.startswith("torch.distributed.")
        and (spec.root_required or spec.op is not None or spec.group is not None)
    ]


@pytest.mark.parametrize("spec", _torch_specs(), ids=lambda spec: spec.name)
def test_parameter_positions_match_torch_signatures(spec: CallSpec) -> None:
    module = pytest.importorskip(spec.name.rsplit(".", 1)[0])
    function = getattr(module, spec.short, None)
    if function is None:
        pytest.skip(f"{spec.short} is not in this torch build")
    parameters = list(inspect.signature(function).parameters)

    for ref in (*spec.roots, spec.op, spec.group):
        if ref is None:
            continue
        assert ref.keyword in parameters, f"{spec.short} has no parameter {ref.keyword}"
        if ref.position is not None:
            assert parameters.index(ref.keyword) == ref.position


def test_each_qualified_name_maps_to_one_spec() -> None:
    assert len(BY_QUALIFIED_NAME) == sum(len(spec.qualified_names) for spec in CATALOG)


def test_init_process_group_initialises_rather_than_creates_a_subgroup() -> None:
    spec = lookup("torch.distributed.init_process_group")

    assert spec is not None
    assert spec.kind is CallKind.INITIALIZATION


def test_extra_collectives_entries_become_function_or_method_specs() -> None:
    assert extra_spec("pkg.comm.all_reduce_mean").qualified_names == ("pkg.comm.all_reduce_mean",)
    assert extra_spec("Trainer.sync").methods == ("sync",)
