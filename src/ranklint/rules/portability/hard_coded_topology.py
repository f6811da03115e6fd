"""RNK504 hard-coded-topology."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from ranklint.analysis.walk.context import FileContext
from ranklint.analysis.walk.literals import environ_writes, int_value, string_value
from ranklint.analysis.walk.mesh import MESH_INITIALIZERS
from ranklint.analysis.walk.names import last_name
from ranklint.findings import Severity
from ranklint.rules.base import PendingFinding, Rule

logger = logging.getLogger(__name__)

_TOPOLOGY_KEYWORDS = frozenset(
    {"nprocs", "nproc_per_node", "num_gpus", "gpus_per_node", "num_processes", "world_size"}
)

# CPU process and thread pools, and data loaders: their size is the host's
# parallelism, not the cluster's topology.
_CPU_POOLS = frozenset(
    {
        "multiprocessing.Pool",
        "multiprocessing.pool.Pool",
        "multiprocessing.pool.ThreadPool",
        "multiprocessing.get_context.Pool",
        "torch.multiprocessing.Pool",
        "concurrent.futures.ProcessPoolExecutor",
        "concurrent.futures.ThreadPoolExecutor",
        "concurrent.futures.process.ProcessPoolExecutor",
        "concurrent.futures.thread.ThreadPoolExecutor",
        "torch.utils.data.DataLoader",
        "torch.utils.data.dataloader.DataLoader",
    }
)

# `CUDA_VISIBLE_DEVICES` values that hide every GPU (a CPU-only child process).
_NO_DEVICES = frozenset({"", "-1"})

_INIT = frozenset(
    {
        "torch.distributed.init_process_group",
        "torch.distributed.distributed_c10d.init_process_group",
    }
)


@dataclass(frozen=True)
class _Passed:
    """A topology keyword passed to a callee: reported unless the callee sizes a CPU pool."""

    value: cst.BaseExpression
    what: str
    callee: str
    keyword: str
    where: tuple[cst.CSTNode | None, cst.CSTNode | None]


class HardCodedTopology(Rule):
    code = "RNK504"
    name = "hard-coded-topology"
    severity = Severity.WARNING
    summary = "The job's size or layout is written in code"
    what = """\
Reports, in library code (not in files matching `test-patterns` or
`script-patterns`): literal `rank`/`world_size` arguments to
`init_process_group` (except on the `"fake"` backend, which simulates a
job, and for a one-process group, `world_size=1`); literal process or GPU
counts of 2 or more (`nprocs=`, `nproc_per_node=`, `num_gpus=`, `gpus_per_node=`, `num_processes=`,
`world_size=` keywords); `CUDA_VISIBLE_DEVICES` set to a literal in code
(a value computed from the scheduler's assignment is fine; `""` and `"-1"`,
which hide every GPU from a CPU-only child process on purpose, are not
reported); literal mesh shapes in `init_device_mesh`. The size of a CPU
process or thread pool (`multiprocessing.Pool(8)`,
`ProcessPoolExecutor(max_workers=4)`, a `DataLoader`'s `num_workers`, any
`*Pool(...)` / `*PoolExecutor(...)` call) is the host's parallelism, not the
job's topology, and is not reported; nor is a count passed to a function of
the same file that hands that parameter to such a pool
(`run(fn, xs, num_processes=64)` where `run` builds
`ProcessPoolExecutor(max_workers=num_processes)`).
"""
    why = """\
The same code runs on 8 GPUs today and 512 next week: a literal world size or
mesh shape makes the job wait forever for ranks that will never come, or
ignore half the GPUs; `CUDA_VISIBLE_DEVICES` set in code fights with the
scheduler's own assignment. The launcher knows the topology; the code reads it
(`dist.get_world_size()`, `WORLD_SIZE`, a config).
"""
    limits = """\
