"""The catalog's implicit collectives, confirmed by running them: DTensor, objects, checkpoints.

Each test runs one API on a threaded world of two ranks (``run_ranks``, threads
mode) and asserts the collectives that call issues, observed by
:mod:`tests.analysis.walk.collective_probe`; setup (meshes, models, sharding)
is not observed. ``catalog_citations.CONFIRMED`` maps each catalog row to the
test here or in ``test_catalog_confirmed_fsdp.py`` that confirms it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ranklint.analysis.walk.catalog import STATE_DICT_FUNCTIONS

torch = pytest.importorskip("torch", reason="confirming the catalog runs torch")

import torch.distributed as dist  # noqa: E402 - after the skip
import torch.distributed.checkpoint as dcp  # noqa: E402
from torch.distributed.checkpoint import state_dict as sd  # noqa: E402
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh  # noqa: E402
from torch.distributed.tensor import (  # noqa: E402
    DTensor,
    Partial,
    Placement,
    Replicate,
    Shard,
    distribute_module,
    distribute_tensor,
)

from tests.analysis.walk.collective_probe import (  # noqa: E402
    CONFIRMATION_MARKS,
    OpLog,
    Probe,
    patched,
    run_logged,
)

pytestmark = [pytest.mark.distributed, *CONFIRMATION_MARKS]

WORLD = 2
#: What a distributed checkpoint save or load of this size issues, in any order:
#: the planner's gather/scatter of plans and the metadata broadcast.
DCP_OPS = {"all_gather", "gather", "broadcast", "scatter"}


@pytest.fixture
def probe() -> Iterator[Probe]:
    with patched() as installed:
        yield installed


def one_log(logs: list[OpLog]) -> OpLog:
    """The op sequence every rank issued (they must agree)."""
    assert all(log == logs[0] for log in logs), logs
    return logs[0]


def _mesh(world_size: int) -> DeviceMesh:
    return init_device_mesh("cpu", (world_size,))


def _dtensor(world_size: int, placement: Placement) -> DTensor:
    mesh = _mesh(world_size)
    if isinstance(placement, Partial):
        return DTensor.from_local(torch.ones(4), mesh, [placement])
    return distribute_tensor(torch.arange(16.0).reshape(4, 4), mesh, [placement])


# --- object collectives -----------------------------------------------------------------


def _object_call(name: str, rank: int, world_size: int) -> Callable[[], Any]:
    if name == "broadcast_object_list":
        return lambda: dist.broadcast_object_list([rank], src=0)
    if name == "all_gather_object":
        return lambda: dist.all_gather_object([None] * world_size, {"rank": rank})
    if name == "gather_object":
        out = [None] * world_size if rank == 0 else None
        return lambda: dist.gather_object(rank, out, dst=0)
    items = list(range(world_size)) if rank == 0 else None
    return lambda: dist.scatter_object_list([None], items, src=0)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("broadcast_object_list", ["broadcast", "broadcast"]),
        ("all_gather_object", ["all_gather", "all_gather"]),
        ("gather_object", ["all_gather", "gather"]),
        ("scatter_object_list", ["broadcast", "scatter", "scatter"]),
    ],
)
def test_object_collective_on_every_rank_issues_size_then_payload_collectives(
    probe: Probe, name: str, expected: OpLog
) -> None:
    def case(rank: int, world_size: int) -> OpLog:
        return probe.call(_object_call(name, rank, world_size))

    assert one_log(run_logged(case, WORLD)) == expected


def test_probe_records_an_explicit_all_reduce_and_nothing_outside_capture(probe: Probe) -> None:
    def case(rank: int, world_size: int) -> OpLog:
        dist.all_reduce(torch.ones(1), op=dist.ReduceOp.SUM)  # not captured
        return probe.call(lambda: dist.all_reduce(torch.ones(1), op=dist.ReduceOp.SUM))

    assert one_log(run_logged(case, WORLD)) == ["all_reduce"]


# --- DTensor ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("placement", "expected"),
    [(Shard(0), ["scatter"]), (Replicate(), ["broadcast"])],
    ids=["shard", "replicate"],
)
def test_distribute_tensor_from_rank_zero_issues_scatter_or_broadcast(
    probe: Probe, placement: Placement, expected: OpLog
) -> None:
    def case(rank: int, world_size: int) -> OpLog:
        mesh = _mesh(world_size)
        return probe.call(lambda: distribute_tensor(torch.ones(4, 4), mesh, [placement]))

    assert one_log(run_logged(case, WORLD)) == expected


def test_distribute_tensor_without_source_rank_issues_none(probe: Probe) -> None:
    def case(rank: int, world_size: int) -> OpLog:
        mesh = _mesh(world_size)
        return probe.call(
            lambda: distribute_tensor(torch.ones(4, 4), mesh, [Shard(0)], src_data_rank=None)
        )

    assert one_log(run_logged(case, WORLD)) == []


@pytest.mark.parametrize(
    ("placement", "expected"),
    [(Shard(0), ["all_gather_single"]), (Partial(), ["all_reduce"]), (Replicate(), [])],
    ids=["shard", "partial", "replicate"],
)
def test_full_tensor_gathers_a_shard_reduces_a_partial_and_leaves_a_replica(
    probe: Probe, placement: Placement, expected: OpLog
) -> None:
    def case(rank: int, world_size: int) -> OpLog:
        tensor = _dtensor(world_size, placement)
        return probe.call(tensor.full_tensor)

    assert one_log(run_logged(case, WORLD)) == expected


@pytest.mark.parametrize(
    ("source", "target", "expected"),
    [
        (Shard(0), Replicate(), ["all_gather_single"]),
        (Shard(0), Shard(1), ["all_gather_single"]),
        (Partial(), Replicate(), ["all_reduce"]),
        (Shard(0), Shard(0), []),
    ],
    ids=["shard-to-replicate", "shard-to-other-dim", "partial-to-replicate", "same-placement"],
)
def test_redistribute_issues_a_collective_unless_the_placement_stays(
    probe: Probe, source: Placement, target: Placement, expected: OpLog
) -> None:
    def case(rank: int, world_size: int) -> OpLog:
        tensor = _dtensor(world_size, source)
        return probe.call(lambda: tensor.redistribute(tensor.device_mesh, [target]))

    assert one_log(run_logged(case, WORLD)) == expected


@pytest.mark.parametrize(
    ("placement", "run_check", "expected"),
    [
        (Replicate(), True, ["all_gather", "all_gather", "broadcast"]),
        (Shard(0), True, ["all_gather", "all_gather"]),
        (Replicate(), False, []),
        (Shard(0), None, []),
    ],
    ids=["replicate-checked", "shard-checked", "replicate-unchecked", "shard-default"],
)
def test_from_local_checks_the_local_tensors_only_with_run_check(
    probe: Probe, placement: Placement, run_check: bool | None, expected: OpLog
) -> None:
    def case(rank: int, world_size: int) -> OpLog:
        mesh = _mesh(world_size)
        options = {} if run_check is None else {"run_check": run_check}
        local = torch.ones(2)
        return probe.call(lambda: DTensor.from_local(local, mesh, [placement], **options))

    assert one_log(run_logged(case, WORLD)) == expected


def test_dtensor_to_local_and_repr_issue_none(probe: Probe) -> None:
    def case(rank: int, world_size: int) -> OpLog:
        tensor = _dtensor(world_size, Shard(0))
        return probe.call(lambda: (tensor.to_local(), repr(tensor)))

    assert one_log(run_logged(case, WORLD)) == []


def test_distribute_module_broadcasts_each_parameter_from_rank_zero(probe: Probe) -> None:
    def case(rank: int, world_size: int) -> OpLog:
        mesh = _mesh(world_size)
        return probe.call(lambda: distribute_module(torch.nn.Linear(4, 4), mesh))

    assert one_log(run_logged(case, WORLD)) == ["broadcast", "broadcast"]


@pytest.mark.parametrize(
    ("src_data_rank", "expected"),
    [(0, ["scatter", "scatter", "scatter", "broadcast"]), (None, [])],
    ids=["from-rank-zero", "no-source-rank"],
)
def test_parallelize_module_distributes_parameters_unless_no_source_rank(
    probe: Probe, src_data_rank: int | None, expected: OpLog
) -> None:
    from torch.distributed.tensor.parallel import (
        ColwiseParallel,
        RowwiseParallel,
        parallelize_module,
    )

    def case(rank: int, world_size: int) -> OpLog:
        net = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 4))
        plan = {"0": ColwiseParallel(), "1": RowwiseParallel()}
        mesh = _mesh(world_size)
        return probe.call(lambda: parallelize_module(net, mesh, plan, src_data_rank=src_data_rank))

    assert one_log(run_logged(case, WORLD)) == expected


# --- distributed checkpoint ---------------------------------------------------------------


def _save(name: str) -> Callable[..., Any]:
    if name == "save_state_dict":
        return dcp.save_state_dict
    if name == "state_dict_saver.save":
        return dcp.state_dict_saver.save
    return dcp.save


def _load(name: str) -> Callable[..., Any]:
    if name == "load_state_dict":
        return dcp.load_state_dict
    if name == "state_dict_loader.load":
        return dcp.state_dict_loader.load
    return dcp.load


@pytest.mark.parametrize("name", ["save", "state_dict_saver.save", "save_state_dict"])
def test_dcp_save_of_a_plain_state_dict_plans_and_commits_with_collectives(
    probe: Probe, tmp_path: Path, name: str
) -> None:
    save = _save(name)

    def case(rank: int, world_size: int) -> OpLog:
        state = {"weight": torch.full((4,), float(rank))}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # save_state_dict is deprecated
            return probe.call(lambda: save(state, storage_writer=dcp.FileSystemWriter(tmp_path)))

    assert set(one_log(run_logged(case, WORLD))) == DCP_OPS


@pytest.mark.parametrize("name", ["load", "state_dict_loader.load", "load_state_dict"])
def test_dcp_load_issues_plan_collectives_on_every_rank(
    probe: Probe, tmp_path: Path, name: str
) -> None:
    load = _load(name)

    def case(rank: int, world_size: int) -> OpLog:
        state = {"weight": torch.ones(4)}
        dcp.save(state, storage_writer=dcp.FileSystemWriter(tmp_path))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # load_state_dict is deprecated
            return probe.call(lambda: load(state, storage_reader=dcp.FileSystemReader(tmp_path)))

    assert set(one_log(run_logged(case, WORLD))) == DCP_OPS


def test_dcp_save_with_no_dist_issues_none(probe: Probe, tmp_path: Path) -> None:
    def case(rank: int, world_size: int) -> OpLog:
        state = {"weight": torch.ones(4)}
        target = str(tmp_path / str(rank))
        return probe.call(lambda: dcp.save(state, checkpoint_id=target, no_dist=True))

    assert one_log(run_logged(case, WORLD)) == []


# --- torch.distributed.checkpoint.state_dict -------------------------------------------------


def _fsdp2_trained(world_size: int) -> tuple[torch.nn.Module, torch.optim.Optimizer]:
    from torch.distributed.fsdp import fully_shard

    model = torch.nn.Linear(4, 4)
    fully_shard(model, mesh=_mesh(world_size))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    model(torch.ones(2, 4)).sum().backward()
    optimizer.step()
    return model, optimizer


def _plain_trained() -> tuple[torch.nn.Module, torch.optim.Optimizer]:
    model = torch.nn.Linear(4, 4)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    model(torch.ones(2, 4)).sum().backward()
    optimizer.step()
    return model, optimizer


def _state_dict_call(
    name: str, model: torch.nn.Module, optimizer: torch.optim.Optimizer, options: Any = None
) -> Callable[[], Any]:
    """``sd.<name>(...)`` on the model and optimizer, setters given what the getters return."""
    if name == "get_model_state_dict":
        return lambda: sd.get_model_state_dict(model, options=options)
    if name == "get_optimizer_state_dict":
        return lambda: sd.get_optimizer_state_dict(model, optimizer, options=options)
    if name == "get_state_dict":
        return lambda: sd.get_state_dict(model, optimizer, options=options)
    weights = sd.get_model_state_dict(model, options=options)
    moments = sd.get_optimizer_state_dict(model, optimizer, options=options)
    if name == "set_model_state_dict":
        return lambda: sd.set_model_state_dict(model, weights, options=options)
    if name == "set_optimizer_state_dict":
        return lambda: sd.set_optimizer_state_dict(model, optimizer, moments, options=options)
    return lambda: sd.set_state_dict(
        model, optimizer, model_state_dict=weights, optim_state_dict=moments, options=options
    )


@pytest.mark.parametrize("name", STATE_DICT_FUNCTIONS)
def test_state_dict_function_on_an_unsharded_module_issues_none(probe: Probe, name: str) -> None:
    def case(rank: int, world_size: int) -> OpLog:
        model, optimizer = _plain_trained()
        return probe.call(_state_dict_call(name, model, optimizer))

    assert one_log(run_logged(case, WORLD)) == []


@pytest.mark.parametrize("name", STATE_DICT_FUNCTIONS)
def test_state_dict_function_on_fsdp2_with_default_sharded_options_issues_none(
    probe: Probe, name: str
) -> None:
    def case(rank: int, world_size: int) -> OpLog:
        model, optimizer = _fsdp2_trained(world_size)
        return probe.call(_state_dict_call(name, model, optimizer))

    assert one_log(run_logged(case, WORLD)) == []


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("get_model_state_dict", ["all_gather_single"] * 2),
        ("get_optimizer_state_dict", ["all_gather_single"] * 4),
        ("get_state_dict", ["all_gather_single"] * 6),
        ("set_model_state_dict", ["scatter"] * 2),
        ("set_optimizer_state_dict", ["scatter"] * 4),
        ("set_state_dict", ["scatter"] * 6),
    ],
)
def test_state_dict_function_on_fsdp2_with_full_state_dict_gathers_or_scatters_each_tensor(
    probe: Probe, name: str, expected: OpLog
) -> None:
    def case(rank: int, world_size: int) -> OpLog:
        model, optimizer = _fsdp2_trained(world_size)
        options = sd.StateDictOptions(full_state_dict=True)
        return probe.call(_state_dict_call(name, model, optimizer, options))

    assert one_log(run_logged(case, WORLD)) == expected
