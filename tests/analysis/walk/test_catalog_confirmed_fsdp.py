"""The catalog's implicit collectives of wrapped models, confirmed: FSDP1, FSDP2 and DDP.

As in ``test_catalog_confirmed.py``: each test runs one call on two threaded
ranks and asserts the collectives it issues. FSDP1 runs on CPU only with
``device_id=torch.device("cpu")``. A model that trained one step has resharded
its parameters (FSDP1's root keeps them unsharded after a forward alone, and
then its state_dict() gathers nothing), so the cases start from one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

torch = pytest.importorskip("torch", reason="confirming the catalog runs torch")

from torch.distributed.device_mesh import init_device_mesh  # noqa: E402 - after the skip
from torch.distributed.fsdp import (  # noqa: E402
    FullOptimStateDictConfig,
    FullStateDictConfig,
    StateDictType,
    fully_shard,
)
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP  # noqa: E402
from torch.distributed.fsdp.wrap import ModuleWrapPolicy  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

from tests.analysis.walk.collective_probe import (  # noqa: E402
    CONFIRMATION_MARKS,
    OpLog,
    Probe,
    patched,
    run_logged,
)

pytestmark = [pytest.mark.distributed, *CONFIRMATION_MARKS]

WORLD = 2
CPU = torch.device("cpu")
#: FSDP1's optimizer state dict with full (unflattened) state: rank 0's keys
#: broadcast, missing keys counted, then each state tensor all-gathered.
FSDP1_OPTIM_STATE = ["broadcast", "broadcast", "all_reduce"] + ["all_gather_single"] * 2


@pytest.fixture
def probe() -> Iterator[Probe]:
    with patched() as installed:
        yield installed


def one_log(logs: list[OpLog]) -> OpLog:
    """The op sequence every rank issued (they must agree)."""
    assert all(log == logs[0] for log in logs), logs
    return logs[0]


class TwoLayers(torch.nn.Module):
    """A model with a ``generate`` that runs its layers outside ``forward``."""

    def __init__(self) -> None:
        super().__init__()
        self.first = torch.nn.Linear(4, 4)
        self.second = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.second(self.first(x))

    @torch.no_grad()
    def generate(self, x: torch.Tensor) -> torch.Tensor:
        return self.second(self.first(x))


def _fsdp1_trained() -> tuple[FSDP, torch.optim.Optimizer]:
    torch.manual_seed(0)
    model = FSDP(torch.nn.Linear(4, 4), device_id=CPU)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    model(torch.ones(2, 4)).sum().backward()
    optimizer.step()
    return model, optimizer


def _fsdp1_case(probe: Probe, call: Callable[[FSDP, torch.optim.Optimizer, int], Any]) -> OpLog:
    def case(rank: int, world_size: int) -> OpLog:
        model, optimizer = _fsdp1_trained()
        return probe.call(lambda: call(model, optimizer, rank))

    return one_log(run_logged(case, WORLD))


# --- FSDP1: forward, generate, state_dict, summon_full_params, clip_grad_norm_ ----------------


@pytest.mark.parametrize("how", ["call", "forward"])
def test_fsdp1_forward_all_gathers_the_flat_parameter(probe: Probe, how: str) -> None:
    def case(rank: int, world_size: int) -> OpLog:
        model = FSDP(torch.nn.Linear(4, 4), device_id=CPU)
        run = model if how == "call" else model.forward
        return probe.call(lambda: run(torch.ones(2, 4)))

    assert one_log(run_logged(case, WORLD)) == ["all_gather"]


def test_fsdp1_generate_of_auto_wrapped_layers_all_gathers_each_layer(probe: Probe) -> None:
    def case(rank: int, world_size: int) -> OpLog:
        policy = ModuleWrapPolicy({torch.nn.Linear})
        model = FSDP(TwoLayers(), device_id=CPU, auto_wrap_policy=policy)
        return probe.call(lambda: model.generate(torch.ones(2, 4)))

    assert one_log(run_logged(case, WORLD)) == ["all_gather", "all_gather"]


@pytest.mark.parametrize(
    ("state_dict_type", "config", "expected"),
    [
        (None, None, ["all_gather"]),
        (StateDictType.FULL_STATE_DICT, FullStateDictConfig(rank0_only=True), ["all_gather"]),
        (StateDictType.LOCAL_STATE_DICT, None, ["all_gather", "all_gather"]),
        (StateDictType.SHARDED_STATE_DICT, None, ["all_gather"]),
    ],
    ids=["default-full", "full-rank0-only", "local", "sharded"],
)
def test_fsdp1_state_dict_issues_collectives_in_every_state_dict_type(
    probe: Probe, state_dict_type: StateDictType | None, config: Any, expected: OpLog
) -> None:
    def call(model: FSDP, optimizer: torch.optim.Optimizer, rank: int) -> None:
        if state_dict_type is None:
            model.state_dict()
            return
        with FSDP.state_dict_type(model, state_dict_type, config):
            model.state_dict()

    assert _fsdp1_case(probe, call) == expected


def test_fsdp1_load_state_dict_all_gathers_to_write_the_full_parameters(probe: Probe) -> None:
    def case(rank: int, world_size: int) -> OpLog:
        model, _ = _fsdp1_trained()
        state = model.state_dict()
        return probe.call(lambda: model.load_state_dict(state))

    assert one_log(run_logged(case, WORLD)) == ["all_gather"]


@pytest.mark.parametrize("rank0_only", [False, True])
def test_fsdp1_summon_full_params_all_gathers_even_for_rank0_only(
    probe: Probe, rank0_only: bool
) -> None:
    def call(model: FSDP, optimizer: torch.optim.Optimizer, rank: int) -> None:
        with FSDP.summon_full_params(model, rank0_only=rank0_only, writeback=not rank0_only):
            pass

    assert _fsdp1_case(probe, call) == ["all_gather"]


def test_fsdp1_clip_grad_norm_method_all_reduces_the_norm(probe: Probe) -> None:
    assert _fsdp1_case(probe, lambda model, optimizer, rank: model.clip_grad_norm_(1.0)) == [
        "all_reduce"
    ]


def test_torch_clip_grad_norm_function_on_fsdp1_flat_parameters_issues_none(probe: Probe) -> None:
    def call(model: FSDP, optimizer: torch.optim.Optimizer, rank: int) -> None:
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)

    assert _fsdp1_case(probe, call) == []


# --- FSDP1: optimizer state dicts ----------------------------------------------------------------


def _optim_state_dict(
    model: FSDP, optimizer: torch.optim.Optimizer, rank0_only: bool | None
) -> dict[str, Any]:
    if rank0_only is None:
        return FSDP.optim_state_dict(model, optimizer)
    config = FullOptimStateDictConfig(rank0_only=rank0_only)
    with FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, None, config):
        return FSDP.optim_state_dict(model, optimizer)


@pytest.mark.parametrize("rank0_only", [None, False, True], ids=["default", "all", "rank0"])
def test_fsdp1_optim_state_dict_gathers_with_or_without_rank0_only(
    probe: Probe, rank0_only: bool | None
) -> None:
    def call(model: FSDP, optimizer: torch.optim.Optimizer, rank: int) -> None:
        _optim_state_dict(model, optimizer, rank0_only)

    assert _fsdp1_case(probe, call) == FSDP1_OPTIM_STATE


@pytest.mark.parametrize("rank0_only", [True, False])
def test_fsdp1_full_optim_state_dict_gathers_on_every_rank(probe: Probe, rank0_only: bool) -> None:
    def call(model: FSDP, optimizer: torch.optim.Optimizer, rank: int) -> None:
        FSDP.full_optim_state_dict(model, optimizer, rank0_only=rank0_only)

    assert _fsdp1_case(probe, call) == FSDP1_OPTIM_STATE


def test_fsdp1_sharded_optim_state_dict_gathers_like_the_full_one(probe: Probe) -> None:
    def call(model: FSDP, optimizer: torch.optim.Optimizer, rank: int) -> None:
        FSDP.sharded_optim_state_dict(model, optimizer)

    assert _fsdp1_case(probe, call) == FSDP1_OPTIM_STATE


def _load_probe(probe: Probe, rank0_only: bool) -> OpLog:
    def case(rank: int, world_size: int) -> OpLog:
        model, optimizer = _fsdp1_trained()
        full = _optim_state_dict(model, optimizer, rank0_only)
        config = FullOptimStateDictConfig(rank0_only=rank0_only)
        with (
            probe.capture() as log,
            FSDP.state_dict_type(model, StateDictType.FULL_STATE_DICT, None, config),
        ):
            FSDP.optim_state_dict_to_load(model, optimizer, full)
        return log

    return one_log(run_logged(case, WORLD))


def test_fsdp1_optim_state_dict_to_load_with_rank0_only_broadcasts_rank_zeros_state(
    probe: Probe,
) -> None:
    log = _load_probe(probe, rank0_only=True)

    assert log
    assert set(log) == {"broadcast"}


def test_fsdp1_optim_state_dict_to_load_without_rank0_only_issues_none(probe: Probe) -> None:
    assert _load_probe(probe, rank0_only=False) == []


def test_fsdp1_scatter_full_optim_state_dict_broadcasts_from_rank_zero(probe: Probe) -> None:
    def case(rank: int, world_size: int) -> OpLog:
        model, optimizer = _fsdp1_trained()
        full = FSDP.full_optim_state_dict(model, optimizer, rank0_only=False)
        return probe.call(
            lambda: FSDP.scatter_full_optim_state_dict(full if rank == 0 else None, model)
        )

    log = one_log(run_logged(case, WORLD))
    assert log
    assert set(log) == {"broadcast"}


def test_fsdp1_shard_full_optim_state_dict_issues_none(probe: Probe) -> None:
    def case(rank: int, world_size: int) -> OpLog:
        model, optimizer = _fsdp1_trained()
        full = FSDP.full_optim_state_dict(model, optimizer, rank0_only=False)
        return probe.call(lambda: FSDP.shard_full_optim_state_dict(full, model))

    assert one_log(run_logged(case, WORLD)) == []


# --- torch.distributed.checkpoint.state_dict on FSDP1 (sharded by construction) ----------------


def test_get_model_state_dict_on_fsdp1_gathers_with_default_options(probe: Probe) -> None:
    from torch.distributed.checkpoint.state_dict import get_model_state_dict

    assert _fsdp1_case(probe, lambda model, optimizer, rank: get_model_state_dict(model)) == [
        "all_gather"
    ]


def test_get_optimizer_state_dict_on_fsdp1_gathers_with_default_options(probe: Probe) -> None:
    from torch.distributed.checkpoint.state_dict import get_optimizer_state_dict

    def call(model: FSDP, optimizer: torch.optim.Optimizer, rank: int) -> None:
        get_optimizer_state_dict(model, optimizer)

    assert _fsdp1_case(probe, call) == FSDP1_OPTIM_STATE


# --- FSDP2 (fully_shard) -----------------------------------------------------------------


def _fsdp2_two_layers(world_size: int) -> TwoLayers:
    mesh = init_device_mesh("cpu", (world_size,))
    model = TwoLayers()
    fully_shard(model.first, mesh=mesh)
    fully_shard(model.second, mesh=mesh)
    fully_shard(model, mesh=mesh)
    return model


def test_fully_shard_construction_issues_none(probe: Probe) -> None:
    def case(rank: int, world_size: int) -> OpLog:
        return probe.call(lambda: _fsdp2_two_layers(world_size))

    assert one_log(run_logged(case, WORLD)) == []


@pytest.mark.parametrize("how", ["call", "forward", "generate"])
def test_fsdp2_forward_and_generate_all_gather_each_sharded_layer(probe: Probe, how: str) -> None:
    def case(rank: int, world_size: int) -> OpLog:
        model = _fsdp2_two_layers(world_size)
        model(torch.ones(2, 4))  # the first call makes `model` the root
        run = {"call": model, "forward": model.forward, "generate": model.generate}[how]
        return probe.call(lambda: run(torch.ones(2, 4)))

    assert one_log(run_logged(case, WORLD)) == ["all_gather_single", "all_gather_single"]


def test_fsdp2_unshard_all_gathers_and_reshard_issues_none(probe: Probe) -> None:
    def case(rank: int, world_size: int) -> OpLog:
        model = torch.nn.Linear(4, 4)
        fully_shard(model, mesh=init_device_mesh("cpu", (world_size,)))
        return [*probe.call(model.unshard), "|", *probe.call(model.reshard)]

    assert one_log(run_logged(case, WORLD)) == ["all_gather_single", "|"]


def test_torch_clip_grad_norm_function_on_fsdp2_dtensor_grads_all_reduces(probe: Probe) -> None:
    def case(rank: int, world_size: int) -> OpLog:
        model = _fsdp2_two_layers(world_size)
        model(torch.ones(2, 4)).sum().backward()
        return probe.call(lambda: torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0))

    assert one_log(run_logged(case, WORLD)) == ["all_reduce"]


# --- DDP ---------------------------------------------------------------------------------


def _with_buffers() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4))


def test_ddp_construction_verifies_shapes_and_broadcasts_module_states(probe: Probe) -> None:
    def case(rank: int, world_size: int) -> OpLog:
        return probe.call(lambda: DDP(torch.nn.Linear(4, 4)))

    assert one_log(run_logged(case, WORLD)) == ["all_gather", "broadcast", "broadcast"]


@pytest.mark.parametrize("mode", ["train", "eval-no-grad"])
def test_ddp_forward_of_a_model_with_buffers_broadcasts_them(probe: Probe, mode: str) -> None:
    def case(rank: int, world_size: int) -> OpLog:
        model = DDP(_with_buffers())
        if mode == "train":
            return probe.call(lambda: model(torch.ones(2, 4)))
        model.eval()
        with torch.no_grad():
            return probe.call(lambda: model(torch.ones(2, 4)))

    log = one_log(run_logged(case, WORLD))
    assert log
    assert set(log) == {"broadcast"}


@pytest.mark.parametrize("variant", ["no-buffers", "broadcast_buffers=False"])
def test_ddp_forward_without_buffers_to_broadcast_issues_none(probe: Probe, variant: str) -> None:
    def case(rank: int, world_size: int) -> OpLog:
        if variant == "no-buffers":
            model = DDP(torch.nn.Linear(4, 4))
        else:
            model = DDP(_with_buffers(), broadcast_buffers=False)
        return probe.call(lambda: model(torch.ones(2, 4)))

    assert one_log(run_logged(case, WORLD)) == []
