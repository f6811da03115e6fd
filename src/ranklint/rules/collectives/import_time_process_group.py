"""RNK101 import-time-process-group."""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from ranklint.analysis.project.facts import ProjectFacts
from ranklint.analysis.walk.creations import import_time_creation
from ranklint.findings import Evidence, Severity
from ranklint.model.events import Site
from ranklint.rules.base import ProjectFinding, Rule
from ranklint.rules.collectives._evidence import entry_context_link


class ImportTimeProcessGroup(Rule):
    code = "RNK101"
    name = "import-time-process-group"
    severity = Severity.ERROR
    project = True
    summary = "A process group or device mesh is created when the module is imported"
    what = """\
Reports calls that create distributed state — `init_process_group`,
`new_group`, `new_subgroups`, `new_subgroups_by_enumeration`,
`init_device_mesh`, `DeviceMesh(...)`, `DeviceMesh.from_group`,
`deepspeed.init_distributed` — in code that runs when the module is imported:
module-level statements (also inside module-level `if`, `try`, `with`, `for`),
class bodies, default argument values and decorator expressions. Calls are
recognised through every import form (`import torch.distributed as dist`,
`from torch import distributed`, `from torch.distributed import new_group as
ng`, `import torch` then `torch.distributed.new_group`).
"""
    why = """\
Group creation is itself a collective: every rank must call it, in the same
order, at a moment when all ranks are ready. Tied to an import, it happens
whenever anything imports the module — a unit test, a launcher that only
wants a constant, a data-loader worker, a tool that inspects the package. There
it blocks waiting for peers that will never arrive (a hang until the
rendezvous timeout), fails because `MASTER_ADDR` is unset, or creates a second
default group in a process that already has one. Import order then decides
the order of group creation, which differs between entry points and silently
pairs the wrong groups across ranks.
"""
    limits = """\
Calls through project helpers (`setup()` that calls `init_process_group`) at
import time are not followed yet. Code under `if __name__ == "__main__":` and
`if TYPE_CHECKING:` is not import time and is not reported.

Entry scripts are not reported unless something imports them: a file written
to be run (a `__main__` guard, argument parsing, `sys.exit()` or a backward
pass at module level, a file name no `import` can name such as
`test-t5.py`, or a path among `script-patterns`: `scripts/`, `examples/`,
`bench/`, `main.py`, ...)
runs its module-level code once per launched process, which is how a torchrun
`train.py` or a standalone benchmark starts. Such a file is reported only
when another file of the run imports it; a run that does not see the
importer (one file given, the flake8 face) does not report it.
"""
    tiers = """\
Each finding records where the module runs (**context**). Library code is
high. A test module (`test_*.py`, `*_test.py`, `conftest.py`) is medium: a
launcher may run it as its program (`torchrun -m pytest`), whose module level
then runs once per launched process, as the run.
"""
    valid = (
        """
        # train.py, started by `torchrun train.py --lr 0.1`: an entry script
        # that nothing imports runs its module level once per launched rank.
        import argparse

        import torch.distributed as dist

        parser = argparse.ArgumentParser()
        parser.add_argument("--lr", type=float)
        args = parser.parse_args()
        dist.init_process_group("nccl")
        dp_group = dist.new_group([0, 1])
        """,
        """
        import torch.distributed as dist


        def main() -> None:
            dist.init_process_group("nccl")
            dp_group = dist.new_group([0, 1])
            train(dp_group)


        if __name__ == "__main__":
            main()
        """,
        """
        from torch.distributed.device_mesh import init_device_mesh


        def build_mesh(world_size: int):
            return init_device_mesh("cuda", (world_size,), mesh_dim_names=("dp",))
        """,
        """
        # A local name that shadows the import is not the imported function.
        from torch.distributed import new_group


        def new_group(ranks):
            return list(ranks)


        GROUP = new_group([0, 1])
        """,
        """
        import torch.distributed as dist

        # Lambdas run later, not at import.
        make_group = lambda ranks: dist.new_group(ranks)
        """,
    )
    invalid = (
        """
        import torch.distributed as dist

        dist.init_process_group("nccl")  # expect: RNK101
        DP_GROUP = dist.new_group([0, 1, 2, 3])  # expect: RNK101
        """,
        """
        import torch

        if torch.cuda.is_available():
            torch.distributed.init_process_group("nccl")  # expect: RNK101
        """,
        """
        from torch.distributed.device_mesh import DeviceMesh, init_device_mesh

        MESH = init_device_mesh("cuda", (2, 4), mesh_dim_names=("dp", "tp"))  # expect: RNK101


        class Trainer:
            mesh = DeviceMesh("cuda", [[0, 1], [2, 3]])  # expect: RNK101
        """,
        """
        from torch.distributed import new_group as ng


        def train(group=ng([0, 1])):  # expect: RNK101
            pass
        """,
        """
        from torch import distributed as d


        @register(group=d.new_subgroups())  # expect: RNK101
        def step():
            pass
        """,
        """
        import deepspeed

        deepspeed.init_distributed()  # expect: RNK101
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        qualified = import_time_creation(ctx, node)
        if qualified is None:
            return
        if ctx.facts.deferred_creations and ctx.facts.deferred_creations[-1] == (
            Site(ctx.top_index, ctx.call_ordinal),
            qualified,
        ):
            # A launched script's creation, deferred by the fact recorder (which
            # walks first): judged in the project phase, where only an imported
            # script is reported.
            return
        self.report(
            node,
            _message(qualified),
            evidence=Evidence(context=entry_context_link(self.ctx.path)),
        )

    @classmethod
    def check_project(cls, project: ProjectFacts) -> Iterable[ProjectFinding]:
        deferred = [summary for summary in project.summaries if summary.deferred_creations]
        if not deferred:
            return
        index = project.index
        importers: dict[str, str] = {}
        for summary in project.summaries:
            for name in summary.imports:
                parts = index.absolute(name, summary).split(".")
                # Every prefix: `import pkg.mod` loads pkg too. (Bounds not mutated:
                # an empty prefix names no module, a longer one is the whole name.)
                for end in range(1, len(parts) + 1):  # pragma: no mutate
                    importers.setdefault(".".join(parts[:end]), summary.path)
        for summary in deferred:
            importer = importers.get(index.names[summary.path])
            if importer is None or importer == summary.path:
                continue
            for site, qualified in summary.deferred_creations:
                message = _message(qualified, imported_by=importer)
                yield ProjectFinding.at(summary.path, site, message)


def _message(qualified: str, imported_by: str | None = None) -> str:
    where = "this module is imported"
    if imported_by is not None:
        # A script that another file imports: its module-level code runs there too.
        where = f"this script is imported ({imported_by} imports it)"
    return (
        f"`{qualified}()` runs when {where}; every import (a test, a launcher, a "
        f"data-loader worker) then creates distributed state or blocks waiting for "
        f"peers; create groups and meshes in an entry point such as `main()` and pass "
        f"them down"
    )
