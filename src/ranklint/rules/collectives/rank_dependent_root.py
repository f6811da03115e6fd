"""RNK104 rank-dependent-root."""

from __future__ import annotations

import libcst as cst

from ranklint.analysis.walk.arguments import find_argument
from ranklint.findings import Severity
from ranklint.rules.base import Rule


class RankDependentRoot(Rule):
    code = "RNK104"
    name = "rank-dependent-root"
    severity = Severity.ERROR
    summary = "The root of a collective is the caller's own rank"
    what = """\
Reports `src`, `dst`, `group_src` or `group_dst` values that depend on the
calling rank: `src=dist.get_rank()`, `src=rank`, `dst=local_rank`,
`src=int(os.environ["RANK"])`. A root computed from a group
(`dist.get_global_rank(group, 0)`) or a constant is fine.
"""
    why = """\
Every rank names itself as the root, so each one believes it is the sender:
a broadcast sends nothing anyone receives and the ranks' data silently
diverge, or NCCL pairs mismatched roots and hangs. The root must be one value
that all members of the group agree on.
"""
    limits = """\
Only rank *queries* count (`get_rank()`, `os.environ["RANK"]`,
`mesh.get_local_rank()`, directly or through assignments in the same
function): a parameter named `rank` may hold any rank the caller chose. Only
calls that every rank surely runs are reported — none under an enclosing
condition or after a rank-dependent early exit, where naming oneself as root
is usually the sending side of a protocol whose receivers name the sender.
A project helper that returns the rank is not followed here.
"""
    runtime_check = """\
A rank-dependent root makes the ranks disagree on the root of the same
collective; the companion compares `src`/`dst` and names both lines.

```python
import pytest
import torch
import torch.distributed as dist
from ranklint.runtime import DivergenceError, run_ranks


def publish(rank, world_size):
    weights = torch.full((2,), float(rank))
    dist.broadcast(weights, src=rank)  # every rank names itself


with pytest.raises(DivergenceError, match="disagree on the root"):
    run_ranks(publish, 2)
```
"""
    valid = (
        """
        import torch.distributed as dist


        def share(t, objs):
            # One root that every rank names alike.
            dist.broadcast(t, src=0)
            dist.broadcast_object_list(objs, src=0)
            dist.reduce(t, 0, op=dist.ReduceOp.SUM)
        """,
        """
        import torch.distributed as dist


        def share(t, group):
            dist.broadcast(t, src=0)
            dist.broadcast(t, src=dist.get_global_rank(group, 0), group=group)
        """,
        """
        import torch.distributed as dist


        def invoke_on_rank(pg, rank, func):
            # `rank` is a parameter: the rank the caller chose, not the caller's own.
            out = [func() if pg.rank() == rank else None]
            dist.broadcast_object_list(out, group_src=rank, group=pg)
            return out[0]
        """,
        """
        import torch.distributed as dist


        def load(state, shards):
            for name, loaded in shards.items():
                # Only the rank that holds the data runs this arm; the others
                # receive with `src=0` in the else arm.
                if loaded is not None:
                    dist.broadcast(loaded, src=dist.get_rank())
                else:
                    dist.broadcast(state[name], src=0)
        """,
    )
    invalid = (
        """
        import os

        import torch.distributed as dist


        def share(t, objs):
            rank = dist.get_rank()
            dist.broadcast(t, src=rank)  # expect: RNK104
            dist.broadcast_object_list(objs, src=dist.get_rank())  # expect: RNK104
            dist.reduce(t, int(os.environ["LOCAL_RANK"]), op=dist.ReduceOp.SUM)  # expect: RNK104


        def share_local(t):
            local_rank = int(os.environ["LOCAL_RANK"])
            dist.broadcast(t, src=local_rank)  # expect: RNK104
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        spec, _ = self.ctx.calls.classify(node)
        if spec is None or not spec.roots or not spec.kind.synchronising:
            return
        for root in spec.roots:
            value = find_argument(node, root)
            if value is None:
                continue
            taint = self.ctx.rank.taint(value)
            if taint.rank and taint.strong and not taint.membership and not self._guarded():
                self.report(
                    value,
                    f"`{root.keyword}` of `{spec.short}` is the caller's own rank: every rank "
                    f"names itself as root, so ranks disagree on whose data counts; use one "
                    f"value all ranks share (`{root.keyword}=0`)",
                )
                return

    def _guarded(self) -> bool:
        """Maybe only some ranks run this line: then naming oneself as root is the sender's side."""
        ctx = self.ctx
        # Any enclosing condition: rank checks, and data that only the root has
        # (`if isinstance(loaded, Tensor): broadcast(..., src=get_rank())`).
        return ctx.facts.rank_exit_seen or bool(ctx.conditions)
