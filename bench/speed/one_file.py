"""One-file runs against a whole run, on a real project: the same findings, and the cost.

    python bench/speed/one_file.py PROJECT [--select CODES] [--sample N] [--seed S]

Lints the whole of PROJECT once without a cache (2 processes), then checks
files one at a time, each as a fresh run without a cache with the project
index on (as ``ranklint check FILE`` in a fresh clone): N files picked at
random and N of the files that hold findings. For each it prints the time as
a share of the whole run and any finding that differs from the whole run's
findings in that file. A one-file run leaves out only an entry script
imported by another file (RNK101) and the checks that need every file
(RNK507's undeclared mesh dimensions); ``bench/speed/callers.py`` measures how it
finds callers.
In-process times: the interpreter's start (about 0.1-0.3 s) is not counted.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

from ranklint import Config, lint_paths
from ranklint.discovery import discover

Seen = tuple[int, int, str, str]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("project", type=Path)
    parser.add_argument("--select", help="comma-separated codes (default: the default rules)")
    parser.add_argument("--sample", type=int, default=8)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    root = args.project.resolve()
    os.chdir(root)
    select = tuple(args.select.split(",")) if args.select else None
    config = Config(root=root, select=select)
    started = time.perf_counter()
    whole = lint_paths(["."], config, jobs=2)
    whole_seconds = time.perf_counter() - started
    print(f"whole run: {whole_seconds:.1f} s, {whole.files_checked} files, "
          f"{len(whole.findings)} findings")  # fmt: skip
    expected: dict[str, list[Seen]] = {}
    for finding in whole.findings:
        seen = (finding.line, finding.col, finding.code, finding.message)
        expected.setdefault(os.path.normpath(finding.path), []).append(seen)
    files = list(discover(["."], config, force_exclude=True).files)
    picked = random.Random(args.seed).sample(files, min(args.sample, len(files)))
    picked += sorted(expected)[: args.sample]
    differing = 0
    for path in picked:
        started = time.perf_counter()
        alone = lint_paths([path], config, jobs=2, whole_project=True)
        seconds = time.perf_counter() - started
        found = [(f.line, f.col, f.code, f.message) for f in alone.findings]
        wanted = expected.get(os.path.normpath(path), [])
        extra = [seen[:3] for seen in found if seen not in wanted]
        missing = [seen[:3] for seen in wanted if seen not in found]
        differing += bool(extra or missing)
        print(f"{seconds:6.2f} s ({seconds / whole_seconds:4.0%}) {path}: {len(found)} findings"
              f"{f'; extra {extra}' if extra else ''}"
              f"{f'; missing {missing}' if missing else ''}")  # fmt: skip
    print(f"{differing} of {len(picked)} files differ from the whole run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
