"""All rules, one module per rule in family packages (``rules/<family>/<rule_name>.py``).

Importing this package imports every module of every family package below it,
which registers their rules (:class:`~ranklint.rules.base.Rule` subclasses
register themselves): adding a rule is adding its module.
"""

from __future__ import annotations

import importlib
import pkgutil

from ranklint.rules.base import (
    PendingFinding,
    PendingFix,
    ProjectFinding,
    Rule,
    registered_rules,
)


def _import_rule_modules() -> tuple[str, ...]:
    """Import every module under the family packages; their names, sorted."""
    found: list[str] = []
    for family in pkgutil.iter_modules(__path__, prefix=f"{__name__}."):
        if not family.ispkg:
            continue
        package = importlib.import_module(family.name)
        for module in pkgutil.iter_modules(package.__path__, prefix=f"{family.name}."):
            importlib.import_module(module.name)
            found.append(module.name)
    return tuple(sorted(found))


RULE_MODULES = _import_rule_modules()


def all_rules() -> list[type[Rule]]:
    """Every rule, sorted by code."""
    return registered_rules()


def rule_by_code(code: str) -> type[Rule] | None:
    for rule in all_rules():
        if rule.code == code:
            return rule
    return None


__all__ = [
    "RULE_MODULES",
    "PendingFinding",
    "PendingFix",
    "ProjectFinding",
    "Rule",
    "all_rules",
    "rule_by_code",
]
