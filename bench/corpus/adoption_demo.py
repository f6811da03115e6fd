"""Adoption steps on a copy of one review-corpus project, printed as a transcript.

    python bench/corpus/adoption_demo.py [PROJECT]      # default: gpt-neox

The project is copied from ``.cache/corpus/src/PROJECT`` (see
``bench/corpus/corpus.py``) into a temporary git repository; nothing under
``.cache`` changes. The steps:

1. ``ranklint check .`` (default rules): the findings to adopt;
2. ``--add-noqa``, then ``ranklint check .``: clean;
3. on a fresh copy, ``--baseline b.json --write-baseline``; a new bug
   (``if rank == 0: dist.barrier()``) added; ``--baseline b.json``
   reports exactly that one;
4. ``--diff`` and then ``--fix`` with the opt-in fixable rules selected too;
   a second ``--fix`` changes nothing, and every file still parses;
5. a warm cache, then a change to a helper that a rank-guarded call site in
   an unchanged file calls: ``pre-commit try-repo`` with only the helper
   fails at that call site (gpt-neox only: the helper and caller are named).
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / ".cache" / "corpus" / "src"
BIN = Path(sys.executable).parent
OPT_IN_FIXES = "RNK002,RNK106,RNK601"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "demo",
    "GIT_AUTHOR_EMAIL": "demo@example.com",
    "GIT_COMMITTER_NAME": "demo",
    "GIT_COMMITTER_EMAIL": "demo@example.com",
}
# gpt-neox: megatron/checkpointing.py calls `natural_sort` (megatron/utils.py)
# under `if torch.distributed.get_rank() == 0:`.
HELPER = ("megatron/utils.py", "def natural_sort(l):\n", "    torch.distributed.barrier()\n")


def run(
    *args: str, cwd: Path, show: int = 12, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        **GIT_ENV,
        **(env or {}),
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
    }
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=env, timeout=1800)
    print(f"$ {' '.join(args)}    # exit {done.returncode}")
    lines = (done.stdout + done.stderr).splitlines()
    for line in lines[:show]:
        print(f"  {line[:160]}")
    if len(lines) > show:
        print(f"  ... ({len(lines) - show} more lines)")
        for line in lines[-2:]:
            print(f"  {line[:160]}")
    return done


def fresh_copy(project: str, into: Path) -> Path:
    target = into / project
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(CORPUS / project, target, symlinks=True)
    git = (("git", "init", "-q", "."), ("git", "add", "-A"), ("git", "commit", "-qm", "x"))
    for command in git:
        subprocess.run(command, cwd=target, env={**os.environ, **GIT_ENV}, check=True)
    return target


def unparsable(folder: Path) -> list[str]:
    bad = []
    for path in folder.rglob("*.py"):
        try:
            ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            bad.append(str(path.relative_to(folder)))
    return bad


def main(argv: list[str]) -> int:
    project = argv[0] if argv else "gpt-neox"
    if not (CORPUS / project).is_dir():
        print(f"no {CORPUS / project}: build the corpus first (bench/corpus/corpus.py)")
        return 2
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        rk = str(BIN / "ranklint")

        print(f"## 1-2. {project}: --add-noqa, then a clean run")
        copy = fresh_copy(project, base)
        run(rk, "check", "--no-cache", "--statistics", ".", cwd=copy)
        run(rk, "check", "--no-cache", "--add-noqa", ".", cwd=copy)
        run(rk, "check", "--no-cache", ".", cwd=copy)

        print(f"\n## 3. {project}: a baseline, then one new bug")
        copy = fresh_copy(project, base)
        run(rk, "check", "--no-cache", "--baseline", "b.json", "--write-baseline", ".", cwd=copy)
        target = copy / "ranklint_demo_bug.py"
        target.write_text(
            "import torch.distributed as dist\n\n\ndef log_step(rank):\n"
            "    if rank == 0:\n        dist.barrier()\n"
        )
        run(rk, "check", "--no-cache", "--baseline", "b.json", ".", cwd=copy)

        print(f"\n## 4. {project}: --diff, --fix, and a second --fix")
        copy = fresh_copy(project, base)
        select = ("--extend-select", OPT_IN_FIXES)
        run(rk, "check", "--no-cache", *select, "--diff", ".", cwd=copy, show=40)
        run(rk, "check", "--no-cache", *select, "--fix", "--statistics", ".", cwd=copy)
        run(rk, "check", "--no-cache", *select, "--fix", "--statistics", ".", cwd=copy)
        run("git", "diff", "--stat", cwd=copy, show=8)
        print(f"  files that no longer parse: {unparsable(copy) or 'none'}")

        if project == "gpt-neox":
            print(f"\n## 5. {project}: pre-commit with only a changed helper")
            copy = fresh_copy(project, base)
            hook = (sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "ranklint")
            home = {"PRE_COMMIT_HOME": str(base / "pre-commit-home"), "PRE_COMMIT_COLOR": "never"}
            # The first run warms the project's cache, as a CI run or an earlier commit does.
            run(*hook, "--all-files", cwd=copy, show=3, env=home)
            path, anchor, added = HELPER
            helper = copy / path
            helper.write_text(helper.read_text().replace(anchor, anchor + added, 1))
            run(*hook, "--files", path, cwd=copy, show=30, env=home)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
