"""Running the trainer fixtures (``fixtures/trainers/``) and judging their outcomes.

Used by ``tests/test_trainers.py`` and, as a program, to regenerate the table
of predicted and observed outcomes in ``docs/fixtures.md``::

    .venv/bin/python -m tests.trainer_runs docs/fixtures.md

Every run is a child process (the trainer launches its own ranks and kills
them at its deadline); this module never imports torch.distributed.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ranklint import Config, lint_paths
from ranklint.findings import Confidence
from ranklint.testing import expected_findings

REPO_ROOT = Path(__file__).resolve().parents[1]
TRAINERS = REPO_ROOT / "fixtures" / "trainers"
# Per-rank collective timeout and the whole run's deadline, in seconds.
COLLECTIVE_TIMEOUT = 3.0
DEADLINE = 60.0
# The child's own wall-clock limit: above the deadline, for start-up and teardown.
PROCESS_LIMIT = DEADLINE + 30.0
# Ranks per family (the first word of the name); 2 otherwise.
WORLD = {"tp": 4}
# The clean trainer whose results a variant should reproduce (or, wrongly, not).
REFERENCE_OF = {
    "fsdp2": "fsdp2_trainer.py",
    "rollout": "rollout_trainer.py",
    "tp": "tp_dp_trainer.py",
}
OUTCOMES = (
    "completes",
    "collective-mismatch",
    "timeout",
    "wrong-value",
    "import-error",
    "invalid-root",
)
# torch's error for a root outside the group (`src=0` on a group without global rank 0).
_INVALID_ROOT = re.compile(r"ValueError: Global rank \d+ is not part of group")


@dataclass(frozen=True)
class Fixture:
    path: Path
    predicted: str
    summary: str

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def world(self) -> int:
        return WORLD.get(self.name.split("_", 1)[0], 2)

    @property
    def wrong(self) -> str:
        """For a wrong-value fixture, what is wrong: ``logged`` (the default) or ``gradients``."""
        return _constant(self.path, "WRONG") or "logged"

    @property
    def clean(self) -> Path:
        """The clean trainer this one is a variant of (itself if clean)."""
        family = self.name.split("_", 1)[0]
        return TRAINERS / REFERENCE_OF.get(family, self.name)


def _constant(path: Path, name: str) -> str | None:
    """The string a module-level ``NAME = "..."`` of ``path`` assigns, if any."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            return node.value.value
    return None


def programs() -> list[Fixture]:
    """Every runnable trainer: the files that declare a predicted ``OUTCOME``."""
    found = []
    for path in sorted(TRAINERS.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        outcome = None
        for node in tree.body:
            if (
                isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "OUTCOME" for t in node.targets)
                and isinstance(node.value, ast.Constant)
            ):
                outcome = node.value.value
        has_main = "__main__" in path.read_text(encoding="utf-8")
        if isinstance(outcome, str) and has_main:  # a program, not a helper module
            docstring = ast.get_docstring(tree) or ""
            found.append(Fixture(path, outcome, docstring.split("\n\n", 1)[0].replace("\n", " ")))
    return found


@dataclass
class Run:
    returncode: int
    outcome: dict[str, Any] | None
    output: str
    wall_s: float
    out: Path


def run(fixture_path: Path, out: Path, *extra: str, world: int = 2) -> Run:
    """Run one trainer program to completion (or its limit) and read its outcome."""
    out.mkdir(parents=True, exist_ok=True)
    command = [
        sys.executable,
        str(fixture_path),
        "--world-size",
        str(world),
        "--out",
        str(out),
        "--timeout",
        str(COLLECTIVE_TIMEOUT),
        "--deadline",
        str(DEADLINE),
        *extra,
    ]
    if "--reference" in extra or "--count-syncs" in extra:
        outcome_file = out / "reference.json"
    elif "--fake-world" in extra:
        outcome_file = out / f"fake{extra[extra.index('--fake-world') + 1]}.json"
    else:
        outcome_file = out / "outcome.json"
    outcome_file.unlink(missing_ok=True)
    started = time.monotonic()
    try:
        completed = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=PROCESS_LIMIT,
            cwd=REPO_ROOT,
            env=_environment(),
        )
        returncode, output = completed.returncode, completed.stdout + completed.stderr
    except subprocess.TimeoutExpired as exc:
        returncode, output = -9, f"killed after {PROCESS_LIMIT} s: {exc}"
    wall = time.monotonic() - started
    outcome = None
    if outcome_file.is_file():
        outcome = json.loads(outcome_file.read_text(encoding="utf-8"))
    return Run(returncode, outcome, output, wall, out)


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env.update({"OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"})
    # Launched outside a job: no rendezvous variables (the import-time bug needs that).
    for name in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK"):
        env.pop(name, None)
    return env


def observed(result: Run) -> str:
    """How a gloo run ended: completes, collective-mismatch, timeout, import-error, error."""
    outcome = result.outcome
    if outcome is None:
        return "import-error" if import_time_rendezvous_failure(result.output) else "error"
    if outcome["status"] == "ok":
        return "completes"
    errors = " ".join(rank.get("error", "") for rank in outcome.get("ranks", []))
    if "Detected mismatch between collectives" in errors:
        return "collective-mismatch"
    if any(_INVALID_ROOT.match(rank.get("error", "")) for rank in outcome.get("ranks", [])):
        return "invalid-root"
    if outcome["status"] == "deadline" or re.search(
        r"timed out|timeout|monitoredBarrier", errors, re.IGNORECASE
    ):
        return "timeout"
    return "error"


