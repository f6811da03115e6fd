"""The speed benchmark: ranklint against the libcst parse floor and peer linters.

    python bench/speed/run.py [--full] [--repeat N] [--skip-peers] [--baseline-python PY]
                              [--out FILE] [--project DIR ...] [--project-repeat N]

Builds a corpus offline from the installed torch package (``torch/distributed``,
``torch/nn``, ``torch/optim``; ``--full``: all of torch) plus this repository's
fixtures, copied under ``.cache/bench/corpus`` (git-ignored) so that one file
can be touched. Then times whole processes, side by side in one run, each
``--repeat`` times (median and spread):

1. the floor of any libcst-based linter: parse every file and walk it once
   with a no-op visitor (``bench/speed/floor.py``), and a bare parse alone;
2. ``ranklint check --no-cache`` in one process and with all cores;
3. ``ranklint check`` with a warm cache, nothing changed;
4. ``ranklint check FILE`` warm, after touching that one file (pre-commit),
   and another file checked alone with no cache (a fresh clone's first run);
5. peers on the same files: TorchFix 0.7.0 (in a virtual environment of its
   own under ``.cache/bench``: it pins libcst < 1.6), flake8 with its default
   checks (its own environment too, so that no plugin runs), ruff with its
   defaults.

With ``--project DIR`` (repeatable; for example every project of the review
corpus, ``.cache/corpus/src/*``), each project is also checked whole, cold,
with all cores, in ``--project-repeat`` rounds (default 1), and a second table
gives its size, seconds per MB of Python, the peak memory of its largest
process, and the largest project's seconds per MB against the median of the
others (the speed issue's "no serial tail" target).

With ``--baseline-python PY`` (the interpreter of another ranklint checkout,
for example one made with ``git worktree add ../base HEAD~1``), rows 2-4 are
also timed with that ranklint in the same rounds, and the ratios new / baseline
are printed: a change's cost measured side by side, not against an old table.

Prints a Markdown table (seconds, files/s, peak memory of the largest
process) and the ratios the performance targets are stated in. No timing is
asserted anywhere; ``docs/dev/performance.md`` records a run.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
WORK = REPO / ".cache" / "bench"
PEERS = {"torchfix": ["torchfix==0.7.0"], "flake8": ["flake8==7.3.0"]}

# Runs a command and reports its wall time and the peak RSS of its largest process.
_MEASURE = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
elapsed = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"seconds": elapsed, "peak_kib": peak, "code": done.returncode,
                  "stderr": done.stderr.decode(errors="replace")[-400:]}))
"""


@dataclass
class Row:
    name: str
    seconds: list[float] = field(default_factory=list)
    peak_kib: int = 0
    files: int = 0
    note: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


def build_corpus(full: bool) -> tuple[Path, list[Path]]:
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        sys.exit("torch is not installed (pip install -e '.[test]')")
    torch_root = Path(spec.origin).parent
    corpus = WORK / ("corpus-full" if full else "corpus")
    if not corpus.is_dir():
        parts = [torch_root] if full else [torch_root / d for d in ("distributed", "nn", "optim")]
        for part in parts:
            for source in part.rglob("*.py"):
                target = corpus / "torch" / source.relative_to(torch_root)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, target)
        shutil.copytree(REPO / "fixtures", corpus / "fixtures")
    # The corpus is a project of its own, with an empty ranklint table: without
    # one, ranklint would find this repository's `[tool.ranklint]` above it and
    # take this repository as the project (its own files joining the index).
    (corpus / "pyproject.toml").write_text("[project]\nname = 'bench-corpus'\n\n[tool.ranklint]\n")
    files = sorted(corpus.rglob("*.py"))
    return corpus, files


def peer_python(name: str) -> Path | None:
    venv = WORK / f"{name}-venv"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        done = subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", *PEERS[name]],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            print(f"could not install {name}: {done.stderr.strip()[-300:]}", file=sys.stderr)
            shutil.rmtree(venv, ignore_errors=True)
            return None
    return python