Topology written in a config dict or read from a constant defined elsewhere is
not reported. A CPU pool is recognised by its name (`Pool`, `PoolExecutor`,
`DataLoader`), so a launcher named like a pool would be missed. A wrapper
that sizes a pool is recognised in the same file only (by the called name).
"""
    valid = (
        """
        import torch.distributed as dist
        from torch.distributed.device_mesh import init_device_mesh


        def main():
            dist.init_process_group("nccl")
            world = dist.get_world_size()
            return init_device_mesh("cuda", (world // 2, 2), mesh_dim_names=("dp", "tp"))
        """,
        """
        import os
        import subprocess
        from concurrent.futures import ProcessPoolExecutor
        from multiprocessing import Pool


        # A CPU-only child process (the shape of issue 16's report).
        def convert(cmd):
            env = dict(os.environ)
            env["CUDA_VISIBLE_DEVICES"] = ""
            os.environ["CUDA_VISIBLE_DEVICES"] = ""
            return subprocess.run(cmd, env=env)


        # CPU pools: the host's parallelism, not the cluster's.
        def tokenize(shards, fn):
            with Pool(8) as pool, ProcessPoolExecutor(max_workers=4) as executor:
                return pool.map(fn, shards), executor.map(fn, shards)
        """,
    )
    invalid = (
        """
        import os

        import torch.distributed as dist
        from torch.distributed.device_mesh import init_device_mesh

        os.environ["CUDA_VISIBLE_DEVICES"] = "0,1,2,3"  # expect: RNK504
        dist.init_process_group("nccl", rank=0, world_size=8)  # expect: RNK504, RNK504
        mesh = init_device_mesh("cuda", (4, 2), mesh_dim_names=("dp", "tp"))  # expect: RNK504
        """,
    )

    def __init__(self, ctx: FileContext, sink: Callable[[PendingFinding], None]) -> None:
        super().__init__(ctx, sink)
        self._active = not (ctx.is_test or ctx.is_script)
        # Functions of this file that size a CPU pool from a parameter:
        # name -> those parameters (`run(fn, xs, num_processes)` into
        # `ProcessPoolExecutor(max_workers=num_processes)`).
        self._pool_sizers: dict[str, set[str]] = {}
        # Topology keywords passed to a callee, decided once every function is
        # known: (value, what, callee, keyword, where).
        self._passed: list[_Passed] = []

    def visit_Assign(self, node: cst.Assign) -> None:
        self._visible_devices(node)

    def visit_Call(self, node: cst.Call) -> None:
        if not self._active:
            return
        self._visible_devices(node)
        name = self.ctx.names.resolve(node.func)
        if _cpu_pool(node, name):
            self._sized_pool(node)
            return  # the host's parallelism, not the job's topology
        for arg in node.args:
            keyword = arg.keyword.value if arg.keyword is not None else None
            value = int_value(arg.value)
            if value is None or keyword is None:
                continue
            if name in _INIT and keyword in ("rank", "world_size"):
                if node.args and string_value(node.args[0].value) == "fake":
                    continue  # a simulated job on the fake backend: the literal is the point
                if _single_process(node):
                    continue  # a one-process group (tools, controllers): no topology
                self._report(arg.value, f"`{keyword}={value}` in `init_process_group`")
            elif keyword in _TOPOLOGY_KEYWORDS and value >= 2:
                where = (self.ctx.statement, self.ctx.top_statement)
                # (Any stand-in for a callee without a name names no wrapper; not mutated.)
                callee = last_name(node.func) or ""  # pragma: no mutate
                what = f"`{keyword}={value}`"
                self._passed.append(_Passed(arg.value, what, callee, keyword, where))
        if name in MESH_INITIALIZERS and len(node.args) > 1:
            shape = node.args[1]
            positional = shape.keyword is None or shape.keyword.value == "mesh_shape"
            if (
                positional
                and isinstance(shape.value, (cst.Tuple, cst.List))
                and all(int_value(e.value) is not None for e in shape.value.elements)
            ):
                self._report(shape.value, "a literal mesh shape")

    def _sized_pool(self, pool: cst.Call) -> None:
        """Record the parameters of the functions around ``pool`` that size it."""
        functions = [frame.node for frame in self.ctx.functions]
        for function in (f for f in functions if isinstance(f, cst.FunctionDef)):
            params = {param.name.value for param in function.params.params}
            params |= {param.name.value for param in function.params.kwonly_params}
            # (`or` would read the same: no other argument's `.value` is a parameter's
            # name; not mutated.)
            sized = {
                arg.value.value
                for arg in pool.args
                if isinstance(arg.value, cst.Name)
                and arg.value.value in params  # pragma: no mutate
            }
            if sized:
                self._pool_sizers.setdefault(function.name.value, set()).update(sized)

    def leave_Module(self, node: cst.Module) -> None:
        # Decided after the walk: the wrapper may be defined below its call.
        for passed in self._passed:
            if passed.keyword in self._pool_sizers.get(passed.callee, ()):
                continue  # the size of a CPU pool, passed through a wrapper
            self._report(passed.value, passed.what, where=passed.where)

    def _visible_devices(self, node: cst.CSTNode) -> None:
        if not self._active:
            return
        for key, value, _ in environ_writes(node, self.ctx.names.resolve):
            if key != "CUDA_VISIBLE_DEVICES" or value is None:
                continue
            text = string_value(value)
            if text is not None and text.strip() in _NO_DEVICES:
                continue  # every GPU hidden from a CPU-only process, on purpose
            if text is not None or int_value(value) is not None:
                self._report(value, "`CUDA_VISIBLE_DEVICES`")

    def _report(
        self,
        node: cst.CSTNode,
        what: str,
        *,
        where: tuple[cst.CSTNode | None, cst.CSTNode | None] | None = None,
    ) -> None:
        self.report(
            node,
            f"{what} writes the job's topology into the code: on any other allocation ranks "
            f"wait for peers that never come or GPUs go unused; read it from the launcher "
            f"(`dist.get_world_size()`, `WORLD_SIZE`) or the configuration",
            where=where,
        )


def _cpu_pool(node: cst.Call, name: str | None) -> bool:
    """A CPU process or thread pool, or a data loader: ``Pool(8)``, ``ProcessPoolExecutor(...)``."""
    if name in _CPU_POOLS:
        return True
    called = last_name(node.func)
    return called is not None and (
        called.endswith(("Pool", "PoolExecutor")) or called == "DataLoader"
    )


def _single_process(node: cst.Call) -> bool:
    """``init_process_group(..., world_size=1)``: a group of one process."""
    return any(
        arg.keyword is not None and arg.keyword.value == "world_size" and int_value(arg.value) == 1
        for arg in node.args
    )
