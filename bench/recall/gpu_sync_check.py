"""Confirm RNK201 on a GPU: the lines it reports sync, the lines it leaves alone do not.

    python bench/recall/gpu_sync_check.py            # needs torch with a CUDA device

Writes a small training loop, asks ranklint which of its lines sync the host
every step (RNK201 at every confidence), then runs the loop on the GPU under
``torch.cuda.set_sync_debug_mode("warn")``: every synchronising operation
warns, and the warning is traced to the line of the loop that made it. The
report lists each marked line with ranklint's verdict and the GPU's; the exit
code is 0 when they agree on every line, 1 when not, and 2 without a CUDA
device (nothing is run). Issue 37 asks for this check where a GPU is lent.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
import tempfile
import warnings
from pathlib import Path

# Each line ends with `# sync` or `# no sync`: what the GPU should show.
PROGRAM = """\
import torch


def train(model, batches, optimizer):
    total = torch.zeros((), device="cuda")
    history = []
    for x, y in batches:
        out = model(x)
        loss = torch.nn.functional.mse_loss(out, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        total += loss.detach()  # no sync
        history.append(loss.item())  # sync
        value = float(loss)  # sync
        print(f"loss {loss:.3f}")  # sync
        if loss > 5:  # sync
            pass
        kept = out[out > 0]  # sync
        n = len(x)  # no sync
        width = x.shape[1]  # no sync
        lr = optimizer.param_groups[0]["lr"]  # no sync
        scaled = (loss * 2).detach()  # no sync
    return total, history, value, kept, n, width, lr, scaled
"""


def expected_lines(program: str) -> dict[int, bool]:
    """Line -> whether the GPU should see a sync there, from the `# sync` markers."""
    marks: dict[int, bool] = {}
    for number, line in enumerate(program.splitlines(), 1):
        if line.rstrip().endswith("# no sync"):
            marks[number] = False
        elif line.rstrip().endswith("# sync"):
            marks[number] = True
    return marks


def reported_lines(path: Path) -> set[int]:
    """The lines of ``path`` RNK201 reports, at every confidence."""
    from ranklint import Config, lint_paths

    config = Config(select=("RNK201",), root=path.parent, confidence="low")
    result = lint_paths([path], config, jobs=1, cache_dir=None)
    return {finding.line for finding in result.findings}


def synced_lines(path: Path) -> set[int]:
    """The lines of ``path`` that synchronise when run on the GPU."""
    import torch

    spec = importlib.util.spec_from_file_location("gpu_sync_loop", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = torch.nn.Linear(8, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    batches = [(torch.randn(4, 8, device="cuda"), torch.randn(4, 1, device="cuda"))] * 3
    module.train(model, batches[:1], optimizer)  # warm up: allocations, lazy init
    torch.cuda.synchronize()
    lines: set[int] = set()
    target = str(path.resolve())
    original = warnings.showwarning

    def note(*args: object, **kwargs: object) -> None:
        for frame in inspect.stack():
            if str(Path(frame.filename).resolve()) == target:
                lines.add(frame.lineno)
                break

    torch.cuda.set_sync_debug_mode("warn")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.showwarning = note
            module.train(model, batches, optimizer)
    finally:
        warnings.showwarning = original
        torch.cuda.set_sync_debug_mode("default")
    return lines


def compare(expected: dict[int, bool], reported: set[int], synced: set[int]) -> list[str]:
    """One row per marked line; a row starting with `!` is a disagreement."""
    rows = []
    for line, should_sync in sorted(expected.items()):
        says, does = line in reported, line in synced
        mark = "!" if says != does or does != should_sync else " "
        rows.append(f"{mark} line {line:3d}: ranklint {'reports' if says else 'silent '}, "
                    f"GPU {'syncs' if does else 'no sync'}")  # fmt: skip
    return rows


def main() -> int:
    try:
        import torch
    except ImportError:
        print("needs torch (pip install -e '.[test]')", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("needs a CUDA device: nothing was run", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "loop.py"
        path.write_text(PROGRAM, encoding="utf-8")
        rows = compare(expected_lines(PROGRAM), reported_lines(path), synced_lines(path))
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
    print("\n".join(rows))
    return 1 if any(row.startswith("!") for row in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
