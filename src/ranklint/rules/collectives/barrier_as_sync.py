"""RNK107 barrier-as-sync."""

from __future__ import annotations

import libcst as cst

from ranklint.analysis.walk import catalog
from ranklint.analysis.walk.guards import is_main_guard
from ranklint.findings import Severity
from ranklint.rules.base import Rule
from ranklint.source import file_name


class BarrierAsSync(Rule):
    code = "RNK107"
    name = "barrier-as-sync"
    severity = Severity.INFO
    default_enabled = False
    summary = "A barrier is used in library code"
    what = """\
Reports `barrier`, `monitored_barrier` (and `accelerator.wait_for_everyone`,
`strategy.barrier`) in library code: not in test files (`test_*.py`,
`*_test.py`, `conftest.py`, files under `tests/`), not in `__main__.py`,
not under `if __name__ == "__main__":`, not in a function named `main`.
Off by default: opt in with `extend-select = ["RNK107"]`.
"""
    why = """\
A barrier orders nothing by itself: it waits until every rank arrives, then
lets all of them go. Used "to make sure rank 0 finished writing", it hides
the real dependency, costs a full round of synchronisation every time, and
becomes a hang as soon as one rank takes a different path. Collectives that
carry the data (broadcast the path, all_reduce the flag) synchronise exactly
what is needed.
"""
    limits = """\
A barrier is sometimes the simplest correct tool (around a one-time download
on rank 0); suppress those with `# noqa: RNK107` and a reason.
"""
    runtime_check = """\
A barrier used to pass data works in threads mode (the ranks share memory) and
on one host (a shared disk), so a runtime test cannot prove this finding; it
can show that the fix, a collective that carries the data, delivers it to every
rank.

```python
import torch.distributed as dist
from ranklint.runtime import run_ranks


def share_checkpoint_path(rank, world_size):
    path = [f"/ckpt/step-100 (written by rank {rank})" if rank == 0 else None]
    dist.broadcast_object_list(path, src=0)  # carries the data; a barrier only waits
    return path[0]


assert run_ranks(share_checkpoint_path, 2) == ["/ckpt/step-100 (written by rank 0)"] * 2
```
"""
    valid = (
        """
        import torch.distributed as dist


        def main():
            dist.init_process_group("gloo")
            dist.barrier()
        """,
    )
    invalid = (
        """
        import torch.distributed as dist


        def save(state, path):
            if dist.get_rank() == 0:
                write(state, path)
            dist.barrier()  # expect: RNK107
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        spec, _ = ctx.calls.classify(node)
        if spec is None or spec.kind is not catalog.CallKind.BARRIER:
            return
        if _is_test_or_entry_file(ctx.path) or any(
            frame.node.name.value == "main"
            for frame in ctx.functions
            if isinstance(frame.node, cst.FunctionDef)
        ):
            return
        if not ctx.functions and any(is_main_guard(c.test) for c in ctx.conditions):
            return
        self.report(
            node,
            f"`{spec.short}` in library code: a barrier only waits, it does not pass the data "
            f"the other ranks depend on; synchronise with the collective that carries it "
            f"(broadcast the result, all_reduce the flag) or suppress with a reason",
        )


def _is_test_or_entry_file(path: str) -> bool:
    posix = path.replace("\\", "/")
    name = file_name(posix)
    return (
        name.startswith("test_")
        or name.endswith("_test.py")
        or name in ("conftest.py", "__main__.py")
        or "/tests/" in f"/{posix}"
        or "/test/" in f"/{posix}"
    )