# The last line of a traceback: `ValueError: Error initializing torch.distributed ...`.
_EXCEPTION_LINE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*): (?P<message>.*)$", re.MULTILINE)
# A frame that runs a module's top level, i.e. an import.
_MODULE_FRAME = re.compile(r'^  File "(?P<file>[^"]+)", line \d+, in <module>$', re.MULTILINE)


def import_time_rendezvous_failure(output: str) -> bool:
    """The process died importing a module whose top level joins the process group.

    The traceback's last exception is torch's env:// rendezvous ``ValueError`` (no
    ``RANK``/``MASTER_ADDR`` outside a launched job), and a frame of the traceback runs
    the top level (``<module>``) of a fixture module other than the program itself.
    A crash of any other type or place is an ``error``, not the predicted outcome.
    """
    exceptions = list(_EXCEPTION_LINE.finditer(output))
    if not exceptions:
        return False
    last = exceptions[-1]
    if last["type"] != "ValueError" or "torch.distributed using env://" not in last["message"]:
        return False
    module_frames = [Path(m["file"]) for m in _MODULE_FRAME.finditer(output)]
    return any(frame.parent == TRAINERS for frame in module_frames[1:])


def rank_results(result: Run) -> list[dict[str, Any]]:
    assert result.outcome is not None, result.output[-2000:]
    return [rank["result"] for rank in result.outcome["ranks"]]


def findings_by_file() -> dict[str, list[str]]:
    """Expected findings per trainer file, from its ``# expect:`` markers."""
    out: dict[str, list[str]] = {}
    for path in sorted(TRAINERS.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        default = set(expected_findings(text))
        out[path.name] = [
            _label(code, line, Confidence.HIGH if (line, code) in default else Confidence.MEDIUM)
            for line, code in expected_findings(text, Confidence.LOW)
        ]
    return out


def _label(code: str, line: int, confidence: Confidence) -> str:
    tier = "" if confidence is Confidence.HIGH else f", {confidence.value}"
    return f"{code} (line {line}{tier})"


def static_findings() -> dict[str, list[str]]:
    """What ranklint reports on the trainers (all rules), per file."""
    result = lint_paths([TRAINERS], Config(select=("ALL",), confidence="low"), jobs=1)
    out: dict[str, list[str]] = {}
    for finding in result.findings:
        label = _label(finding.code, finding.line, finding.confidence)
        out.setdefault(Path(finding.path).name, []).append(label)
    return out


# -- the docs table -----------------------------------------------------------------
TABLE_HEADER = (
    "| fixture | world | what it is | expected findings | predicted outcome | "
    "observed outcome | wall s |\n| --- | --- | --- | --- | --- | --- | --- |\n"
)


def table_rows(observations: dict[str, tuple[str, float]] | None) -> list[str]:
    marks = findings_by_file()
    rows = []
    fixtures = programs()
    for fixture in fixtures:
        findings = ", ".join(marks.get(fixture.name, [])) or "none"
        seen, wall = observations.get(fixture.name, ("?", 0.0)) if observations else ("?", 0.0)
        rows.append(
            f"| `{fixture.name}` | {fixture.world} | {fixture.summary} | {findings} | "
            f"{fixture.predicted} | {seen} | {wall:.1f} |"
        )
    # Modules that are not programs but carry findings (helpers a variant imports).
    names = {fixture.name for fixture in fixtures}
    for name, found in sorted(marks.items()):
        if name in names or not found:
            continue
        tree = ast.parse((TRAINERS / name).read_text(encoding="utf-8"))
        summary = (ast.get_docstring(tree) or "").split("\n\n", 1)[0].replace("\n", " ")
        rows.append(f"| `{name}` | - | {summary} | {', '.join(found)} | - | - | - |")
    return rows


def static_columns(row: str) -> str:
    """A table row without its observed columns (those need a run)."""
    cells = row.split(" | ")
    return " | ".join(cells[:5])


def observe_all() -> dict[str, tuple[str, float]]:
    """Run every trainer once on gloo and judge it (wrong values need the tests' checks)."""
    observations = {}
    with tempfile.TemporaryDirectory() as temporary:
        for fixture in programs():
            result = run(fixture.path, Path(temporary) / fixture.name, world=fixture.world)
            seen = observed(result)
            if seen == "completes" and fixture.predicted == "wrong-value":
                seen = "wrong-value" if _logged_off(fixture, result, temporary) else "completes"
            observations[fixture.name] = (seen, result.wall_s)
    return observations


def _logged_off(fixture: Fixture, result: Run, temporary: str) -> bool:
    reference = run(fixture.clean, Path(temporary) / "reference", "--reference")
    assert reference.outcome is not None
    expected = reference.outcome["result"]["logged"]
    got = rank_results(result)[0]["logged"]
    return any(abs(g - e) > 1e-4 * max(1.0, abs(e)) for g, e in zip(got, expected, strict=True))


def write_table(path: Path) -> None:
    observations = observe_all()
    text = path.read_text(encoding="utf-8")
    start = text.index(TABLE_HEADER)
    end = text.index("\n\n", start)
    rows = "\n".join(table_rows(observations))
    path.write_text(text[:start] + TABLE_HEADER + rows + text[end:], encoding="utf-8")


if __name__ == "__main__":
    write_table(Path(sys.argv[1]))
