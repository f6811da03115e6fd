"""RNK106 implicit-reduce-op."""

from __future__ import annotations

import libcst as cst

from ranklint.analysis.walk.arguments import find_argument, has_unpacking
from ranklint.analysis.walk.context import FileContext
from ranklint.findings import Applicability, Severity
from ranklint.rules.base import PendingFix, Rule
from ranklint.rules.codemods import keyword_argument, with_argument


class ImplicitReduceOp(Rule):
    code = "RNK106"
    name = "implicit-reduce-op"
    severity = Severity.WARNING
    summary = "A reduction does not name its reduce op"
    default_enabled = False
    what = """\
Reports `all_reduce`, `reduce`, `reduce_scatter`, `reduce_scatter_tensor`,
`reduce_scatter_single`, `all_reduce_coalesced` and `_reduce_scatter_base`
(torch.distributed, `distributed_c10d`, `deepspeed.comm`) without an `op`.
Functional collectives take the op as a required argument and are never
reported.

Off by default: on the review corpus (docs/dev/ecosystem-review.md) the implicit
sums it reports were intended (tensor-parallel partial sums, counts,
gradients divided beforehand), so it is a convention check, not a bug
finder. Teams that want every reduction to name its op opt in with
`extend-select = ["RNK106"]`.
"""
    why = """\
The default is `ReduceOp.SUM`. Many wrong-metric and wrong-gradient bugs
start as a sum that should have been a mean: a loss or accuracy summed over
ranks looks plausible on 2 GPUs and is 256 times too large on 256. Naming
the op makes the intent reviewable.
"""
    limits = """\
`ReduceOp.AVG` exists only on NCCL (and some other backends); on gloo, sum
and divide by the world size.
"""
    runtime_check = """\
An implicit `SUM` does not hang; it gives a value `world_size` times too large
where a mean was meant. A runtime test pins the value down.

```python
import torch
import torch.distributed as dist
from ranklint.runtime import run_ranks


def mean_loss(rank, world_size):
    loss = torch.tensor(1.0)  # every rank's local mean is 1.0
    dist.all_reduce(loss)  # SUM, not the mean
    return loss.item()


# The logged "mean" is world_size times the real one.
assert run_ranks(mean_loss, 4) == [4.0] * 4
```
"""
    fix_applicability = frozenset({Applicability.SAFE})
    fix_safety = """\
The fix writes out the default: `op=ReduceOp.SUM`, spelled through the name
the module already uses for `torch.distributed` (`dist.ReduceOp.SUM`, or
`ReduceOp.SUM` where `ReduceOp` is imported). It is safe: the reduction is
the same, and a reviewer now sees that it sums. Where no imported name leads
to `ReduceOp`, no fix is offered (adding an import is left to the author).
"""
    fixes = (
        (
            """
            import torch.distributed as dist


            def mean_loss(loss):
                dist.all_reduce(loss)
            """,
            """
            import torch.distributed as dist


            def mean_loss(loss):
                dist.all_reduce(loss, op=dist.ReduceOp.SUM)
            """,
        ),
        (
            """
            from torch.distributed import ReduceOp, reduce


            def total(count):
                reduce(count, dst=0)
            """,
            """
            from torch.distributed import ReduceOp, reduce


            def total(count):
                reduce(count, dst=0, op=ReduceOp.SUM)
            """,
        ),
    )
    valid = (
        """
        import torch.distributed as dist
        from torch.distributed import ReduceOp


        def mean_loss(loss):
            dist.all_reduce(loss, op=ReduceOp.AVG)
            dist.reduce(loss, dst=0, op=ReduceOp.SUM)
        """,
        """
        import torch.distributed._functional_collectives as funcol


        def mean_loss(loss, group):
            # Functional collectives take the op as a required argument.
            return funcol.all_reduce(loss, "avg", group)
        """,
    )
    invalid = (
        """
        import torch.distributed as dist


        def mean_loss(loss, shards, out):
            dist.all_reduce(loss)  # expect: RNK106
            dist.reduce_scatter_tensor(out, shards)  # expect: RNK106
            dist.reduce(loss, dst=0)  # expect: RNK106
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        spec, _ = self.ctx.calls.classify(node)
        if spec is None or spec.op is None or has_unpacking(node):
            return
        if find_argument(node, spec.op) is not None:
            return
        spelled = reduce_op_spelling(self.ctx, node)
        fix = None
        if spelled is not None:
            value = cst.parse_expression(f"{spelled}.SUM")
            fix = PendingFix(
                f"Write out the default: `op={spelled}.SUM`",
                node,
                with_argument(node, keyword_argument(spec.op.keyword, value)),
            )
        self.report(
            node,
            f"`{spec.short}` without `op` sums across ranks (the default, `ReduceOp.SUM`); "
            f"if a mean is meant this is off by the world size: pass `op=ReduceOp.SUM` or "
            f"`op=ReduceOp.AVG` explicitly",
            fix=fix,
        )


_TORCH_DISTRIBUTED = ("torch.distributed", "torch.distributed.distributed_c10d")
_REDUCE_OP = "torch.distributed.ReduceOp"


def reduce_op_spelling(ctx: FileContext, call: cst.Call) -> str | None:
    """How the code at ``call`` names ``torch.distributed.ReduceOp`` with the names it
    has: through the module the call is made on, an imported ``ReduceOp``, or an
    imported ``torch.distributed`` or ``torch``; ``None`` when no name leads there."""
    names = ctx.names
    qualified = names.resolve(call.func)
    if qualified is None or not qualified.startswith("torch.distributed."):
        return None
    func = call.func
    if isinstance(func, cst.Attribute) and names.resolve(func.value) in _TORCH_DISTRIBUTED:
        receiver = ctx.module.code_for_node(func.value.with_changes(lpar=(), rpar=()))
        # (The `#` test is redundant, so not mutated: a comment in a receiver always ends
        # in a line break.)
        if "\n" not in receiver and "#" not in receiver:  # pragma: no mutate
            return f"{receiver}.ReduceOp"
    if names.lookup("ReduceOp") == _REDUCE_OP:
        return "ReduceOp"
    imported = names.module_imports()
    for suffix, module in (("ReduceOp", "torch.distributed"), ("distributed.ReduceOp", "torch")):
        for local in sorted(imported):
            if imported[local] == module and names.lookup(local) == module:
                return f"{local}.{suffix}"
    return None
