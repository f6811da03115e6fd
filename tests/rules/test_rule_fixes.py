"""Every rule's fix examples are tests: `before` fixed is `after`, and fixing `after`
changes nothing; rules' fix metadata agrees with the fixes they make."""

from __future__ import annotations

import pytest

from ranklint import Config, lint_source
from ranklint.findings import Applicability
from ranklint.fixing.apply import fix_text
from ranklint.rules import Rule, all_rules

FIXABLE = [rule for rule in all_rules() if rule.fix_applicability]


def _config(rule: type[Rule]) -> Config:
    return Config(select=(rule.code, *rule.example_select), confidence="low")


def _fixed(rule: type[Rule], source: str) -> tuple[str, list]:
    config = _config(rule)
    findings = lint_source(source, rule.example_path, config).findings

    def relint(text: str) -> list:
        return lint_source(text, rule.example_path, config).findings

    return fix_text(source, findings, relint, unsafe=True)


def _fix_cases() -> list[pytest.param]:
    return [
        pytest.param(rule, before, after, id=f"{rule.code}-fix-{index}")
        for rule in FIXABLE
        for index, (before, after) in enumerate(rule.fix_examples())
    ]


@pytest.mark.parametrize(("rule", "before", "after"), _fix_cases())
def test_fix_example_turns_before_into_after(rule: type[Rule], before: str, after: str) -> None:
    fixed, done = _fixed(rule, before)

    assert fixed == after
    assert {finding.code for finding in done} == {rule.code}


@pytest.mark.parametrize(("rule", "before", "after"), _fix_cases())
def test_fix_example_after_is_a_fixed_point(rule: type[Rule], before: str, after: str) -> None:
    fixed, done = _fixed(rule, after)

    assert fixed == after
    assert done == []


@pytest.mark.parametrize("rule", FIXABLE, ids=lambda rule: rule.code)
def test_rule_with_a_fix_documents_it_with_examples(rule: type[Rule]) -> None:
    assert rule.fix_safety.strip()
    assert rule.fix_examples()


@pytest.mark.parametrize("rule", FIXABLE, ids=lambda rule: rule.code)
def test_fixes_a_rule_makes_have_its_declared_applicability(rule: type[Rule]) -> None:
    config = _config(rule)
    fixes = [
        finding.fix
        for before, _ in rule.fix_examples()
        for finding in lint_source(before, rule.example_path, config).findings
        if finding.code == rule.code and finding.fix is not None
    ]

    assert fixes
    assert {fix.applicability for fix in fixes} == rule.fix_applicability
    assert all(fix.message and fix.edits for fix in fixes)


@pytest.mark.parametrize("rule", all_rules(), ids=lambda rule: rule.code)
def test_rule_without_declared_fix_offers_none_on_its_examples(rule: type[Rule]) -> None:
    config = _config(rule)
    _, invalid = rule.examples()
    offered = [
        finding
        for example in invalid
        for finding in lint_source(example, rule.example_path, config).findings
        if finding.code == rule.code and finding.fix is not None
    ]

    assert all(f.fix is not None and f.fix.applicability in rule.fix_applicability for f in offered)
    if not rule.fix_applicability:
        assert offered == []


def test_unsafe_fix_is_not_applied_without_unsafe() -> None:
    rule = next(rule for rule in FIXABLE if rule.fix_applicability == {Applicability.UNSAFE})
    before, _ = rule.fix_examples()[0]
    config = _config(rule)
    findings = lint_source(before, rule.example_path, config).findings

    fixed, done = fix_text(before, findings, lambda text: [], unsafe=False)

    assert fixed == before
    assert done == []


# -- when a rule offers its fix, and when not -----------------------------------

WILDCARD = "from torch.distributed import *\n\n\ndef leader():\n    return get_rank() == 0\n"


