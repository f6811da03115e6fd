"""RNK109 global-root-with-subgroup."""

from __future__ import annotations

import libcst as cst

from ranklint.analysis.walk.arguments import find_argument
from ranklint.analysis.walk.axes import is_axis_subgroup
from ranklint.findings import Severity
from ranklint.rules.base import Rule


class GlobalRootWithSubgroup(Rule):
    code = "RNK109"
    name = "global-root-with-subgroup"
    severity = Severity.WARNING
    summary = "An integer src/dst is combined with a subgroup"
    default_enabled = False
    what = """\
Reports rooted collectives that pass an integer literal as `src` or `dst`
together with a group along a parallel axis (`group=dp_group`,
`group=mesh["tp"].get_group()`, `group=get_data_parallel_group()`).

Off by default: whether the root belongs to the group depends on the
parallel layout, which a linter cannot see. On the review corpus
(docs/dev/ecosystem-review.md) all 6 findings were in tests whose layout makes
the group the whole world. Opt in with `extend-select = ["RNK109"]` to
review every such root.
"""
    why = """\
`src` and `dst` are *global* ranks even when a subgroup is given. `src=0`
with the second data-parallel group names a rank that is not a member: torch
raises "rank is not part of group" — or, with a computed value, the wrong
member silently becomes the root. Since torch 2.6, `group_src`/`group_dst`
take the rank within the group.
"""
    limits = """\
Only integer literals; computed roots are assumed to be global ranks
(`dist.get_global_rank(group, 0)`). Groups whose axis cannot be told from
their name (`group=self.model_update_group`) are not reported: RL trainers
create such groups outside the default group, where ranks map to themselves.
"""
    runtime_check = """\
A global root outside the group fails on the group's ranks; the companion names
the rank that raised.

```python
import pytest
import torch
import torch.distributed as dist
from ranklint.runtime import RankFailure, run_ranks


def broadcast_in_group(rank, world_size):
    high = dist.new_group([2, 3])
    if rank in (2, 3):
        dist.broadcast(torch.ones(1), src=0, group=high)  # global rank 0 is not in it


with pytest.raises(RankFailure, match="Global rank 0 is not part of group"):
    run_ranks(broadcast_in_group, 4)
```
"""
    valid = (
        """
        import torch.distributed as dist


        def share(t, dp_group):
            dist.broadcast(t, group_src=0, group=dp_group)
            dist.gather(t, None, group_dst=0, group=dp_group)
        """,
        """
        import torch.distributed as dist


        def share(t, group):
            dist.broadcast(t, group_src=0, group=group)
            dist.broadcast(t, src=dist.get_global_rank(group, 0), group=group)
            dist.broadcast(t, src=0)
        """,
    )
    invalid = (
        """
        import torch.distributed as dist


        def share(t, dp_group):
            dist.broadcast(t, src=0, group=dp_group)  # expect: RNK109
            dist.gather(t, None, 0, dp_group)  # expect: RNK109
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        spec, _ = self.ctx.calls.classify(node)
        if spec is None or not spec.roots or spec.group is None:
            return
        root = spec.roots[0]
        value = find_argument(node, root)
        group = find_argument(node, spec.group)
        if not isinstance(value, cst.Integer) or not is_axis_subgroup(group):
            return
        self.report(
            value,
            f"`{root.keyword}={value.value}` is a global rank, but `{spec.short}` runs on a "
            f"subgroup: it is probably not a member ('rank is not part of group') or not "
            f"the member meant; use `group_{root.keyword}={value.value}` (torch >= 2.6)",
        )
