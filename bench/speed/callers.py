"""One-file runs see callers: a changed helper's rank-guarded callers, cold, on a real project.

    python bench/speed/callers.py PROJECT [--sample N] [--seed S] [--jobs N] [--select CODES]

Lints the whole of PROJECT once without a cache (the baseline time), then
re-creates the change that pre-commit catches on a fresh clone only if a
one-file run sees callers: it picks N project functions (fixed seed) that
another file calls under a rank test (``if rank == 0: helper()``) and that
issue no collective; for each, it adds a ``barrier()`` at the top of the
helper's body (in place; the file is restored afterwards), runs ``ranklint
check HELPER --no-cache`` in-process (project index on, as the CLI does) and
checks that an RNK102 finding is reported at the rank-guarded call site in
the other file. It also checks the findings of the whole run whose call
chain ends in another file the same way, unchanged. Prints each run's time as
a share of the whole cold run (target: at most 0.15) and every call site
missed. Exits 1 if one is missed. Both are timed in this run, on the same
machine, with the same number of processes; the interpreter's start is not
counted.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import libcst as cst

from ranklint import Config, lint_paths
from ranklint.analysis.project.callgraph import FunctionRef, ProjectIndex, call_events
from ranklint.analysis.project.layout import PROJECT_MARKERS
from ranklint.analysis.project.reach import _communicates
from ranklint.api import lint_files
from ranklint.discovery import discover
from ranklint.model.events import Branch, Event, ModuleSummary

# A call site under a rank test and the helper it calls in another file.
Case = tuple[str, int, FunctionRef]


def _guarded_calls(events: list[Event], guarded: bool = False) -> list[tuple[Event, bool]]:
    found = []
    for event in events:
        if isinstance(event, Branch):
            rank = event.cond is not None and event.cond.taint.rank and event.cond.taint.strong
            for arm in event.arms:
                found += _guarded_calls(arm, guarded or rank)
        elif guarded:
            found += [(call, True) for call in call_events([event])]
    return found


def _cases(summaries: list[ModuleSummary]) -> list[tuple[str, FunctionRef, FunctionRef]]:
    """(caller path, caller, helper) for rank-guarded calls into another file's
    module-level function that communicates nothing itself."""
    index = ProjectIndex(summaries)
    cases = []
    for summary in summaries:
        for function in (summary.module, *summary.functions.values()):
            for call, _ in _guarded_calls(function.events):
                callee = index.resolve(call.target, summary, function)
                if callee is None or callee.module.path == summary.path:
                    continue
                helper = callee.function
                if helper.class_name is not None or "." in helper.qualname:
                    continue
                if any(True for _ in call_events(helper.events)) or _communicates(helper.events):
                    continue  # keep to leaves that communicate nothing: the chain is the call
                cases.append((summary.path, FunctionRef(summary, function), callee))
    return sorted(
        {(c[0], c[1].function.qualname, c[2].module.path, c[2].function.qualname): c for c in cases}
        .values(),
        key=lambda c: (c[0], c[1].function.qualname, c[2].module.path),
    )  # fmt: skip


class _AddBarrier(cst.CSTTransformer):
    """Adds ``barrier()`` as the first statement of the module-level function ``name``."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.done = False

    def leave_FunctionDef(
        self, original: cst.FunctionDef, updated: cst.FunctionDef
    ) -> cst.FunctionDef:
        if (
            self.done
            or original.name.value != self.name
            or not isinstance(updated.body, cst.IndentedBlock)
        ):
            return updated  # fmt: skip
        self.done = True
        line = cst.parse_statement("import torch.distributed as _dist; _dist.barrier()\n")
        return updated.with_changes(body=updated.body.with_changes(body=[line, *updated.body.body]))


def _reported(findings: list, caller_path: str, helper: Path) -> bool:
    """An RNK102 finding at the caller whose chain passes through the helper."""
    return any(
        f.code == "RNK102"
        and os.path.normpath(f.path) == os.path.normpath(caller_path)
        and any(os.path.normpath(step.path) == os.path.normpath(str(helper)) for step in f.trace)
        for f in findings
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("project", type=Path)
    parser.add_argument("--select", help="comma-separated codes (default: the default rules)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--sample", type=int, default=10)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    # A copy outside any other project (the corpus lies inside ranklint's own
    # repository), marked as a project root if it has no marker of its own.
    scratch = Path(tempfile.mkdtemp(prefix="ranklint-callers-"))
    root = scratch / args.project.resolve().name
    shutil.copytree(args.project.resolve(), root, symlinks=True)
    if not any((root / marker).exists() for marker in PROJECT_MARKERS):
        (root / ".git").mkdir()
    os.chdir(root)
    select = tuple(args.select.split(",")) if args.select else None
    config = Config(root=root, select=select)
    started = time.perf_counter()
    whole = lint_paths(["."], config, jobs=args.jobs)
    whole_seconds = time.perf_counter() - started
    print(f"{root.name}: whole cold run {whole_seconds:.1f} s, {whole.files_checked} files, "
          f"{len(whole.findings)} findings")  # fmt: skip

    files = list(discover(["."], config, force_exclude=True).files)
    results = lint_files(files, config, jobs=args.jobs, cache=None)
    summaries = [s for r in results if (s := r.module_summary()) is not None]
    cases = _cases(summaries)
    picked = random.Random(args.seed).sample(cases, min(args.sample, len(cases)))
    print(
        f"{len(cases)} rank-guarded calls into another file's leaf function; trying {len(picked)}"
    )

    shares: list[float] = []
    missed = 0
    for caller_path, caller, helper in sorted(picked, key=lambda c: (c[0], c[2].module.path)):
        path = Path(helper.module.path)
        original = path.read_bytes()
        changer = _AddBarrier(helper.function.qualname)
        changed = cst.parse_module(original).visit(changer)
        if not changer.done:
            continue
        try:
            path.write_bytes(changed.bytes)
            started = time.perf_counter()
            alone = lint_paths([str(path)], config, jobs=args.jobs, whole_project=True)
            share = (time.perf_counter() - started) / whole_seconds
            seen = _reported(alone.findings, caller_path, path)
            # Missed by the one-file run: does a whole run see it? (If not, the
            # guard or the call is one the analysis does not judge a hang.)
            judged = seen or _reported(
                lint_paths(["."], config, jobs=args.jobs).findings, caller_path, path
            )
        finally:
            path.write_bytes(original)
        if not judged:
            print(f"  -      no finding in a whole run either: {caller_path} -> {path}")
            continue
        shares.append(share)
        missed += not seen
        mark = "found " if seen else "MISSED"
        print(f"  {share:5.3f}  {mark} {caller_path} ({caller.function.qualname}) -> "
              f"{path}:{helper.function.qualname}")  # fmt: skip
    if shares:
        print(f"share of the whole cold run: median {statistics.median(shares):.3f}, "
              f"max {max(shares):.3f} (target: at most 0.15)")  # fmt: skip
    print(f"missed: {missed} of {len(shares)}")
    os.chdir(scratch.parent)
    shutil.rmtree(scratch, ignore_errors=True)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
