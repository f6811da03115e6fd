"""All rules, one module per rule in family packages. Importing this package registers them."""

from __future__ import annotations

from ranklint.rules import (
    asynchronous,
    collectives,
    framework,
    hot_path,
    imports,
    portability,
    testsuite,
)
from ranklint.rules.base import PendingFinding, ProjectFinding, Rule, registered_rules

# The family packages above register their rules on import; keep the names referenced.
RULE_FAMILIES = (framework, collectives, hot_path, imports, asynchronous, portability, testsuite)


def all_rules() -> list[type[Rule]]:
    """Every rule, sorted by code."""
    return registered_rules()


def rule_by_code(code: str) -> type[Rule] | None:
    for rule in all_rules():
        if rule.code == code:
            return rule
    return None


__all__ = [
    "RULE_FAMILIES",
    "PendingFinding",
    "ProjectFinding",
    "Rule",
    "all_rules",
    "rule_by_code",
]
