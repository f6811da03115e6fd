"""An audit of fixes: does applying one silence a finding without doing what it asked?

A fix is applied alone to a file, which is then linted again with the same
configuration (every rule selected, in the test suite). The audit reports:

- a finding about the same call or statement as the fixed one (the fixed one
  included) that is no longer reported although the code did not change the
  way its message asked: none of the changes its message recommends in
  backticks (``group_src=0``, ``op=ReduceOp.SUM``, ``from m import a, b``)
  newly appears on its lines, and, where the message asks to remove
  something, nothing it names was removed there;
- for a safe fix, which claims to keep behaviour, any other change in what
  the file reports: a finding of another call gone, or a new one;
- for a fix that replaces a wildcard import, a name the module reads that it
  leaves unbound (a ``NameError``) or bound only under a condition the
  wildcard used to cover, and a name it imports that the module reads only in
  annotations (the source module may define it only for type checkers) or
  that is a dunder (``__class__``, which no module exports);
- a fix of a call that passes ``*args`` or ``**kwargs`` (what they carry is
  not seen), and a fix of an import whose line tells pyflakes it is
  deliberate (``# noqa: F401``, ``F403``, ``F405``: a re-export).

Used by the test suite (on the fixtures and on generated programs) and by
``bench/recall/fix_audit.py`` (on the review corpus).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from ranklint.analysis.walk.wildcards import wildcard_names
from ranklint.api import lint_source
from ranklint.config import Config
from ranklint.findings import Applicability, Finding
from ranklint.fixing.edits import apply_fixes
from ranklint.syntax import iter_nodes


@dataclass(frozen=True)
class FixViolation:
    """A fix that changed what is reported in a way its finding does not explain."""

    fixed: Finding
    # The finding the fix silenced (None: a safe fix changed the file's other findings).
    silenced: Finding | None
    why: str

    def describe(self) -> str:
        where = f"{self.fixed.path}:{self.fixed.line}:{self.fixed.col}"
        fix = self.fixed.fix.message if self.fixed.fix is not None else ""
        return f"{where}: the fix of {self.fixed.code} ({fix}) {self.why}"


def audit_fixes(source: str, path: str, config: Config) -> list[FixViolation]:
    """The violations of every fix (safe and unsafe) offered in ``source``, each
    applied alone; see the module docstring."""
    before = lint_source(source, path, config).findings
    violations: list[FixViolation] = []
    for finding in before:
        if finding.fix is None:
            continue
        fixed, applied = apply_fixes(source, [finding.fix])
        if not applied:
            continue
        after = lint_source(fixed, path, config).findings
        violations += _audit_one(finding, before, after, source, fixed)
        violations += _audit_names(finding, source, fixed)
        violations += _audit_blind_spots(finding, source)
    return violations


# `f(*args)`, `f(a, **kwargs)`; and pyflakes' codes of a deliberate import.
_UNPACKING = re.compile(r"[(,]\s*\*{1,2}\s*[\w(\[]")
_DELIBERATE_IMPORT = re.compile(r"#\s*noqa\s*:[^#]*\bF40[135]\b", re.IGNORECASE)


def _audit_blind_spots(finding: Finding, source: str) -> list[FixViolation]:
    """A fix where the rule cannot see what it changes (module docstring)."""
    text = _lines(source, finding.line, finding.end_line)
    if _UNPACKING.search(text):
        why = "edits a call that passes `*args` or `**kwargs`, whose contents it cannot see"
        return [FixViolation(finding, None, why)]
    if "import" in text and _DELIBERATE_IMPORT.search(text):
        why = "edits an import marked deliberate for pyflakes (a re-export)"
        return [FixViolation(finding, None, why)]
    return []


def _audit_names(finding: Finding, source: str, fixed: str) -> list[FixViolation]:
    """The name checks of a fix that removed a wildcard import (module docstring)."""
    if "import *" not in source:
        return []  # pragma: no mutate (a shortcut: modules without wildcards pass below too)
    try:
        old, new = cst.parse_module(source), cst.parse_module(fixed)
    except cst.ParserSyntaxError:
        return []
    before, after = wildcard_names(old), wildcard_names(new)
    if after.stars >= before.stars:
        return []
    problems = [f"leaves `{name}` unbound where it is read" for name in sorted(after.read)]
    problems += [
        f"leaves `{name}` bound only under a condition the wildcard covered"
        for name in sorted(after.conditional & before.conditional)
    ]
    for name in sorted(_imported(new) - _imported(old)):
        if name in before.annotations_only:
            problems.append(f"imports `{name}`, which the module reads only in annotations")
        elif name.startswith("__"):
            problems.append(f"imports `{name}`, an implicit name no module exports")
    return [FixViolation(finding, None, problem) for problem in problems]


def _imported(module: cst.Module) -> set[str]:
    """The names ``from`` imports bind anywhere in ``module``."""
    names: set[str] = set()
    for node in iter_nodes(module):
        if isinstance(node, cst.ImportFrom) and not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                target = alias.asname.name if alias.asname is not None else alias.name
                if isinstance(target, cst.Name):
                    names.add(target.value)
    return names


def _audit_one(
    finding: Finding,
    before: Sequence[Finding],
    after: Sequence[Finding],
    source: str,
    fixed: str,
) -> list[FixViolation]:
    assert finding.fix is not None
    shift = fixed.count("\n") - source.count("\n")
    remaining = Counter((other.code, other.line) for other in after)
    violations = []
    for other in before:
        if not _same_call(other, finding):
            continue
        key = (other.code, other.line)
        if remaining[key] > 0:
            remaining[key] -= 1
            continue
        if not _asked(other, source, fixed, shift):
            violations.append(
                FixViolation(
                    finding,
                    other,
                    f"silences {other.code} at line {other.line} ({_short(other.message)}) "
                    f"without making any change it asks for",
                )
            )
    if finding.fix.applicability is Applicability.SAFE:
        expected = Counter(other.code for other in before)
        expected[finding.code] -= 1
        got = Counter(other.code for other in after)
        changed = {code for code in expected | got if expected[code] != got[code]}
        if changed - {finding.code} or got[finding.code] > expected[finding.code]:
            violations.append(
                FixViolation(
                    finding,
                    None,
                    f"is safe but changes what else the file reports: "
                    f"{_counts(expected)} before, {_counts(got)} after",
                )
            )
    return violations


def _same_call(other: Finding, finding: Finding) -> bool:
    """``other`` starts within ``finding``'s span, or its span holds ``finding``'s start."""

    def inside(point: tuple[int, int], start: tuple[int, int], end: tuple[int, int]) -> bool:
        return start <= point <= end

    start, end = (finding.line, finding.col), (finding.end_line, finding.end_col)
    other_start, other_end = (other.line, other.col), (other.end_line, other.end_col)
    return inside(other_start, start, end) or inside(start, other_start, other_end)


# A recommended change in a message: a backticked span holding `=` or an import.
_SPAN = re.compile(r"`([^`]+)`")


def _asked(finding: Finding, source: str, fixed: str, shift: int) -> bool:
    """The code on ``finding``'s lines changed the way its message asks."""
    old = _lines(source, finding.line, finding.end_line)
    new = _lines(fixed, finding.line, finding.end_line + max(shift, 0))
    removing = "remove" in finding.message.lower()
    for span in _SPAN.findall(finding.message):
        if removing and old.count(span) > new.count(span):
            return True
        pattern = _pattern(span)
        if pattern is not None and len(pattern.findall(new)) > len(pattern.findall(old)):
            return True
    return False


def _pattern(span: str) -> re.Pattern[str] | None:
    """What code does the recommended ``span`` (``None``: it recommends no code)."""
    imported = re.fullmatch(r"from\s+(\S+)\s+import\s+.+", span)
    if imported is not None:
        module = re.escape(imported.group(1))
        return re.compile(rf"from\s+{module}\s+import\s+(?!\*)")
    keyword = re.fullmatch(r"(\w+)=(.*)", span)
    if keyword is None:
        return None
    name, value = keyword.groups()
    if not value:
        return re.compile(rf"\b{name}\s*=(?!=)")
    # `op=ReduceOp.SUM` is also done by `op=dist.ReduceOp.SUM`.
    return re.compile(rf"\b{name}\s*=\s*(?:[\w.]+\.)?{re.escape(value)}(?![\w.])")


def _lines(text: str, first: int, last: int) -> str:
    # Any separator: spans are counted within lines.
    return "\n".join(text.splitlines()[first - 1 : last])  # pragma: no mutate


def _short(message: str) -> str:
    return message if len(message) <= 80 else message[:77] + "..."


def _counts(counts: Counter[str]) -> str:
    return ", ".join(f"{code} x{n}" for code, n in sorted(counts.items()) if n) or "nothing"
