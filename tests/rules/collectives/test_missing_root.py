"""RNK103 missing-root: the exact messages of its findings and fixes, on a subgroup
and on the default group, and the cases it reports without a fix."""

from __future__ import annotations

import pytest

from ranklint.findings import Applicability
from tests.fix_cases import dedented, rule_findings, rule_fixed


def test_missing_root_on_a_subgroup_says_rank_zero_is_wrong_and_offers_only_group_src() -> None:
    source = dedented(
        """
        import torch.distributed as dist


        def share(objs, pg):
            dist.broadcast_object_list(objs, group=pg)
        """
    )

    (finding,) = rule_findings("RNK103", source)

    assert finding.message == (
        "`broadcast_object_list` on a group without `src`/`group_src`: torch uses global rank "
        "0, which is not a member of most groups (it raises there, or the wrong rank is the "
        "root); pass `group_src=0` for the group's first member, or the root's global rank "
        "as `src`"
    )
    assert finding.fix is not None
    assert finding.fix.applicability is Applicability.UNSAFE
    assert finding.fix.message == "Root the call at the group's first member: `group_src=0`"
    assert rule_fixed("RNK103", source) == source.replace("group=pg)", "group=pg, group_src=0)")


@pytest.mark.parametrize(
    "group", ["", ", group=None", ", group=dist.group.WORLD", ", group=GroupMember.WORLD"]
)
def test_missing_root_on_the_default_group_says_the_root_is_implicit_and_offers_src_zero(
    group: str,
) -> None:
    source = (
        "import torch.distributed as dist\nfrom torch.distributed import GroupMember\n\n\n"
        f"def share(out):\n    dist.gather_object(1, out{group})\n"
    )

    (finding,) = rule_findings("RNK103", source)

    assert finding.message == (
        "`gather_object` without `dst`: the root is implicitly global rank 0; name it "
        "(`dst=0`) so that every reader sees whose data is used"
    )
    assert finding.fix is not None
    assert finding.fix.applicability is Applicability.SAFE
    assert finding.fix.message == "Write out the implicit root: `dst=0` (global rank 0)"
    assert rule_fixed("RNK103", source) == source.replace(
        f"1, out{group})", f"1, out{group}, dst=0)"
    )


def test_missing_root_through_deepspeed_is_reported_without_a_fix() -> None:
    source = "import deepspeed.comm as dc\n\n\ndef f(o):\n    dc.broadcast_object_list(o)\n"

    (finding,) = rule_findings("RNK103", source)

    assert finding.fix is None


def test_missing_root_that_raises_says_so_and_offers_no_fix() -> None:
    source = "import torch.distributed as dist\n\n\ndef gather(t):\n    dist.reduce(t)\n"

    (finding,) = rule_findings("RNK103", source)

    assert finding.message == (
        "`reduce` without `dst`/`group_dst`: torch raises at run time, on the cluster; pass "
        "the root explicitly (`dst=0`, or `group_dst=0` for a group's first member)"
    )
    assert finding.fix is None
