"""The cost floor of any libcst-based linter, as a process: parse every file, walk it once.

    python bench/speed/floor.py FILE_LIST [--parse-only]

FILE_LIST holds one path per line. Files libcst cannot parse are skipped (and
counted). Used by ``bench/speed/run.py``.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import libcst as cst


class _Nothing(cst.CSTVisitor):
    """A no-op visitor: libcst's own traversal cost."""


def main() -> int:
    files = Path(sys.argv[1]).read_text(encoding="utf-8").splitlines()
    parse_only = "--parse-only" in sys.argv[2:]
    failures = 0

    def work() -> None:
        nonlocal failures
        for name in files:
            try:
                module = cst.parse_module(Path(name).read_bytes())
            except Exception:  # the floor only counts what parses
                failures += 1
                continue
            if not parse_only:
                module.visit(_Nothing())

    sys.setrecursionlimit(60_000)
    threading.stack_size(512 * 1024 * 1024)  # as ranklint does, for deep nesting
    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    sys.stderr.write(f"floor: {len(files)} files, {failures} unparsable\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
