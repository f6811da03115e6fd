"""RNK101 import-time-process-group."""

from __future__ import annotations

import libcst as cst

from ranklint.analysis import catalog
from ranklint.findings import Severity
from ranklint.rules.base import Rule


class ImportTimeProcessGroup(Rule):
    code = "RNK101"
    name = "import-time-process-group"
    severity = Severity.ERROR
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
"""
    valid = (
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
        if not (ctx.import_time and ctx.reachable):
            return
        qualified = ctx.resolve(node.func)
        spec = catalog.lookup(qualified)
        if spec is None or not spec.kind.creates_groups:
            return
        self.report(
            node,
            f"`{qualified}()` runs when this module is imported; every import (a test, a "
            f"launcher, a data-loader worker) then creates distributed state or blocks "
            f"waiting for peers; create groups and meshes in an entry point such as "
            f"`main()` and pass them down",
        )
