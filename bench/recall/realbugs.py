"""Recall on the real-bug set: re-created public reports, each a buggy/fixed pair.

    python bench/recall/realbugs.py [--markdown] [--half tuning|test] [--default-rules]

``tests/realbugs/<case>/buggy.py`` marks with ``# expect: RNKxxx`` the line
where the bug should be reported; ``fixed.py`` is the corrected code, where none
of those codes (nor RNK102, RNK104, RNK105) may be reported. Each file is linted
on its own with the default rule set. Prints, per case, what was expected and
found, then recall per bug class and overall, and the findings on fixed
versions (false alarms). The docstring of each buggy file cites its report.

**Halves.** Each case belongs to the tuning half or the test half by a hash of
its name and :data:`HALF_SEED` (:func:`half`): a random split, recorded, that
stays put as cases are added. The analysis is tuned on the tuning half only;
the test half is measured, not read to fix what it misses.
"""

from __future__ import annotations

import argparse
import hashlib
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ranklint import Config, lint_paths
from ranklint.findings import Confidence
from ranklint.testing import actual_findings, expected_findings

REALBUGS = Path(__file__).resolve().parents[2] / "tests" / "realbugs"
# Reported on a fixed version, these are false alarms whatever the case's own code.
ALWAYS_WATCHED = frozenset({"RNK102", "RNK104", "RNK105"})
_CLASS = re.compile(r"^Class:\s*(?P<letter>[A-Z])\b", re.M)
_REPORT = re.compile(r"^Report:\s*(?P<url>\S+)", re.M)
# The seed of the split into halves (drawn once, for issue 36; never change it).
HALF_SEED = 36_2026
HALVES = ("tuning", "test")


def half(name: str) -> str:
    """The half a case belongs to: ``tuning`` or ``test``, by a seeded hash of its name."""
    digest = hashlib.sha256(f"{HALF_SEED}:{name}".encode()).digest()
    return HALVES[digest[0] & 1]


@dataclass(frozen=True)
class CaseResult:
    name: str
    bug_class: str
    report: str
    expected: list[tuple[int, str]]
    found: list[tuple[int, str]]  # on buggy.py, of the expected codes
    false_alarms: list[tuple[int, str]]  # on fixed.py, of the watched codes

    @property
    def hit(self) -> bool:
        return bool(self.expected) and set(self.expected) <= set(self.found)


def cases(which: str | None = None) -> list[Path]:
    """The cases, sorted by name; ``which``: only those of that half."""
    found = sorted(path for path in REALBUGS.iterdir() if (path / "buggy.py").is_file())
    return [path for path in found if which is None or half(path.name) == which]


def check(
    case: Path,
    config: Config | None = None,
    confidence: Confidence = Confidence.HIGH,
    *,
    default_rules: bool = False,
) -> CaseResult:
    """Lint the case's two versions at ``confidence`` (the default run's by
    default): a marker ``# expect: RNK102 (medium)`` is expected only at
    medium confidence or lower. The rules the markers name are turned on,
    opt-in ones too; with ``default_rules``, only the default selection runs
    and only its markers are expected (the default run's recall)."""
    buggy = (case / "buggy.py").read_text(encoding="utf-8")
    marked = expected_findings(buggy, confidence)
    if config is None:
        extra = () if default_rules else tuple(sorted({code for _, code in marked}))
        config = Config(extend_select=extra, confidence=confidence.value)
    enabled = set(config.enabled_codes())
    expected = [(line, code) for line, code in marked if code in enabled]
    codes = {code for _, code in expected}
    on_buggy = lint_paths([case / "buggy.py"], config, jobs=1).findings
    on_fixed = lint_paths([case / "fixed.py"], config, jobs=1).findings
    class_match = _CLASS.search(buggy)
    report_match = _REPORT.search(buggy)
    return CaseResult(
        name=case.name,
        bug_class=class_match.group("letter") if class_match else "?",
        report=report_match.group("url") if report_match else "",
        expected=expected,
        found=[pair for pair in actual_findings(on_buggy) if pair[1] in codes],
        false_alarms=[
            pair for pair in actual_findings(on_fixed) if pair[1] in codes | ALWAYS_WATCHED
        ],
    )


def _pairs(pairs: list[tuple[int, str]]) -> str:
    return ", ".join(f"{code}:{line}" for line, code in pairs) or "-"


def report(results: list[CaseResult], *, markdown: bool) -> str:
    rows = [
        (
            r.name,
            r.bug_class,
            _pairs(r.expected),
            ("yes " if r.hit else "no ") + _pairs(r.found),
            _pairs(r.false_alarms),
        )
        for r in results
    ]
    if markdown:
        lines = [
            "| case | class | expected | found | fixed: false alarms |",
            "|---|---|---|---|---|",
        ]
        lines += [f"| {' | '.join(row)} |" for row in rows]
    else:
        lines = [f"{a:<58} {b} {c:<14} {d:<22} {e}" for a, b, c, d, e in rows]
    per_class: Counter[str] = Counter(r.bug_class for r in results)
    hits: Counter[str] = Counter(r.bug_class for r in results if r.hit)
    lines.append("")
    for letter in sorted(per_class):
        lines.append(f"class {letter}: {hits[letter]}/{per_class[letter]} found")
    total, found = len(results), sum(hits.values())
    alarms = sum(1 for r in results if r.false_alarms)
    lines.append(f"recall: {found}/{total} = {found / total:.0%}" if total else "no cases")
    lines.append(f"fixed versions with a finding: {alarms}/{total}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument(
        "--confidence",
        choices=[tier.value for tier in Confidence],
        default=Confidence.HIGH.value,
        help="the lowest confidence reported (default: high, the default run's)",
    )
    parser.add_argument(
        "--default-rules",
        action="store_true",
        help="run the default rule selection only (the default run's recall); by default "
        "each case's rules are turned on, opt-in ones too",
    )
    parser.add_argument(
        "--half", choices=HALVES, help="only the cases of this half (default: every case)"
    )
    args = parser.parse_args()
    confidence = Confidence(args.confidence)
    results = [
        check(case, confidence=confidence, default_rules=args.default_rules)
        for case in cases(args.half)
    ]
    print(report(results, markdown=args.markdown))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
