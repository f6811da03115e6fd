"""Sweep public APIs of torch.distributed's fsdp, tensor and checkpoint: which issue collectives?

    python bench/recall/catalog_sweep.py [--json PATH]

Runs each API once on two threaded ranks (``run_ranks``, threads mode) with
the recorder of ``tests/analysis/walk/collective_probe.py`` and prints, per
API and condition, the collectives it issued and what the catalog says:

- ``confirmed``: it issues collectives and the catalog has a row for it;
- ``local``: it issues none and the catalog has no row;
- ``MISSING``: it issues collectives and the catalog has no row;
- ``OVER``: the catalog has a row, but under this condition it issues none
  (the row may still be right for the conditions it is meant for);
- ``configured``: it issues none, and the catalog's row counts only where a
  file spells a configuration (``CallSpec.requires``) that this condition, as a
  file would spell it, does not.

Exit code 0 (a report, not a gate); ``tests/analysis/walk/test_catalog_confirmed*.py``
are the gate for the rows the catalog has.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import torch  # noqa: E402 - after the path
import torch.distributed as dist  # noqa: E402
import torch.distributed.checkpoint as dcp  # noqa: E402
from torch.distributed.checkpoint import state_dict as sd  # noqa: E402
from torch.distributed.device_mesh import DeviceMesh, init_device_mesh  # noqa: E402
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP  # noqa: E402
from torch.distributed.fsdp import fully_shard  # noqa: E402
from torch.distributed.tensor import (  # noqa: E402
    DTensor,
    Replicate,
    Shard,
    distribute_module,
    distribute_tensor,
)

from ranklint.analysis.walk import catalog  # noqa: E402
from tests.analysis.walk.collective_probe import OpLog, Probe, patched, run_logged  # noqa: E402

CPU = torch.device("cpu")
#: One case: (probe, rank, world size) -> the collectives of the call under test.
Body = Callable[[Probe, int, int], OpLog]


@dataclass(frozen=True)
class Case:
    api: str
    condition: str
    body: Body
    qualified: str | None = None  # looked up by qualified name
    method: tuple[str, str] | None = None  # or as (method, receiver name)
    # How a file would spell this condition, for a row that counts only where its
    # configuration is spelled out (`CallSpec.requires`): `run_check=True`.
    spelled: str | None = None


@dataclass(frozen=True)
class Outcome:
    api: str
    condition: str
    ops: tuple[str, ...]
    row: str | None
    verdict: str
    error: str | None = None


def _mesh(world_size: int) -> DeviceMesh:
    return init_device_mesh("cpu", (world_size,))


def _sharded(world_size: int) -> DTensor:
    return distribute_tensor(torch.arange(16.0).reshape(4, 4), _mesh(world_size), [Shard(0)])


def _fsdp2(world_size: int, step: bool = False) -> tuple[torch.nn.Module, torch.optim.Optimizer]:
    model = torch.nn.Linear(4, 4)
    fully_shard(model, mesh=_mesh(world_size))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    if step:
        model(torch.ones(2, 4)).sum().backward()
        optimizer.step()
    return model, optimizer


def _fsdp1() -> tuple[FSDP, torch.optim.Optimizer]:
    model = FSDP(torch.nn.Linear(4, 4), device_id=CPU)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    model(torch.ones(2, 4)).sum().backward()
    optimizer.step()
    return model, optimizer


def _tp(world_size: int) -> torch.nn.Module:
    from torch.distributed.tensor.parallel import (
        ColwiseParallel,
        RowwiseParallel,
        parallelize_module,
    )

    net = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 4))
    plan = {"0": ColwiseParallel(), "1": RowwiseParallel()}
    return parallelize_module(net, _mesh(world_size), plan)


def _parallelize(probe: Probe, rank: int, world_size: int) -> OpLog:
    from torch.distributed.tensor.parallel import ColwiseParallel, parallelize_module

    net = torch.nn.Sequential(torch.nn.Linear(4, 4))
    mesh = _mesh(world_size)
    return probe.call(lambda: parallelize_module(net, mesh, {"0": ColwiseParallel()}))


def _tensor_cases() -> list[Case]:
    full = "torch.distributed.tensor"
    return [
        Case(
            "distribute_tensor",
            "Shard(0)",
            lambda p, r, w: _call_distribute(p, w),
            f"{full}.distribute_tensor",
        ),
        Case(
            "distribute_tensor",
            "src_data_rank=None",
            lambda p, r, w: p.call(
                lambda: distribute_tensor(torch.ones(4), _mesh(w), [Shard(0)], src_data_rank=None)
            ),
            f"{full}.distribute_tensor",
        ),
        Case(
            "DTensor.from_local",
            "default (run_check=False)",
            lambda p, r, w: _from_local(p, w, check=False),
            f"{full}.DTensor.from_local",
            spelled="DTensor.from_local(t, mesh, [Replicate()])",
        ),
        Case(
            "DTensor.from_local",
            "run_check=True",
            lambda p, r, w: _from_local(p, w, check=True),
            f"{full}.DTensor.from_local",
            spelled="DTensor.from_local(t, mesh, [Replicate()], run_check=True)",
        ),
        Case("DTensor.to_local", "Shard(0)", lambda p, r, w: _on_dtensor(p, w, "to_local")),
        Case("DTensor.__repr__", "Shard(0)", lambda p, r, w: _on_dtensor(p, w, "__repr__")),
        Case(
            "DTensor.full_tensor",
            "Shard(0)",
            lambda p, r, w: _on_dtensor(p, w, "full_tensor"),
            method=("full_tensor", "tensor"),
        ),
        Case(
            "DTensor.full_tensor",
            "Replicate()",
            lambda p, r, w: p.call(_replicated(w).full_tensor),
            method=("full_tensor", "tensor"),
        ),
        Case(
            "DTensor.redistribute",
            "Shard(0) -> Replicate()",
            lambda p, r, w: _redistribute(p, w, Replicate()),
            method=("redistribute", "tensor"),
        ),
        Case(
            "DTensor.redistribute",
            "Shard(0) -> Shard(0)",
            lambda p, r, w: _redistribute(p, w, Shard(0)),
            method=("redistribute", "tensor"),
        ),
        Case(
            "DTensor arithmetic (d + d, d.sum())",
            "Shard(0)",
            lambda p, r, w: _arith(p, w),
        ),
        Case(
            "DTensor matmul (d @ d)",
            "Shard(0) @ Shard(0): redistributes an operand",
            lambda p, r, w: _matmul(p, w),
        ),
        Case(
            "distribute_module",
            "default partition (replicate every parameter)",
            lambda p, r, w: p.call(lambda: distribute_module(torch.nn.Linear(4, 4), _mesh(w))),
            f"{full}.distribute_module",
        ),
        Case(
            "parallelize_module",
            "ColwiseParallel",
            _parallelize,
            f"{full}.parallel.parallelize_module",
        ),
        Case(
            "tensor-parallel module forward",
            "Colwise then Rowwise",
            lambda p, r, w: _tp_forward(p, w),
        ),
        Case(
            "init_device_mesh",
            "1-D",
            lambda p, r, w: p.call(lambda: init_device_mesh("cpu", (w,))),
            "torch.distributed.device_mesh.init_device_mesh",
        ),
        Case(
            "init_device_mesh",
            "2-D (1 x world)",
            lambda p, r, w: p.call(
                lambda: init_device_mesh("cpu", (1, w), mesh_dim_names=("a", "b"))
            ),
            "torch.distributed.device_mesh.init_device_mesh",
        ),
        Case(
            "torch.nn.utils.clip_grad_norm_",
            "FSDP2 (DTensor) gradients",
            lambda p, r, w: _clip(p, w, "clip_grad_norm_"),
            "torch.nn.utils.clip_grad_norm_",
        ),
        Case(
            "torch.nn.utils.get_total_norm",
            "FSDP2 (DTensor) gradients",
            lambda p, r, w: _clip(p, w, "get_total_norm"),
            "torch.nn.utils.get_total_norm",
        ),
        Case(
            "torch.nn.utils.clip_grad_value_",
            "FSDP2 (DTensor) gradients",
            lambda p, r, w: _clip(p, w, "clip_grad_value_"),
            "torch.nn.utils.clip_grad_value_",
        ),
    ]


def _call_distribute(probe: Probe, world_size: int) -> OpLog:
    mesh = _mesh(world_size)
    return probe.call(lambda: distribute_tensor(torch.ones(4, 4), mesh, [Shard(0)]))


def _from_local(probe: Probe, world_size: int, *, check: bool) -> OpLog:
    mesh = _mesh(world_size)
    return probe.call(
        lambda: DTensor.from_local(torch.ones(2), mesh, [Replicate()], run_check=check)
    )


def _on_dtensor(probe: Probe, world_size: int, method: str) -> OpLog:
    tensor = _sharded(world_size)
    return probe.call(getattr(tensor, method))


def _replicated(world_size: int) -> DTensor:
    return distribute_tensor(torch.ones(4), _mesh(world_size), [Replicate()])


def _redistribute(probe: Probe, world_size: int, target: Any) -> OpLog:
    tensor = _sharded(world_size)
    return probe.call(lambda: tensor.redistribute(tensor.device_mesh, [target]))


def _arith(probe: Probe, world_size: int) -> OpLog:
    tensor = _sharded(world_size)
    return probe.call(lambda: ((tensor + tensor), tensor.sum()))


def _matmul(probe: Probe, world_size: int) -> OpLog:
    tensor = _sharded(world_size)
    return probe.call(lambda: tensor @ tensor)


def _tp_forward(probe: Probe, world_size: int) -> OpLog:
    net = _tp(world_size)
    return probe.call(lambda: net(torch.ones(2, 4)))


def _clip(probe: Probe, world_size: int, name: str) -> OpLog:
    model, _ = _fsdp2(world_size)
    model(torch.ones(2, 4)).sum().backward()
    params = list(model.parameters())
    if name == "get_total_norm":
        return probe.call(lambda: torch.nn.utils.get_total_norm([q.grad for q in params]))
    return probe.call(lambda: getattr(torch.nn.utils, name)(params, 1.0))


def _fsdp_cases() -> list[Case]:
    module = catalog.FSDP_MODULE
    fsdp1 = "torch.distributed.fsdp.FullyShardedDataParallel"
    return [
        Case(
            "fully_shard",
            "construction",
            lambda p, r, w: p.call(lambda: _fsdp2(w)),
            "torch.distributed.fsdp.fully_shard",
        ),
        Case(
            "FSDPModule.unshard",
            "after construction",
            lambda p, r, w: _fsdp2_method(p, w, "unshard"),
            f"{module}.unshard",
        ),
        Case(
            "FSDPModule.reshard",
            "after construction",
            lambda p, r, w: _fsdp2_method(p, w, "reshard"),
            f"{module}.reshard",
        ),
        Case(
            "FSDPModule.state_dict",
            "nn.Module.state_dict of a sharded module",
            lambda p, r, w: _fsdp2_method(p, w, "state_dict"),
            f"{module}.state_dict",
        ),
        Case(
            "FSDPModule.set_requires_gradient_sync",
            "False",
            lambda p, r, w: p.call(lambda: _fsdp2(w)[0].set_requires_gradient_sync(False)),
            f"{module}.set_requires_gradient_sync",
        ),
        Case(
            "FullyShardedDataParallel(...)",
            "construction, CPU, default options",
            lambda p, r, w: p.call(lambda: FSDP(torch.nn.Linear(4, 4), device_id=CPU)),
            fsdp1,
        ),
        Case(
            "FSDP.state_dict_type",
            "entering and leaving the context",
            lambda p, r, w: _fsdp1_state_dict_type(p),
            f"{fsdp1}.state_dict_type",
        ),
        Case(
            "FSDP.sharded_optim_state_dict",
            "after a step",
            lambda p, r, w: _fsdp1_static(p, "sharded_optim_state_dict"),
            f"{fsdp1}.sharded_optim_state_dict",
        ),
        Case(
            "FSDP.full_optim_state_dict",
            "rank0_only=True (default)",
            lambda p, r, w: _fsdp1_static(p, "full_optim_state_dict"),
            f"{fsdp1}.full_optim_state_dict",
        ),
        Case(
            "FSDP.load_state_dict",
            "FULL_STATE_DICT (default)",
            lambda p, r, w: _fsdp1_load(p),
            f"{fsdp1}.load_state_dict",
        ),
        Case(
            "FSDP.no_sync",
            "entering and leaving the context",
            lambda p, r, w: _fsdp1_no_sync(p),
            f"{fsdp1}.no_sync",
        ),
    ]


def _fsdp2_method(probe: Probe, world_size: int, name: str) -> OpLog:
    model, _ = _fsdp2(world_size)
    return probe.call(getattr(model, name))


def _fsdp1_static(probe: Probe, name: str) -> OpLog:
    model, optimizer = _fsdp1()
    return probe.call(lambda: getattr(FSDP, name)(model, optimizer))


def _fsdp1_state_dict_type(probe: Probe) -> OpLog:
    from torch.distributed.fsdp import StateDictType

    model, _ = _fsdp1()

    def enter() -> None:
        with FSDP.state_dict_type(model, StateDictType.SHARDED_STATE_DICT):
            pass

    return probe.call(enter)


def _fsdp1_load(probe: Probe) -> OpLog:
    model, _ = _fsdp1()
    state = model.state_dict()
    return probe.call(lambda: model.load_state_dict(state))


def _fsdp1_no_sync(probe: Probe) -> OpLog:
    model, _ = _fsdp1()

    def enter() -> None:
        with model.no_sync():
            pass

    return probe.call(enter)


def _checkpoint_cases(directory: Path) -> list[Case]:
    state = "torch.distributed.checkpoint.state_dict"
    full = sd.StateDictOptions(full_state_dict=True)
    offload = sd.StateDictOptions(full_state_dict=True, cpu_offload=True)
    return [
        Case(
            "dcp.save",
            "plain tensors",
            lambda p, r, w: p.call(
                lambda: dcp.save({"w": torch.ones(4)}, checkpoint_id=str(directory / "a"))
            ),
            "torch.distributed.checkpoint.save",
        ),
        Case(
            "dcp.save",
            "no_dist=True",
            lambda p, r, w: p.call(
                lambda: dcp.save(
                    {"w": torch.ones(4)}, checkpoint_id=str(directory / f"b{r}"), no_dist=True
                )
            ),
            "torch.distributed.checkpoint.save",
        ),
        Case(
            "dcp.load",
            "plain tensors",
            lambda p, r, w: _load(p, directory),
            "torch.distributed.checkpoint.load",
        ),
        *(
            Case(
                f"state_dict.{name}",
                condition,
                _state_dict_body(name, options, sharded),
                f"{state}.{name}",
                spelled=_spelled_options(options),
            )
            for name in ("get_model_state_dict", "get_optimizer_state_dict")
            for condition, options, sharded in (
                ("plain module", None, False),
                ("FSDP2, default options", None, True),
                ("FSDP2, full_state_dict=True", full, True),
                ("FSDP2, full_state_dict=True, cpu_offload=True", offload, True),
            )
        ),
        *(
            Case(
                f"state_dict.{name}",
                condition,
                _state_dict_body(name, options, sharded),
                f"{state}.{name}",
                spelled=_spelled_options(options),
            )
            for name in ("set_model_state_dict", "set_optimizer_state_dict")
            for condition, options, sharded in (
                ("plain module", None, False),
                ("FSDP2, default options", None, True),
                ("FSDP2, full_state_dict=True", full, True),
            )
        ),
    ]


def _spelled_options(options: Any) -> str:
    """The options as a file would pass them (`fully_shard` is in the file either way)."""
    if options is None:
        return "fully_shard(model); get_model_state_dict(model)"
    fields = ", ".join(
        f"{name}=True" for name in ("full_state_dict", "cpu_offload") if getattr(options, name)
    )
    return f"fully_shard(model); options=StateDictOptions({fields})"


def _load(probe: Probe, directory: Path) -> OpLog:
    target = str(directory / "load")
    dcp.save({"w": torch.ones(4)}, checkpoint_id=target)
    return probe.call(lambda: dcp.load({"w": torch.zeros(4)}, checkpoint_id=target))


def _state_dict_body(name: str, options: Any, sharded: bool) -> Body:
    def body(probe: Probe, rank: int, world_size: int) -> OpLog:
        if sharded:
            model, optimizer = _fsdp2(world_size, step=True)
        else:
            model = torch.nn.Linear(4, 4)
            optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
            model(torch.ones(2, 4)).sum().backward()
            optimizer.step()
        if name == "get_model_state_dict":
            return probe.call(lambda: sd.get_model_state_dict(model, options=options))
        if name == "get_optimizer_state_dict":
            return probe.call(
                lambda: sd.get_optimizer_state_dict(model, optimizer, options=options)
            )
        if name == "set_model_state_dict":
            weights = sd.get_model_state_dict(model, options=options)
            return probe.call(lambda: sd.set_model_state_dict(model, weights, options=options))
        moments = sd.get_optimizer_state_dict(model, optimizer, options=options)
        return probe.call(
            lambda: sd.set_optimizer_state_dict(model, optimizer, moments, options=options)
        )

    return body


def _row(case: Case) -> catalog.CallSpec | None:
    if case.qualified is not None:
        found = catalog.lookup(case.qualified)
        if found is not None:
            return found
    if case.method is not None:
        return catalog.lookup_method(*case.method)
    return None


def _verdict(ops: OpLog, row: catalog.CallSpec | None, spelled: str | None = None) -> str:
    configured_out = (
        row is not None
        and row.requires is not None
        and spelled is not None
        and re.search(row.requires, spelled) is None
    )
    if configured_out:
        return "MISSING" if ops else "configured"
    if ops and row is not None:
        return "confirmed"
    if ops:
        return "MISSING"
    return "OVER" if row is not None and row.kind.name != "GROUP_CREATION" else "local"


def sweep(world_size: int = 2) -> list[Outcome]:
    """Run every case; one outcome each (an error is an outcome too)."""
    outcomes = []
    with tempfile.TemporaryDirectory() as tmp, patched() as probe, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = [*_tensor_cases(), *_fsdp_cases(), *_checkpoint_cases(Path(tmp))]
        for case in cases:
            row = _row(case)
            name = row.name if row is not None else None
            try:
                logs = run_logged(_bind(case.body, probe), world_size)
            except Exception as error:
                text = f"{type(error).__name__}: {str(error).splitlines()[0][:160]}"
                outcomes.append(Outcome(case.api, case.condition, (), name, "error", text))
                continue
            ops = logs[0]
            same = all(log == ops for log in logs)
            verdict = _verdict(ops, row, case.spelled) if same else "ranks differ"
            outcomes.append(Outcome(case.api, case.condition, tuple(ops), name, verdict))
    return outcomes


def _bind(body: Body, probe: Probe) -> Callable[[int, int], OpLog]:
    def fn(rank: int, world_size: int) -> OpLog:
        return body(probe, rank, world_size)

    return fn


def _summary(ops: tuple[str, ...]) -> str:
    if not ops:
        return "none"
    counts: dict[str, int] = {}
    for op in ops:
        counts[op] = counts.get(op, 0) + 1
    return ", ".join(f"{op} x{n}" if n > 1 else op for op, n in counts.items())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the outcomes as JSON here")
    args = parser.parse_args(argv)
    if not dist.is_available():
        print("torch.distributed is not available")
        return 2
    outcomes = sweep()
    print(f"torch {torch.__version__}, 2 threaded ranks")
    print("| API | condition | collectives issued | catalog row | verdict |")
    print("| --- | --- | --- | --- | --- |")
    for outcome in outcomes:
        issued = outcome.error or _summary(outcome.ops)
        print(
            f"| {outcome.api} | {outcome.condition} | {issued} "
            f"| {outcome.row or '-'} | {outcome.verdict} |"
        )
    if args.json is not None:
        rows = [outcome.__dict__ for outcome in outcomes]
        args.json.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
