"""Rank functions for the runtime companion's tests (ranklint.runtime.run_ranks).

Each function is ``fn(rank, world_size, *inputs)``. Lines the tests look for
carry a ``# site: NAME`` comment; :func:`line_of` finds them, so the tests do
not hard-code line numbers.
"""

from __future__ import annotations

import os
import random
import signal
import threading
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

HERE = Path(__file__).resolve()
#: Set by a test to release the rank that spins forever in :func:`spins_forever`.
RELEASE = threading.Event()


def line_of(marker: str) -> int:
    """The line of this file that carries ``# site: marker``."""
    for number, line in enumerate(HERE.read_text(encoding="utf-8").splitlines(), start=1):
        if line.rstrip().endswith(f"# site: {marker}"):
            return number
    raise LookupError(marker)


def balanced_sum(rank: int, world_size: int) -> list[float]:
    tensor = torch.full((4,), float(rank + 1))
    dist.all_reduce(tensor)
    return tensor.tolist()


def guarded_all_reduce(rank: int, world_size: int) -> None:
    tensor = torch.ones(4)
    dist.all_reduce(tensor)
    if rank == 0:
        dist.all_reduce(tensor)  # site: guarded


def mismatched_ops(rank: int, world_size: int) -> None:
    tensor = torch.ones(4)
    if rank == 0:
        dist.all_reduce(tensor)  # site: mismatch-reduce
    else:
        dist.broadcast(tensor, src=0)  # site: mismatch-broadcast


def _save() -> None:
    _flush()


def _flush() -> None:
    dist.barrier()  # site: deep-barrier


def barrier_two_calls_deep(rank: int, world_size: int) -> None:
    if rank == 0:
        _save()  # site: deep-call


def rank_dependent_loop(rank: int, world_size: int) -> None:
    for _ in range(rank + 1):
        dist.all_reduce(torch.ones(2))  # site: loop


def balanced_branch(rank: int, world_size: int) -> float:
    tensor = torch.ones(3)
    if rank == 0:
        tensor *= 2
        dist.all_reduce(tensor)
    else:
        dist.all_reduce(tensor)
    return float(tensor.sum())


def rank_dependent_src(rank: int, world_size: int) -> None:
    dist.broadcast(torch.ones(2), src=rank)  # site: src


def rank_dependent_op(rank: int, world_size: int) -> None:
    op = dist.ReduceOp.SUM if rank == 0 else dist.ReduceOp.MAX
    dist.all_reduce(torch.ones(2), op=op)  # site: op


def different_shapes(rank: int, world_size: int) -> None:
    dist.all_reduce(torch.ones(2 + rank))  # site: shapes


def different_dtypes(rank: int, world_size: int) -> None:
    dist.all_reduce(torch.ones(2, dtype=torch.float32 if rank == 0 else torch.int64))


def reduce_to_root(rank: int, world_size: int) -> list[float]:
    tensor = torch.full((2,), float(rank + 1))
    dist.reduce(tensor, dst=1, op=dist.ReduceOp.MAX)
    return tensor.tolist()


def group_on_some_ranks(rank: int, world_size: int) -> None:
    members = [0] if rank == 0 else list(range(world_size))
    dist.new_group(members)  # site: new-group


def subgroups(rank: int, world_size: int) -> list[float]:
    """Two groups of two; each sums within its group."""
    low = dist.new_group([0, 1])
    high = dist.new_group([2, 3])
    tensor = torch.full((2,), float(rank))
    dist.all_reduce(tensor, group=low if rank < 2 else high)
    return tensor.tolist()


def fails_on_rank_one(rank: int, world_size: int) -> None:
    dist.all_reduce(torch.ones(1))
    if rank == 1:
        raise ValueError("bad batch on rank 1")  # site: raise


def spins_forever(rank: int, world_size: int) -> None:
    dist.all_reduce(torch.ones(1))
    if rank == 1:
        # One line, so that the stack read at the deadline is on it whenever it is read.
        while not RELEASE.wait(0.01):  # site: spin
            pass


def exits_without_outcome(rank: int, world_size: int) -> None:
    dist.all_reduce(torch.ones(1))
    if rank == 1:
        os._exit(3)  # site: exit
    dist.all_reduce(torch.ones(1))


def killed_by_signal(rank: int, world_size: int) -> None:
    dist.all_reduce(torch.ones(1))
    if rank == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    dist.all_reduce(torch.ones(1))


def raises_before_its_collective(rank: int, world_size: int) -> None:
    if rank == 1:
        raise KeyError("no batch for rank 1")  # site: key-error
    dist.all_reduce(torch.ones(1))


def nests_a_threads_run(rank: int, world_size: int) -> list[Any]:
    from ranklint.runtime import run_ranks

    return run_ranks(balanced_sum, 2)


def nests_a_gloo_run(rank: int, world_size: int) -> list[Any]:
    from ranklint.runtime import run_ranks

    return run_ranks(balanced_sum, 2, mode="gloo", timeout=10)


def group_created_on_one_side(rank: int, world_size: int) -> None:
    if rank == 0:
        dist.new_group([0, 1])  # site: one-side-group
    dist.barrier()  # site: one-side-barrier


