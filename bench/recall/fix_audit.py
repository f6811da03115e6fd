"""Audit every fix ranklint offers on a corpus: does any hide a bug?

    python bench/recall/fix_audit.py [--cache DIR] [--project NAME ...] [--jobs N]

Runs :func:`ranklint.fixing.audit.audit_fixes` with every rule selected on each
``.py`` file of the review corpus that ``bench/corpus/corpus.py build`` exported
(default ``.cache/corpus``; the projects of its manifest, or those named): each
fix is applied alone, the file is linted again, and the audit reports any
finding the fix silenced without changing the code the way it asked, any
other change in what a safe fix's file reports, and any name a wildcard fix
leaves unbound. Prints the fixes offered per code and kind, every violation,
and exits 1 if there is one. Files are linted one at a time (no project
phase): a fix's effect on the findings of its own file is what is audited.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from ranklint import Config, lint_source
from ranklint.fixing.audit import audit_fixes
from ranklint.source import SourceError, decode_source

ALL = Config(select=("ALL",))


def _audit_file(job: tuple[str, str]) -> tuple[str, Counter[str], list[str]]:
    path, shown = job
    try:
        source = decode_source(Path(path).read_bytes())
    except (OSError, SourceError):
        return shown, Counter(), []
    offered: Counter[str] = Counter(
        f"{finding.code} {finding.fix.applicability.value}"
        for finding in lint_source(source, shown, ALL).findings
        if finding.fix is not None
    )
    if not offered:
        return shown, offered, []
    return shown, offered, [violation.describe() for violation in audit_fixes(source, shown, ALL)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=Path(".cache/corpus"))
    parser.add_argument("--project", action="append", default=[])
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    manifest = json.loads((args.cache / "manifest.json").read_text(encoding="utf-8"))
    names = args.project or sorted(entry["name"] for entry in manifest)
    jobs = []
    for name in names:
        root = args.cache / "src" / name
        jobs += [
            (str(path), str(path.relative_to(args.cache / "src")))
            for path in sorted(root.rglob("*.py"))
        ]
    started = time.perf_counter()
    offered: Counter[str] = Counter()
    violations: list[str] = []
    with ProcessPoolExecutor(args.jobs) as pool:
        for _, counts, found in pool.map(_audit_file, jobs, chunksize=16):
            offered += counts
            violations += found
    seconds = time.perf_counter() - started
    print(f"{len(jobs)} files of {', '.join(names)} in {seconds:.0f} s")
    print("fixes offered (code, kind):")
    for key, count in sorted(offered.items()):
        print(f"  {key:<18} {count:>6}")
    print(f"violations: {len(violations)}")
    for violation in violations:
        print(f"  {violation}")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