def measure(command: list[str], cwd: Path) -> dict[str, object]:
    # Python may cache bytecode, as in any installation (a development shell
    # that sets PYTHONDONTWRITEBYTECODE would time the compilation of
    # ranklint's own modules in every row).
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, *command],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
    )
    return json.loads(done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--full", action="store_true", help="all of torch (about 2300 files)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-peers", action="store_true")
    parser.add_argument("--out", type=Path, help="also write the Markdown report here")
    parser.add_argument(
        "--baseline-python",
        type=Path,
        help="interpreter of another ranklint checkout, timed side by side",
    )
    parser.add_argument(
        "--project",
        type=Path,
        action="append",
        default=[],
        help="a project folder also checked whole, cold (repeatable)",
    )
    parser.add_argument("--project-repeat", type=int, default=1)
    args = parser.parse_args()

    corpus, files = build_corpus(args.full)
    file_list = WORK / ("files-full.txt" if args.full else "files.txt")
    file_list.write_text("\n".join(str(f) for f in files) + "\n")
    cache = WORK / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    touched = corpus / "torch" / "distributed" / "distributed_c10d.py"
    # A file deep in torch.distributed, checked alone without a cache (a fresh
    # clone's first pre-commit run).
    alone = "torch/distributed/checkpoint/state_dict.py"
    original = touched.read_bytes()
    cores = os.cpu_count() or 1
    ranklint = [sys.executable, "-m", "ranklint", "check", "--exit-zero", "--select", "ALL"]

    commands: list[tuple[str, list[str], int]] = [
        ("libcst parse only", [sys.executable, str(HERE / "floor.py"), str(file_list),
                               "--parse-only"], len(files)),
        ("floor: parse + no-op walk", [sys.executable, str(HERE / "floor.py"), str(file_list)],
         len(files)),
        ("ranklint --no-cache -j 1", [*ranklint, "--no-cache", "-j", "1", "."], len(files)),
        (f"ranklint --no-cache -j {cores}", [*ranklint, "--no-cache", "-j", str(cores), "."],
         len(files)),
        ("ranklint warm cache", [*ranklint, "--cache-dir", str(cache), "."], len(files)),
        ("ranklint warm, 1 touched file", [*ranklint, "--cache-dir", str(cache),
                                           str(touched.relative_to(corpus))], 1),
        ("ranklint cold, 1 file", [*ranklint, "--no-cache", alone], 1),
        ("ruff check (defaults)", [sys.executable, "-m", "ruff", "check", "--isolated",
                                   "--no-cache", "--exit-zero", "--quiet", "."], len(files)),
    ]  # fmt: skip
    warm_up = [[*ranklint, "--cache-dir", str(cache), "."]]
    if args.baseline_python is not None:
        base = [
            str(args.baseline_python),
            "-m",
            "ranklint",
            "check",
            "--exit-zero",
            "--select",
            "ALL",
        ]
        base_cache = WORK / "cache-baseline"
        shutil.rmtree(base_cache, ignore_errors=True)
        commands += [
            ("baseline --no-cache -j 1", [*base, "--no-cache", "-j", "1", "."], len(files)),
            (
                f"baseline --no-cache -j {cores}",
                [*base, "--no-cache", "-j", str(cores), "."],
                len(files),
            ),
            ("baseline warm cache", [*base, "--cache-dir", str(base_cache), "."], len(files)),
            (
                "baseline warm, 1 touched file",
                [*base, "--cache-dir", str(base_cache), str(touched.relative_to(corpus))],
                1,
            ),
            ("baseline cold, 1 file", [*base, "--no-cache", alone], 1),
        ]
        warm_up.append([*base, "--cache-dir", str(base_cache), "."])
    if not args.skip_peers:
        torchfix = peer_python("torchfix")
        if torchfix is not None:
            commands.append(
                ("TorchFix 0.7.0 (--select ALL)",
                 [str(torchfix.parent / "torchfix"), "--select", "ALL", "."], len(files))
            )  # fmt: skip
        flake8 = peer_python("flake8")
        if flake8 is not None:
            commands.append(
                ("flake8 (defaults)", [str(flake8), "-m", "flake8", "--isolated", "--exit-zero",
                                       "."], len(files))
            )  # fmt: skip

    rows = {name: Row(name, files=count) for name, _, count in commands}
    # Warm the caches once (not timed) so that "warm" rows measure a warm cache.
    for command in warm_up:
        subprocess.run(command, cwd=corpus, capture_output=True)
    try:
        for round_index in range(args.repeat):
            for name, command, _ in commands:
                if name.endswith("touched file"):
                    # Content no earlier row has seen (a baseline's warm row would
                    # otherwise cache this round's touch before its touched row).
                    touch = f"\n# touched {round_index} {name}\n"
                    touched.write_bytes(original + touch.encode())
                result = measure(command, corpus)
                # Put it back, so that the next warm rows are warm.
                touched.write_bytes(original)
                row = rows[name]
                row.seconds.append(float(result["seconds"]))  # type: ignore[arg-type]
                row.peak_kib = max(row.peak_kib, int(result["peak_kib"]))  # type: ignore[call-overload]
                if result["code"] not in (0, 1):
                    row.note = f"exit {result['code']}: {str(result['stderr']).strip()[-120:]}"
            print(f"round {round_index + 1}/{args.repeat} done", file=sys.stderr)
    finally:
        touched.write_bytes(original)

    report = render(rows, len(files), args, cores)
    if args.project:
        report += "\n" + projects(args.project, args.project_repeat, ranklint, cores)
    print(report)
    if args.out is not None:
        args.out.write_text(report)
    return 0


def projects(folders: list[Path], repeat: int, ranklint: list[str], cores: int) -> str:
    """Each project checked whole, cold, with all cores: a table of seconds per MB and
    peak memory, and the largest project's seconds per MB against the others'."""
    sized = []
    for folder in folders:
        sources = [p for p in folder.rglob("*.py") if p.is_file()]
        megabytes = sum(p.stat().st_size for p in sources) / 1e6
        row = Row(folder.name, files=len(sources))
        for _ in range(repeat):
            result = measure([*ranklint, "--no-cache", "-j", str(cores), "."], folder.resolve())
            row.seconds.append(float(result["seconds"]))  # type: ignore[arg-type]
            row.peak_kib = max(row.peak_kib, int(result["peak_kib"]))  # type: ignore[call-overload]
            if result["code"] not in (0, 1):
                row.note = f"exit {result['code']}: {str(result['stderr']).strip()[-120:]}"
        sized.append((row, megabytes))
        print(f"project {folder.name} done", file=sys.stderr)
    lines = [
        f"Projects, each checked whole: `ranklint check --select ALL --no-cache -j {cores}`, "
        f"median of {repeat} round(s).",
        "",
        "| project | Python files | MB of Python | median s | s/MB | peak RSS MiB | note |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for row, megabytes in sorted(sized, key=lambda item: item[1]):
        lines.append(
            f"| {row.name} | {row.files:,} | {megabytes:.1f} | {row.median:.1f} | "
            f"{row.median / megabytes:.2f} | {row.peak_kib / 1024:.0f} | {row.note} |"
        )
    if len(sized) > 1:
        largest, largest_mb = max(sized, key=lambda item: item[1])
        others = [row.median / mb for row, mb in sized if row is not largest]
        ratio = (largest.median / largest_mb) / statistics.median(others)
        lines += [
            "",
            f"Largest project ({largest.name}): s/MB / median of the others' = {ratio:.2f} "
            f"(target <= 1.25); peak RSS {largest.peak_kib / 1024:.0f} MiB (target < 300).",
        ]
    return "\n".join(lines) + "\n"


def render(rows: dict[str, Row], nfiles: int, args: argparse.Namespace, cores: int) -> str:
    lines = [
        f"Corpus: {nfiles} files ({'all of torch' if args.full else 'torch/distributed, nn, optim'}"
        f" + fixtures); {args.repeat} rounds; machine: {platform.processor() or platform.machine()}"
        f", {cores} cores, Python {platform.python_version()}, {platform.system()}.",
        "",
        "| command | median s | spread s | files/s | peak RSS MiB | note |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for row in rows.values():
        if not row.seconds:
            continue
        spread = f"{min(row.seconds):.2f}-{max(row.seconds):.2f}"
        lines.append(
            f"| {row.name} | {row.median:.2f} | {spread} | {row.files / row.median:.0f} | "
            f"{row.peak_kib / 1024:.0f} | {row.note} |"
        )
    parse = rows["libcst parse only"].median
    floor = rows["floor: parse + no-op walk"].median
    single = rows["ranklint --no-cache -j 1"].median
    parallel = rows[f"ranklint --no-cache -j {cores}"].median
    warm = rows["ranklint warm cache"].median
    ratios = [
        ("ranklint -j 1 / parse only (target <= 1.5)", single / parse),
        (f"ranklint -j {cores} / parse only (target <= 0.85)", parallel / parse),
        ("ranklint -j 1 / floor (earlier target <= 1.25)", single / floor),
        (f"ranklint -j {cores} / floor (earlier target <= 0.7)", parallel / floor),
        ("cold -j 1 / warm (target >= 50)", single / warm),
        (
            "cold, 1 file / cold -j 1 (target <= 0.10)",
            rows["ranklint cold, 1 file"].median / single,
        ),
        ("one touched file, seconds (target < 1)", rows["ranklint warm, 1 touched file"].median),
    ]
    for new, old in (
        ("ranklint --no-cache -j 1", "baseline --no-cache -j 1"),
        (f"ranklint --no-cache -j {cores}", f"baseline --no-cache -j {cores}"),
        ("ranklint warm cache", "baseline warm cache"),
        ("ranklint warm, 1 touched file", "baseline warm, 1 touched file"),
        ("ranklint cold, 1 file", "baseline cold, 1 file"),
    ):
        if rows.get(old) is not None and rows[old].seconds:
            ratios.append(
                (f"{new} / baseline (regression if > 1.05)", rows[new].median / rows[old].median)
            )
    torchfix = rows.get("TorchFix 0.7.0 (--select ALL)")
    if torchfix is not None and torchfix.seconds:
        ratios.append(("TorchFix / ranklint -j 1 (target >= 2)", torchfix.median / single))
    lines += ["", "| ratio | value |", "| --- | ---: |"]
    lines += [f"| {name} | {value:.2f} |" for name, value in ratios]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    started = time.perf_counter()
    code = main()
    print(f"benchmark took {time.perf_counter() - started:.0f} s", file=sys.stderr)
    raise SystemExit(code)