def random_draws(rank: int, world_size: int) -> tuple[float, float, str]:
    first = torch.rand(1).item()
    dist.all_reduce(torch.ones(1))
    second = random.random()
    import os

    return first, second, os.environ["RANK"]


def uneven_loader(rank: int, world_size: int, batches: list[torch.Tensor]) -> int:
    """Sums the loss over this rank's batches: each step all-reduces it."""
    for batch in batches:
        loss = batch.mean()
        dist.all_reduce(loss)  # site: loader
    return len(batches)


def metric_keys(rank: int, world_size: int, metrics: dict[str, float]) -> dict[str, float]:
    """Averages a metrics dict key by key, in the rank's own key order."""
    out = {}
    for key in sorted(metrics):
        value = torch.tensor(metrics[key])
        dist.all_reduce(value, op=dist.ReduceOp.SUM)  # site: metrics
        out[key] = float(value) / world_size
    return out


def _mesh(world_size: int) -> Any:
    from torch.distributed.device_mesh import init_device_mesh

    return init_device_mesh("cpu", (world_size,))


def full_tensor_everywhere(rank: int, world_size: int) -> list[float]:
    from torch.distributed.tensor import Shard, distribute_tensor

    mesh = _mesh(world_size)
    sharded = distribute_tensor(torch.arange(8.0).reshape(4, 2), mesh, [Shard(0)])
    return sharded.full_tensor().flatten().tolist()


def full_tensor_on_rank_zero(rank: int, world_size: int) -> None:
    from torch.distributed.tensor import Shard, distribute_tensor

    mesh = _mesh(world_size)
    sharded = distribute_tensor(torch.arange(8.0).reshape(4, 2), mesh, [Shard(0)])
    if rank == 0:
        sharded.full_tensor()  # site: full-tensor


def fsdp2_step(rank: int, world_size: int) -> list[float]:
    from torch.distributed.fsdp import fully_shard

    mesh = _mesh(world_size)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    fully_shard(model[0], mesh=mesh)
    fully_shard(model[2], mesh=mesh)
    fully_shard(model, mesh=mesh)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    generator = torch.Generator().manual_seed(rank)
    loss = model(torch.randn(4, 8, generator=generator)).square().mean()
    loss.backward()
    optimizer.step()
    return [float(p.detach().full_tensor().sum()) for p in model.parameters()]


async def async_sum(rank: int, world_size: int) -> float:
    tensor = torch.ones(1)
    dist.all_reduce(tensor)
    return float(tensor)


def every_collective(rank: int, world_size: int, extra: bool = False) -> dict[str, object]:
    """Each collective of the threaded group once, with values that show it moved the data;
    with ``extra``, rank 0 issues one barrier more (to read the ranks' logs)."""
    out: dict[str, object] = {}
    mine = torch.tensor([float(rank)])
    gathered = [torch.zeros(1) for _ in range(world_size)]
    dist.all_gather(gathered, mine)
    out["all_gather"] = [g.item() for g in gathered]
    flat = torch.zeros(world_size)
    dist.all_gather_into_tensor(flat, mine)
    out["all_gather_into_tensor"] = flat.tolist()
    sent = torch.tensor([float(rank)])
    dist.broadcast(sent, src=1)
    out["broadcast"] = sent.item()
    piece = torch.zeros(1)
    parts = [torch.tensor([10.0 + r]) for r in range(world_size)] if rank == 0 else None
    dist.scatter(piece, parts, src=0)
    out["scatter"] = piece.item()
    into = [torch.zeros(1) for _ in range(world_size)] if rank == 1 else None
    dist.gather(mine, into, dst=1)
    out["gather"] = [t.item() for t in into] if into else None
    both = [torch.full((1,), float(rank)), torch.full((2,), 2.0)]
    dist.all_reduce_coalesced(both, op=dist.ReduceOp.MAX)
    out["all_reduce_coalesced"] = [t.tolist() for t in both]
    reduced = torch.zeros(1)
    dist.reduce_scatter(reduced, [torch.full((1,), float(rank + r)) for r in range(world_size)])
    out["reduce_scatter"] = reduced.item()
    swapped = torch.zeros(world_size)
    dist.all_to_all_single(swapped, torch.arange(world_size, dtype=torch.float32) + 10 * rank)
    out["all_to_all_single"] = swapped.tolist()
    received = [torch.zeros(1) for _ in range(world_size)]
    dist.all_to_all(received, [torch.full((1,), 100.0 * rank + r) for r in range(world_size)])
    out["all_to_all"] = [t.item() for t in received]
    total = torch.full((2,), float(rank + 2))
    dist.reduce(total, dst=0, op=dist.ReduceOp.PRODUCT)
    out["reduce"] = total.tolist()
    shard = torch.zeros(1)
    dist.reduce_scatter_tensor(shard, torch.arange(world_size, dtype=torch.float32) + rank)
    out["reduce_scatter_tensor"] = shard.item()
    dist.barrier()
    out["backend"] = dist.get_backend()
    if extra and rank == 0:
        dist.barrier()
    return out


#: Rank functions whose ranks disagree on one field of one collective, with that field.
ARGUMENT_MISMATCHES = [
    (rank_dependent_src, "root"),
    (rank_dependent_op, "reduce op"),
    (different_shapes, "shape"),
    (group_on_some_ranks, "arguments"),
]