@pytest.mark.parametrize(
    ("code", "source", "path", "offered"),
    [
        pytest.param("RNK301", WILDCARD, "m.py", True, id="RNK301-one-wildcard"),
        pytest.param(
            "RNK301", "from os import *\n" + WILDCARD, "m.py", False, id="RNK301-two-wildcards"
        ),
        pytest.param(
            "RNK301", WILDCARD + "__all__ = ['leader']\n", "m.py", False, id="RNK301-own-all"
        ),
        pytest.param("RNK301", WILDCARD, "pkg/__init__.py", False, id="RNK301-package-init"),
        pytest.param(
            "RNK103",
            "import deepspeed.comm as dc\n\n\ndef f(o, tp_group):\n"
            "    dc.broadcast_object_list(o, group=tp_group)\n",
            "m.py",
            False,
            id="RNK103-deepspeed",
        ),
        pytest.param(
            "RNK106",
            "from torch.distributed import all_reduce\n\n\ndef f(t):\n    all_reduce(t)\n",
            "m.py",
            False,
            id="RNK106-no-name-for-ReduceOp",
        ),
        pytest.param(
            "RNK106",
            "import torch\n\n\ndef f(t):\n    torch.distributed.all_reduce(t)\n",
            "m.py",
            True,
            id="RNK106-through-torch",
        ),
        pytest.param(
            "RNK108",
            "import torch.distributed as dist\n\n\ndef f(t, mesh):\n"
            "    dist.all_reduce(t, group=mesh.get_group(0))\n    dist.barrier()\n",
            "m.py",
            False,
            id="RNK108-mesh-parameter",
        ),
        pytest.param(
            "RNK108",
            "import torch.distributed as dist\n\n\ndef f(t, tp_group, dp_group):\n"
            "    dist.all_reduce(t, group=tp_group)\n    dist.broadcast(t, 0, group=dp_group)\n"
            "    dist.barrier()\n",
            "m.py",
            False,
            id="RNK108-two-group-parameters",
        ),
        pytest.param(
            "RNK108",
            "import torch.distributed as dist\nfrom torch.distributed import ProcessGroup\n\n\n"
            "def sync(pg: ProcessGroup):\n    dist.barrier()\n",
            "m.py",
            True,
            id="RNK108-annotated-process-group",
        ),
        pytest.param(
            "RNK108",
            "import torch.distributed as dist\nfrom torch.distributed import ProcessGroup\n\n\n"
            "def sync(t, pg: ProcessGroup):\n    dist.broadcast(t, src=0)\n",
            "m.py",
            False,
            id="RNK108-rooted-collective-with-a-global-root",
        ),
        pytest.param(
            "RNK108",
            "import torch.distributed as dist\nfrom torch.distributed import ProcessGroup\n\n\n"
            "def sync(pg: ProcessGroup):\n    if dist.get_rank() == 0:\n        dist.barrier()\n",
            "m.py",
            False,
            id="RNK108-under-a-rank-test",
        ),
        pytest.param(
            "RNK108",
            "import torch.distributed as dist\nfrom torch.distributed import ProcessGroup\n\n\n"
            "def sync(pg: ProcessGroup, verbose):\n    if verbose:\n        dist.barrier()\n",
            "m.py",
            True,
            id="RNK108-under-a-test-of-no-rank",
        ),
        pytest.param(
            "RNK301",
            "from m import *  # noqa: F401,F403\nprint(name)\n",
            "m.py",
            False,
            id="RNK301-marked-re-export",
        ),
        pytest.param(
            "RNK301",
            "from m import *  # noqa: E501\nprint(name)\n",
            "m.py",
            True,
            id="RNK301-noqa-of-other-codes",
        ),
        pytest.param("RNK301", "from m import *\n", "m.py", False, id="RNK301-reads-nothing"),
        pytest.param(
            "RNK301", "from m import *\n_private()\n", "m.py", False, id="RNK301-private-name"
        ),
        pytest.param(
            "RNK301",
            "from m import *\ndef f(x: 'Model'):\n    return run(x)\n",
            "m.py",
            False,
            id="RNK301-string-annotation",
        ),
        pytest.param(
            "RNK601",
            "import torch\n\n\ndef test_x(a, b):\n    torch.testing.assert_close(a, b)\n",
            "tests/test_x.py",
            False,
            id="RNK601-assert-close-defaults-by-dtype",
        ),
        pytest.param(
            "RNK601",
            "def test_x(a, b):\n    assert a.isclose(b, atol=0.1).all()\n",
            "tests/test_x.py",
            True,
            id="RNK601-tensor-method",
        ),
        pytest.param(
            "RNK110",
            "import torch.distributed as dist\n\n\ndef f(t, g):\n"
            "    for i in range(dist.get_world_size(g)):\n        dist.broadcast(t, i, g)\n",
            "m.py",
            False,
            id="RNK110-positional-root-before-another",
        ),
    ],
)
def test_rule_offers_its_fix_only_where_it_is_right(
    code: str, source: str, path: str, offered: bool
) -> None:
    findings = lint_source(source, path, Config(select=(code,), confidence="low")).findings

    assert findings
    assert {f.code for f in findings} == {code}
    assert all((f.fix is not None) is offered for f in findings)


def test_wildcard_fix_writes_a_long_name_list_one_name_per_line_in_its_block() -> None:
    names = [f"name_number_{i}" for i in range(8)]
    source = "try:\n    from helpers import *\nexcept ImportError:\n    pass\n" + "".join(
        f"{name}()\n" for name in reversed(names)
    )
    rule = next(rule for rule in FIXABLE if rule.code == "RNK301")

    fixed, _ = _fixed(rule, source)

    listed = "".join(f"        {name},\n" for name in names)
    assert fixed.startswith(f"try:\n    from helpers import (\n{listed}    )\nexcept ImportError:")


def test_reduce_op_fix_through_torch_spells_the_full_path() -> None:
    source = "import torch\n\n\ndef f(t):\n    torch.distributed.all_reduce(t)\n"
    rule = next(rule for rule in FIXABLE if rule.code == "RNK106")

    fixed, _ = _fixed(rule, source)

    assert "torch.distributed.all_reduce(t, op=torch.distributed.ReduceOp.SUM)" in fixed
