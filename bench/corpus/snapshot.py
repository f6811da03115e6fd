"""Record ranklint's JSON output on the fixtures and the ecosystem corpus, with hashes.

    python bench/corpus/snapshot.py OUT_DIR [--skip-ecosystem] [--review-corpus] [--jobs N]

For refactors that must not change behaviour: run it before and after, then
compare the hashes (or ``diff -r`` the two folders). Each output is exactly
what ``ranklint check --select ALL --no-cache --format json`` prints:

- ``fixtures.json``: run from the repository root on ``fixtures/``;
- ``ecosystem-<project>.json``: run inside each project unpacked by
  ``bench/corpus/ecosystem.py`` (``.cache/ecosystem/src/<project>``, downloaded there
  first), with a ``pyproject.toml`` holding an empty ``[tool.ranklint]`` table
  so that the project folder is the configuration root, as in
  ``bench/corpus/ecosystem.py``;
- with ``--review-corpus``, ``corpus-<project>.json``: the same inside each
  project of the review corpus that ``bench/corpus/corpus.py build`` exported
  (``.cache/corpus/src/<project>``, both halves, whatever was built).

``OUT_DIR/SHA256SUMS`` lists the hash of every output.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
from pathlib import Path

from ecosystem import PROJECTS as ECOSYSTEM_PROJECTS

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
ECOSYSTEM = REPO / ".cache" / "ecosystem" / "src"
REVIEW_CORPUS = REPO / ".cache" / "corpus" / "src"
_COMMAND = ("check", "--select", "ALL", "--no-cache", "--format", "json", "--exit-zero")


def ranklint_json(cwd: Path, target: str, jobs: int) -> bytes:
    """The JSON ``ranklint check`` prints for ``target``, run in ``cwd``."""
    command = [sys.executable, "-m", "ranklint", *_COMMAND, "--jobs", str(jobs), target]
    done = subprocess.run(command, cwd=cwd, capture_output=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"ranklint failed in {cwd}: {done.stderr.decode(errors='replace')}")
    return done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--skip-ecosystem", action="store_true")
    parser.add_argument("--review-corpus", action="store_true")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    outputs = {"fixtures.json": ranklint_json(REPO, "fixtures", args.jobs)}
    if not args.skip_ecosystem:
        if not ECOSYSTEM.is_dir():
            raise SystemExit(f"{ECOSYSTEM} is missing: run bench/corpus/ecosystem.py first")
        for project in sorted(p for p in ECOSYSTEM.iterdir() if p.name in ECOSYSTEM_PROJECTS):
            marker = project / "pyproject.toml"
            if not marker.exists():
                marker.write_text("[tool.ranklint]\n")
            outputs[f"ecosystem-{project.name}.json"] = ranklint_json(project, ".", args.jobs)
    if args.review_corpus:
        if not REVIEW_CORPUS.is_dir():
            raise SystemExit(f"{REVIEW_CORPUS} is missing: run bench/corpus/corpus.py build first")
        for project in sorted(p for p in REVIEW_CORPUS.iterdir() if p.is_dir()):
            marker = project / "pyproject.toml"
            if not marker.exists():
                marker.write_text("[tool.ranklint]\n")
            outputs[f"corpus-{project.name}.json"] = ranklint_json(project, ".", args.jobs)
    lines = []
    for name, data in outputs.items():
        (args.out / name).write_bytes(data)
        digest = hashlib.sha256(data).hexdigest()
        lines.append(f"{digest}  {name}")
        print(f"{digest}  {name}  ({len(data)} bytes)")
    (args.out / "SHA256SUMS").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
