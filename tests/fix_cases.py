"""Helpers shared by the tests of fixes: fixes, pending fixes and findings built by hand."""

from __future__ import annotations

from pathlib import Path

import libcst as cst

from ranklint.findings import Applicability, Edit, Finding, Fix, Severity
from ranklint.rules import PendingFinding, PendingFix, rule_by_code


def safe_fix(*edits: Edit, message: str = "m") -> Fix:
    """A safe fix made of ``edits``."""
    return Fix(Applicability.SAFE, message, edits)


def pending_fix_at(module: cst.Module, old: cst.CSTNode, new: cst.CSTNode | None) -> PendingFinding:
    """An RNK103 finding at ``old`` in the first statement of ``module`` whose fix
    replaces ``old`` with ``new`` (no fix for ``None``)."""
    rule = rule_by_code("RNK103")
    assert rule is not None
    fix = None if new is None else PendingFix("fix it", old, new)
    return PendingFinding(rule, old, "m", None, module.body[0], fix)


def first_call(module: cst.Module) -> cst.Call:
    """The first call of ``module``, in source order."""
    found: list[cst.Call] = []

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            found.append(node)

    module.visit(Calls())
    return found[0]


def finding_with(path: Path, fix: Fix, *, message: str = "m") -> Finding:
    """An RNK103 finding on line 1 of ``path`` with ``fix``."""
    return Finding(
        "RNK103", "missing-root", Severity.WARNING, message, str(path), 1, 1, 1, 2, fix=fix
    )
