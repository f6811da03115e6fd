"""All rules. Importing this package registers every rule module below."""

from __future__ import annotations

from ranklint.rules import (
    asynchronous,
    hot_path,
    imports,
    parse,
    portability,
    process_groups,
    testsuite,
)
from ranklint.rules.base import PendingFinding, Rule, registered_rules

# The modules above register their rules on import; keep the names referenced.
RULE_MODULES = (parse, process_groups, hot_path, imports, asynchronous, portability, testsuite)


def all_rules() -> list[type[Rule]]:
    """Every rule, sorted by code."""
    return registered_rules()


def rule_by_code(code: str) -> type[Rule] | None:
    for rule in all_rules():
        if rule.code == code:
            return rule
    return None


__all__ = ["RULE_MODULES", "PendingFinding", "Rule", "all_rules", "rule_by_code"]
