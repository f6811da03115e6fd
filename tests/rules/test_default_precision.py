"""Shapes of real code that default rules used to misread (issue 16's review corpus)."""

from __future__ import annotations

import pytest

from ranklint import Config, lint_source


def _codes(source: str, path: str = "pkg/module.py") -> list[str]:
    return [f.code for f in lint_source(source, path, Config(select=("RNK502",))).findings]


@pytest.mark.parametrize(
    "flag",
    [
        "--mask-offpolicy-in-partial-rollout",
        "risk-averse_policy_gradient_v2",
        "desk-ABCDEFGHIJKLMNOPQRSTUV",
    ],
)
def test_token_prefix_inside_a_word_is_not_reported_as_secret(flag: str) -> None:
    source = f'FLAG = "{flag}"\n'

    codes = _codes(source)

    assert codes == []


@pytest.mark.parametrize(
    "secret",
    [
        "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2",
        "prefix sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2",
        "Bearer:hf_" + "Q" * 34,
        "AKIA" + "ABCDEFGHIJKLMNOP",
    ],
)
def test_token_prefix_at_start_of_a_word_is_reported_as_secret(secret: str) -> None:
    source = f'KEY = "{secret}"\n'

    codes = _codes(source)

    assert codes == ["RNK502"]


def _rnk105(source: str) -> list[int]:
    result = lint_source(source, "pkg/groups.py", Config(select=("RNK105",)))
    return [f.line for f in result.findings]


@pytest.mark.parametrize("member", ["rank", "global_rank", "dist.get_rank()"])
def test_one_member_group_of_the_callers_global_rank_is_not_reported(member: str) -> None:
    source = (
        "import torch.distributed as dist\n\n\n"
        "def solo(rank, global_rank):\n"
        f"    return dist.new_group(ranks=[{member}])\n"
    )

    lines = _rnk105(source)

    assert lines == []


@pytest.mark.parametrize("members", ["[local_rank]", "[rank, rank + 1]", "[rank // 2]"])
def test_group_of_other_rank_derived_members_is_reported(members: str) -> None:
    source = (
        "import os\n\nimport torch.distributed as dist\n\n\n"
        "def pair():\n"
        "    rank = dist.get_rank()\n"
        '    local_rank = int(os.environ["LOCAL_RANK"])\n'
        f"    return dist.new_group(ranks={members})\n"
    )

    lines = _rnk105(source)

    assert lines == [9]
