"""Each rule's "Prove it at run time" section holds a runnable runtime test, and it runs."""

from __future__ import annotations

import re

import pytest

from ranklint.rules import Rule, all_rules

pytestmark = pytest.mark.timeout(120)

#: The rules whose docs must show the runtime test: the collective family and
#: the test-convention rules on distributed tests.
WITH_RUNTIME_CHECK = {f"RNK{n}" for n in range(102, 111)} | {"RNK603", "RNK604"}
_BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def _rules() -> list[type[Rule]]:
    return [rule for rule in all_rules() if rule.runtime_check]


def test_runtime_checks_cover_the_collective_and_distributed_test_rules() -> None:
    assert {rule.code for rule in _rules()} == WITH_RUNTIME_CHECK


@pytest.mark.parametrize("rule", _rules(), ids=lambda rule: rule.code)
def test_rule_runtime_check_holds_one_python_block_that_runs(rule: type[Rule]) -> None:
    pytest.importorskip("torch", reason="the runtime companion needs torch")
    blocks = _BLOCK.findall(rule.runtime_check)
    assert len(blocks) == 1

    exec(compile(blocks[0], f"<{rule.code} runtime check>", "exec"), {"__name__": rule.code})
