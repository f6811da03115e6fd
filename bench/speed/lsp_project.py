"""A generated project for the language server's latency benchmark and tests.

``make_project(folder, count)`` writes ``count`` modules under ``folder/pkg``
(plus a ``pyproject.toml`` with a ``[tool.ranklint]`` table): each module has
a helper, a function issuing a collective, a rank-guarded call into another
module's helper and some ordinary code, so that the project phase has a
call graph of the size of a real project's to walk.
"""

from __future__ import annotations

from pathlib import Path

_MODULE = '''\
"""Generated module {i}."""

from __future__ import annotations

import logging

import torch
import torch.distributed as dist

from pkg import mod_{j}, mod_{k}

logger = logging.getLogger(__name__)


def helper_{i}(x: torch.Tensor) -> torch.Tensor:
    y = x * 2
{barrier}    for step in range(3):
        y = y + step
    return y


def sync_{i}(x: torch.Tensor) -> torch.Tensor:
    dist.all_reduce(x, op=dist.ReduceOp.SUM)
    return x


def step_{i}(x: torch.Tensor) -> torch.Tensor:
    x = mod_{j}.helper_{j}(x)
    if dist.get_rank() == 0:
        x = mod_{j}.helper_{j}(x)
    return mod_{k}.sync_{k}(x)


class Table{i}:
    def __init__(self, size: int) -> None:
        self.size = size
        self.rows: dict[str, int] = {{}}

    def add(self, name: str, value: int) -> None:
        if name in self.rows:
            self.rows[name] += value
        else:
            self.rows[name] = value

    def total(self) -> int:
        return sum(self.rows.values())

    def describe(self) -> str:
        parts = [f"{{name}}={{value}}" for name, value in sorted(self.rows.items())]
        logger.info("table %d: %s", {i}, ", ".join(parts))
        return ", ".join(parts)
'''


def make_project(folder: Path, count: int = 500) -> list[Path]:
    """Write the project under ``folder``; the module files, ``mod_0`` first."""
    package = folder / "pkg"
    package.mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text('[project]\nname = "generated"\n\n[tool.ranklint]\n')
    (package / "__init__.py").write_text("")
    files = []
    for i in range(count - 1):
        path = package / f"mod_{i}.py"
        # Every tenth helper reaches a barrier: its rank-guarded caller is a finding.
        barrier = "    dist.barrier()\n" if i % 10 == 1 else ""
        text = _MODULE.format(
            i=i, j=(i + 1) % (count - 1), k=(i + 7) % (count - 1), barrier=barrier
        )
        path.write_text(text)
        files.append(path)
    return files
