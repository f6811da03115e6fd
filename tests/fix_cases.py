"""Helpers shared by the tests of fixes: fixes, pending fixes and findings built by hand,
and one rule's findings and fixes on a snippet."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst

from ranklint import Config, lint_source
from ranklint.findings import Applicability, Edit, Finding, Fix, Severity
from ranklint.fixing.apply import fix_text
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


def dedented(text: str) -> str:
    """``text`` dedented, without its leading blank lines and indentation."""
    return textwrap.dedent(text).lstrip()


def rule_findings(code: str, source: str, path: str = "m.py") -> list[Finding]:
    """The findings of the rule ``code`` on ``source`` at ``path`` (every confidence);
    fails the test on internal errors."""
    result = lint_source(source, path, Config(select=(code,), confidence="low"))
    assert result.errors == []
    return [finding for finding in result.findings if finding.code == code]


def rule_fixed(code: str, source: str, path: str = "m.py") -> str:
    """``source`` with every fix of the rule ``code`` applied (unsafe ones included)."""

    def relint(text: str) -> list[Finding]:
        return rule_findings(code, text, path)

    fixed, _ = fix_text(source, relint(source), relint, unsafe=True)
    return fixed
