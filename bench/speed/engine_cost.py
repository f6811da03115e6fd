"""Engine cost relative to a bare libcst parse, measured in one run.

    python bench/speed/engine_cost.py [DIR]     (default: the installed torch/distributed)

Times, in one process and on the same files, each stage as a ratio to a bare
``libcst.parse_module`` (= 1.0): CPython's ``ast.parse`` (ranklint's
pre-check), a libcst parse plus a no-op ``CSTVisitor``, a parse plus
ranklint's walker with every rule, and the whole ``lint_source`` per file.
Each variant is run ``--repeat`` times; the median is reported. The full
benchmark (whole processes, cache, peers) is a separate script.
"""

from __future__ import annotations

import argparse
import ast
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import libcst as cst

from ranklint import Config, lint_source
from ranklint.analysis.walk.context import FileContext
from ranklint.analysis.walk.recorders import FACT_RECORDERS
from ranklint.engine import selected_rules
from ranklint.engine.stack import deep_recursion
from ranklint.engine.walker import Walker


def default_corpus() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        sys.exit("torch is not installed; pass a directory of Python files")
    return Path(spec.origin).parent / "distributed"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("directory", nargs="?", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    root = args.directory or default_corpus()
    sources = [p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py"))]
    modules = [cst.parse_module(s) for s in sources]
    config = Config(select=("ALL",))
    rules = selected_rules(config)
    settings = config.analysis_settings()

    def noop_visit() -> None:
        for module in modules:
            module.visit(cst.CSTVisitor())

    def ranklint_walk() -> None:
        with deep_recursion():
            for module in modules:
                ctx = FileContext("f.py", module, settings)
                recorders = [recorder(ctx) for recorder in FACT_RECORDERS]
                visitors = [*recorders, *(rule(ctx, lambda _: None) for rule in rules)]
                Walker(ctx, visitors).walk(module)

    def each(function: Callable[[str], object]) -> Callable[[], None]:
        def run() -> None:
            for source in sources:
                function(source)  # the result is dropped, as in a real run

        return run

    variants: dict[str, Callable[[], None]] = {
        "libcst parse (baseline)": each(cst.parse_module),
        "ast.parse (pre-check)": each(ast.parse),
        "no-op CSTVisitor walk": noop_visit,
        "ranklint walk, all rules": ranklint_walk,
        "lint_source, all stages": each(lambda source: lint_source(source, "f.py")),
    }
    times = {name: [] for name in variants}
    for _ in range(args.repeat):
        for name, run in variants.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    base = statistics.median(times["libcst parse (baseline)"])
    lines = sum(s.count("\n") for s in sources)
    print(f"corpus: {root} ({len(sources)} files, {lines} lines), {args.repeat} runs each")
    print(f"{'stage':<28} {'median s':>9} {'spread s':>9} {'x parse':>8}")
    for name, samples in times.items():
        median = statistics.median(samples)
        spread = max(samples) - min(samples)
        print(f"{name:<28} {median:9.3f} {spread:9.3f} {median / base:8.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
