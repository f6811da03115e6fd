"""RNK103 missing-root."""

from __future__ import annotations

import libcst as cst

from ranklint.analysis.arguments import find_argument, has_unpacking
from ranklint.analysis.axes import is_axis_subgroup
from ranklint.findings import Applicability, Severity
from ranklint.rules.base import PendingFix, Rule
from ranklint.rules.codemods import keyword_argument, with_argument


class MissingRoot(Rule):
    code = "RNK103"
    name = "missing-root"
    severity = Severity.WARNING
    summary = "A rooted collective does not say which rank is the root"
    what = """\
Reports `broadcast`, `gather` and `reduce` without a root (`src`/`group_src`,
`dst`/`group_dst`): torch raises at run time. Reports `broadcast_object_list`,
`scatter`, `scatter_object_list` and `gather_object` without a root when
they run on a group along a parallel axis (`tp_group`, `mesh["dp"]`): torch
then uses global rank 0, which belongs to one such group only. On the
default group, or a group whose axis cannot be told from its name, the
implicit root 0 is usually a member and the one meant, so those calls are
not reported. Also
through `torch.distributed.distributed_c10d` and `deepspeed.comm`. Calls
that pass `*args` or `**kwargs` are not reported: the root may be among
them.
"""
    why = """\
The root decides whose data everyone receives (or who receives everyone's).
Leaving it implicit hides a decision that must be the same on every rank.
In torch 2.13, `broadcast(t)`, `gather` and `reduce` without a root raise
at run time — on the cluster, after the job was scheduled — while
`broadcast_object_list(objs)`, `scatter`, `scatter_object_list` and
`gather_object` silently use global rank 0, which is wrong (and not a
member) for most subgroups.
"""
    limits = """\
Only the catalog's torch.distributed APIs and their DeepSpeed mirrors;
accelerate's `broadcast(tensor, from_process=0)` has a documented default and
is not reported.
"""
    runtime_check = """\
The implicit root is not a hang but a choice: a runtime test shows whose data
every rank ends with.

```python
import torch.distributed as dist
from ranklint.runtime import run_ranks


def share_config(rank, world_size):
    objects = [f"config of rank {rank}"]
    dist.broadcast_object_list(objects)  # the root is rank 0, implicitly
    return objects[0]


# Every rank ends with rank 0's object: make sure rank 0 is the one you meant.
assert run_ranks(share_config, 2) == ["config of rank 0"] * 2
```
"""
    fix_applicability = Applicability.SAFE
    fix_safety = """\
For `broadcast_object_list`, `scatter`, `scatter_object_list` and
`gather_object` of `torch.distributed`, the fix writes out the root torch
uses when none is given: `src=0` (`dst=0` for `gather_object`), global rank 0.
It is safe: the call does what it did, and the choice is now visible for a
reviewer to change (to `group_src=0` for the group's first rank, on torch >=
2.6). The calls that raise without a root (`broadcast`, `gather`, `reduce`)
get no fix: which rank is the root is a decision only their author can make.
"""
    fixes = (
        (
            """
            import torch.distributed as dist


            def share_dp(objs, out, dp_group):
                dist.broadcast_object_list(objs, group=dp_group)
                dist.gather_object(
                    objs[0],
                    out,
                    group=dp_group,
                )
            """,
            """
            import torch.distributed as dist


            def share_dp(objs, out, dp_group):
                dist.broadcast_object_list(objs, group=dp_group, src=0)
                dist.gather_object(
                    objs[0],
                    out,
                    group=dp_group,
                    dst=0,
                )
            """,
        ),
    )
    valid = (
        """
        import torch.distributed as dist


        def share(t):
            dist.broadcast(t, src=0)
            dist.reduce(t, dst=0, op=dist.ReduceOp.SUM)


        def share_dp(objs, out, dp_group):
            # The same (global) root as before, now written out; on torch >= 2.6
            # `group_src=0` / `group_dst=0` name the group's first rank instead.
            dist.broadcast_object_list(objs, src=0, group=dp_group)
            dist.gather_object(objs[0], out, dst=0, group=dp_group)
        """,
        """
        import torch.distributed as dist


        def share(t, objs, group):
            dist.broadcast(t, src=0)
            dist.broadcast_object_list(objs, group_src=0, group=group)
            dist.gather(t, dst=0)
            # On the default group the implicit root 0 is a member.
            dist.broadcast_object_list(objs)
            dist.gather_object(objs[0], None)
        """,
        """
        import torch.distributed as dist


        def share(t, *args, **kwargs):
            dist.broadcast(t, *args, **kwargs)
        """,
    )
    invalid = (
        """
        import torch.distributed as dist


        def share(t):
            dist.broadcast(t)  # expect: RNK103
            dist.reduce(t, op=dist.ReduceOp.SUM)  # expect: RNK103


        def share_dp(objs, out, dp_group):
            dist.broadcast_object_list(objs, group=dp_group)  # expect: RNK103
            dist.gather_object(objs[0], out, group=dp_group)  # expect: RNK103
        """,
        """
        from torch.distributed import distributed_c10d as c10d


        def spread(t, chunks, objs, out, tp_group):
            c10d.scatter(t, chunks, group=tp_group)  # expect: RNK103
            c10d.scatter_object_list(out, objs, group=tp_group)  # expect: RNK103
            c10d.gather(t, chunks)  # expect: RNK103
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        spec, _ = self.ctx.calls.classify(node)
        if spec is None or not spec.root_required or has_unpacking(node):
            return
        if any(find_argument(node, root) is not None for root in spec.roots):
            return
        keyword = spec.roots[0].keyword
        silent = spec.short in _ROOT_ZERO_BY_DEFAULT
        if silent and not is_axis_subgroup(find_argument(node, spec.group)):
            return
        consequence = (
            "torch silently uses global rank 0, which is wrong for a subgroup"
            if silent
            else "torch raises at run time, on the cluster"
        )
        fix = None
        qualified = self.ctx.names.resolve(node.func)
        if silent and qualified is not None and qualified.startswith("torch.distributed."):
            fix = PendingFix(
                f"Write out the implicit root: `{keyword}=0` (global rank 0)",
                node,
                with_argument(node, keyword_argument(keyword, cst.Integer("0"))),
            )
        self.report(
            node,
            f"`{spec.short}` without `{keyword}`/`group_{keyword}`: {consequence}; pass the "
            f"root explicitly (`{keyword}=0`, or `group_{keyword}=0` with a subgroup)",
            fix=fix,
        )


# In torch 2.13 these use global rank 0 when no root is given (the others raise).
_ROOT_ZERO_BY_DEFAULT = frozenset(
    {"broadcast_object_list", "scatter", "scatter_object_list", "gather_object"}
)
