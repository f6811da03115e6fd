"""RNK103 missing-root."""

from __future__ import annotations

import libcst as cst

from ranklint.analysis.walk.arguments import find_argument, has_unpacking
from ranklint.findings import Applicability, Severity
from ranklint.rules.base import PendingFix, Rule
from ranklint.rules.codemods import keyword_argument, with_argument
from ranklint.rules.collectives._group_local import is_default_group


class MissingRoot(Rule):
    code = "RNK103"
    name = "missing-root"
    severity = Severity.WARNING
    summary = "A rooted collective does not say which rank is the root"
    what = """\
Reports rooted collectives that do not name their root (`src`/`group_src`,
`dst`/`group_dst`):

- `broadcast` and `reduce` without a root raise at run time;
- `broadcast_object_list`, `scatter`, `scatter_object_list`, `gather` and
  `gather_object` without a root silently use global rank 0. On the default
  group that is a member, but the choice is invisible to a reader; on any
  other group (`group=tp_group`, `group=pg`, whatever its name) global rank
  0 belongs to one group at most, so the call is wrong on every other group.

Also through `torch.distributed.distributed_c10d` and `deepspeed.comm`. Calls
that pass `*args` or `**kwargs` are not reported: the root may be among them.
"""
    why = """\
The root decides whose data everyone receives (or who receives everyone's).
Leaving it implicit hides a decision that must be the same on every rank.
In torch 2.13, `broadcast(t)` and `reduce(t)` without a root raise at run
time — on the cluster, after the job was scheduled — while
`broadcast_object_list(objs)`, `scatter`, `scatter_object_list`, `gather` and
`gather_object` silently use global rank 0, which is not a member of most
subgroups ("rank is not part of group"), or, worse, is a member that was
never meant to be the root.
"""
    limits = """\
Only the catalog's torch.distributed APIs and their DeepSpeed mirrors;
accelerate's `broadcast(tensor, from_process=0)` has a documented default and
is not reported. Whether a group argument is the default group is read from
the code: `None`, `WORLD` (`dist.group.WORLD`) and no argument are the
default; a variable that holds `None` at run time is taken for a subgroup.
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
    fix_applicability = frozenset({Applicability.SAFE, Applicability.UNSAFE})
    fix_safety = """\
Only calls of `torch.distributed` that silently default their root get a
fix; `broadcast` and `reduce`, which raise without one, get none: which rank
is the root is a decision only their author can make.

- On the default group (no `group`, `group=None`, `dist.group.WORLD`) the fix
  is safe: it writes out the root torch uses when none is given, `src=0`
  (`dst=0` for the gathers). The call does what it did; the choice is now
  visible to a reviewer.
- On any other group the implicit global rank 0 is the bug the finding names,
  so writing it out would keep the bug and silence the finding. The fix is
  unsafe instead: `group_src=0` (`group_dst=0`), the group's first member,
  which changes the root on every group that does not hold global rank 0.
  `group_src`/`group_dst` exist since torch 2.6.
"""
    fixes = (
        (
            """
            import torch.distributed as dist


            def share(objs, out):
                dist.broadcast_object_list(objs)
                dist.gather_object(
                    objs[0],
                    out,
                )
            """,
            """
            import torch.distributed as dist


            def share(objs, out):
                dist.broadcast_object_list(objs, src=0)
                dist.gather_object(
                    objs[0],
                    out,
                    dst=0,
                )
            """,
        ),
        (
            """
            import torch.distributed as dist


            def share_dp(objs, out, dp_group):
                dist.broadcast_object_list(objs, group=dp_group)
                dist.gather_object(objs[0], out, group=dp_group)
            """,
            """
            import torch.distributed as dist


            def share_dp(objs, out, dp_group):
                dist.broadcast_object_list(objs, group=dp_group, group_src=0)
                dist.gather_object(objs[0], out, group=dp_group, group_dst=0)
            """,
        ),
    )
    valid = (
        """
        import torch.distributed as dist


        def share(t, objs, out):
            dist.broadcast(t, src=0)
            dist.reduce(t, dst=0, op=dist.ReduceOp.SUM)
            dist.broadcast_object_list(objs, src=0)
            dist.gather_object(objs[0], out, dst=0)


        def share_dp(objs, out, dp_group):
            # The group's first member, named within the group (torch >= 2.6).
            dist.broadcast_object_list(objs, group_src=0, group=dp_group)
            dist.gather_object(objs[0], out, group_dst=0, group=dp_group)
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


        def share(t, objs, out):
            dist.broadcast(t)  # expect: RNK103
            dist.reduce(t, op=dist.ReduceOp.SUM)  # expect: RNK103
            dist.broadcast_object_list(objs)  # expect: RNK103
            dist.gather_object(objs[0], out, group=dist.group.WORLD)  # expect: RNK103


        def share_dp(objs, out, dp_group, pg):
            dist.broadcast_object_list(objs, group=dp_group)  # expect: RNK103
            dist.gather_object(objs[0], out, group=pg)  # expect: RNK103
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
        if spec.short not in _ROOT_ZERO_BY_DEFAULT:
            self.report(
                node,
                f"`{spec.short}` without `{keyword}`/`group_{keyword}`: torch raises at run "
                f"time, on the cluster; pass the root explicitly (`{keyword}=0`, or "
                f"`group_{keyword}=0` for a group's first member)",
            )
            return
        qualified = self.ctx.names.resolve(node.func)
        fixable = qualified is not None and qualified.startswith("torch.distributed.")
        if is_default_group(find_argument(node, spec.group)):
            fix = PendingFix(
                f"Write out the implicit root: `{keyword}=0` (global rank 0)",
                node,
                with_argument(node, keyword_argument(keyword, cst.Integer("0"))),
            )
            self.report(
                node,
                f"`{spec.short}` without `{keyword}`: the root is implicitly global rank 0; "
                f"name it (`{keyword}=0`) so that every reader sees whose data is used",
                fix=fix if fixable else None,
            )
            return
        fix = PendingFix(
            f"Root the call at the group's first member: `group_{keyword}=0`",
            node,
            with_argument(node, keyword_argument(f"group_{keyword}", cst.Integer("0"))),
            Applicability.UNSAFE,
        )
        self.report(
            node,
            f"`{spec.short}` on a group without `{keyword}`/`group_{keyword}`: torch uses "
            f"global rank 0, which is not a member of most groups (it raises there, or the "
            f"wrong rank is the root); pass `group_{keyword}=0` for the group's first member, "
            f"or the root's global rank as `{keyword}`",
            fix=fix if fixable else None,
        )


# In torch 2.13 these use global rank 0 when no root is given (`broadcast`, `reduce` raise).
_ROOT_ZERO_BY_DEFAULT = frozenset(
    {"broadcast_object_list", "scatter", "scatter_object_list", "gather", "gather_object"}
)
