"""Process group and collective rules (RNK1xx)."""

from __future__ import annotations

import libcst as cst

from ranklint.analysis import catalog
from ranklint.analysis.guards import is_main_guard
from ranklint.analysis.names import dotted_name
from ranklint.analysis.rank import axes_of_expression
from ranklint.analysis.summary import find_argument, has_unpacking
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


class RankDivergentCollective(Rule):
    code = "RNK102"
    name = "rank-divergent-collective"
    severity = Severity.ERROR
    project = True
    summary = "A collective is reached by only some ranks of its group"
    what = """\
Reports a collective (all_reduce, broadcast, barrier, all_gather_object,
distributed checkpoint save/load, FSDP state-dict gathering, accelerate and
Lightning wrappers, ...) that only some ranks of its group reach, because of:

- a rank-dependent `if`/`elif`/`else`, conditional expression, or `and`/`or`
  short circuit (`rank == 0 and dist.barrier()`);
- a rank-dependent `while` condition, or a loop whose trip count depends on
  the rank (`for _ in range(rank)`);
- a rank-dependent early `return`, `sys.exit()`, `continue` or `break`
  before it;
- a decorator that runs the function on one rank only (`@rank_zero_only`);
- a call, under such a condition, to a project function that issues a
  collective directly or through its callees, in this file or another file
  of the run. The message and the trace show the call chain
  (`save_checkpoint() -> dist.barrier() at utils.py:41`).

A value depends on the rank when it comes from `get_rank()`,
`os.environ["RANK"]` and friends, `mesh.get_local_rank()`,
`accelerator.is_main_process`, names listed in `rank-names` (`rank`,
`tp_rank`, `is_main_process`, ...), or a project function that returns one
(`def is_main(): return dist.get_rank() == 0`).

When both arms of a rank-dependent branch issue the same collectives in the
same order on the same group, nothing is reported; when they differ, the
first difference is.
"""
    why = """\
A collective completes only when every member of its group calls it. Ranks
that skip it go on to their next collective and pair it with the wrong one,
or wait forever: the job hangs on every accelerator until the collective
timeout (30 minutes by default with NCCL), with no error pointing at the
line. When the mismatched collectives happen to have compatible shapes the
job does not even hang: it silently reduces the wrong tensors.
"""
    limits = """\
Not reported, on purpose: point-to-point operations (`send`, `recv`,
`isend`, `irecv`, `batch_isend_irecv`) under rank conditions; conditions that
do not depend on the rank (world size, `is_initialized()`, config values);
a collective on an explicit group guarded by a membership test (`if rank in
ranks:`); a condition on one parallel axis (`tp_rank == 0`,
`is_pipeline_last_stage()`) around a collective on a group of another axis
(`group=dp_group`, `mesh["dp"].get_group()`), or on a group whose axis cannot
be told from its name; a helper called with a literal boolean that turns its
collective off (`log(x, barrier=False)` where the collective is under `if
barrier:`).

A rank-dependent `raise` is not treated as an early exit: the raising rank
fails with an error and the launcher stops the job, so there is no silent
hang. A value that a broadcast, all_reduce or all_gather wrote (its first
argument) is rank-invariant afterwards. Two branches on the same rank
condition are judged together: `if rank > 0: barrier()` … `if rank == 0:
barrier()` is balanced.

Not followed: calls through objects whose class is unknown (`self.engine.
save()`), through variables holding functions, and rank-dependent arguments
that a callee then branches on. Call chains across files need all the files
in one run (the flake8 face sees one file at a time). A file with
`# ranklint: skip-file` takes no part in the call graph. Exception handlers
are checked on their own, not as part of the normal sequence.
"""
    valid = (
        """
        import torch.distributed as dist


        def step(loss, rank):
            dist.all_reduce(loss)  # every rank, outside the branch
            if rank == 0:
                print(f"loss {loss.item()}")
        """,
        """
        import torch.distributed as dist


        def sync(t):
            # Both arms issue the same collectives, in the same order.
            if dist.get_rank() == 0:
                t.fill_(1.0)
                dist.broadcast(t, src=0)
            else:
                dist.broadcast(t, src=0)
        """,
        """
        import torch.distributed as dist


        def exchange(t, rank):
            # Point-to-point: rank conditions are how it works.
            if rank == 0:
                dist.send(t, dst=1)
            else:
                dist.recv(t, src=0)
        """,
        """
        import torch.distributed as dist


        def maybe_sync(t, world_size, cfg):
            if world_size > 1 and dist.is_initialized() and cfg.sync:
                dist.all_reduce(t)
        """,
        """
        import torch.distributed as dist


        def subgroup_sum(t, ranks, group):
            # Every member of `group` takes this branch.
            if dist.get_rank() in ranks:
                dist.all_reduce(t, group=group)
        """,
        """
        import torch.distributed as dist


        def reduce_grads(t, tp_rank, dp_group, mesh):
            # A tensor-parallel condition around data-parallel collectives: all
            # members of the data-parallel group share the same tp_rank.
            if tp_rank == 0:
                dist.all_reduce(t, group=dp_group)
                dist.all_reduce(t, group=mesh["dp"].get_group())
        """,
        """
        import torch.distributed as dist

        if __name__ == "__main__":
            dist.init_process_group("gloo")
            dist.barrier()
        """,
        """
        import torch.distributed as dist


        def log(msg, barrier=True):
            if barrier:
                dist.barrier()
            print(msg)


        def report(rank):
            if rank == 0:
                log("done", barrier=False)
        """,
        """
        import torch.distributed as dist


        def factorise(weight, lora_rank, matrix_rank):
            # Names that merely contain "rank" are not the caller's rank.
            if lora_rank > 8 and matrix_rank:
                dist.all_reduce(weight)
        """,
        """
        import torch.distributed as dist


        def push_weights(model, rank, weight_sync_group):
            # An RL trainer's weight-sync group: rank 0 and the inference
            # engines. Its members are exactly the ranks that take the branch;
            # a group whose axis cannot be told from its name is not judged.
            if rank == 0:
                for param in model.parameters():
                    dist.broadcast(param, src=0, group=weight_sync_group)
        """,
        """
        import torch.distributed as dist


        def in_grid(grid):
            return dist.get_rank() in grid.ranks


        def send_activations(t, grid, grid_group):
            # A project predicate that tests membership of the group's ranks.
            if in_grid(grid):
                dist.broadcast(t, src=grid.ranks[0], group=grid_group)
        """,
        """
        import contextlib

        import torch.distributed as dist


        @contextlib.contextmanager
        def main_process_first(rank):
            # Every rank calls barrier once, rank 0 after the others: balanced.
            if rank > 0:
                dist.barrier()
            yield
            if rank == 0:
                dist.barrier()
        """,
        """
        import torch.distributed as dist


        def check_inputs(t, rank):
            # A rank that raises fails loudly; the launcher stops the job.
            if rank == 0 and t.isnan().any():
                raise ValueError("NaN input")
            dist.all_reduce(t)
        """,
        """
        import torch.distributed as dist


        def gather_shard(tensor, src, group):
            shape = tensor.shape if dist.get_rank() == src else None
            holder = [shape]
            dist.broadcast_object_list(holder, src=src, group=group)
            shape = holder[0]  # the same on every rank after the broadcast
            if shape is None:
                return None
            dist.all_reduce(tensor)
            return tensor
        """,
        """
        import torch.distributed as dist


        def aggregate(losses, dp_group, pp_group=None):
            dist.all_reduce(losses, group=dp_group)
            if pp_group is not None:
                dist.broadcast(losses, src=0, group=pp_group)


        def evaluate(losses, dp_group, pp_rank, pp_size):
            # pp_group keeps its default None: the broadcast is not issued, and
            # the data-parallel all_reduce is orthogonal to the pipeline guard.
            if pp_rank == pp_size - 1:
                return aggregate(losses, dp_group)
            return None
        """,
        """
        import torch.distributed as dist


        def log(msg, in_order, rank):
            # The barrier loop runs when `in_order`, where the rank condition is
            # false on every rank.
            if not in_order and rank == 0:
                print(msg)
            elif in_order:
                for _ in range(4):
                    dist.barrier()
        """,
        """
        import torch.distributed as dist
        from megatron.core.parallel_state import is_pipeline_first_stage, is_pipeline_last_stage


        def generate(logits, pp_group):
            # True on every rank without pipeline parallelism, on none with it.
            if not (is_pipeline_first_stage() and is_pipeline_last_stage()):
                dist.broadcast(logits, src=0, group=pp_group)
        """,
        """
        import torch.distributed as dist


        def reduce_embedding_grad(grad, embd_group):
            # Membership of the group guards a DTensor gather on its own mesh.
            if dist.get_rank() in dist.get_process_group_ranks(embd_group):
                full = grad.full_tensor()
                dist.all_reduce(full, group=embd_group)
        """,
    )
    invalid = (
        """
        import torch.distributed as dist


        def step(loss):
            if dist.get_rank() == 0:
                dist.all_reduce(loss)  # expect: RNK102
        """,
        """
        import os

        import torch.distributed as dist


        def sync(t):
            local_rank = int(os.environ["LOCAL_RANK"])
            if local_rank != 0:
                pass
            elif t.numel() > 0:
                dist.barrier()  # expect: RNK102
        """,
        """
        import torch.distributed as dist


        def sync(t, rank):
            # The arms issue different collectives.
            if rank == 0:
                dist.broadcast(t, src=0)  # expect: RNK102
            else:
                dist.all_reduce(t)
        """,
        """
        import torch.distributed as dist


        def sync(t, rank):
            done = dist.barrier() if rank == 0 else None  # expect: RNK102
            rank == 0 and dist.all_reduce(t)  # expect: RNK102
            return done
        """,
        """
        import torch.distributed as dist


        def drain(t, rank):
            while rank < 2:
                dist.all_reduce(t)  # expect: RNK102
            for _ in range(rank):
                dist.barrier()  # expect: RNK102
        """,
        """
        import sys

        import torch.distributed as dist


        def finish(t, rank, bad):
            if rank != 0:
                return
            dist.barrier()  # expect: RNK102


        def check(t, rank):
            if rank == 0 and t.isnan().any():
                sys.exit(1)
            dist.all_reduce(t)  # expect: RNK102


        def loop(batches, rank):
            for batch in batches:
                if rank == 0:
                    continue
                dist.all_reduce(batch)  # expect: RNK102


        def drain(batches, rank):
            for batch in batches:
                if rank != 0 and batch is None:
                    break
                dist.all_reduce(batch)  # expect: RNK102
        """,
        """
        import torch.distributed as dist


        def maybe_sync(t, rank):
            # `or`: the right side runs only where the left side is false.
            rank != 0 or dist.barrier()  # expect: RNK102
        """,
        """
        import torch.distributed as dist
        from lightning.pytorch.utilities import rank_zero_only


        @rank_zero_only
        def save(state):
            dist.barrier()  # expect: RNK102
        """,
        """
        import torch.distributed as dist


        def is_main():
            return dist.get_rank() == 0


        def save_checkpoint(state):
            dist.barrier()


        def train(state):
            if is_main():
                save_checkpoint(state)  # expect: RNK102
        """,
        """
        from accelerate import Accelerator

        accelerator = Accelerator()


        def evaluate(preds):
            if accelerator.is_main_process:
                preds = accelerator.gather(preds)  # expect: RNK102
            return preds
        """,
    )


class MissingRoot(Rule):
    code = "RNK103"
    name = "missing-root"
    severity = Severity.WARNING
    summary = "A rooted collective does not say which rank is the root"
    what = """\
Reports `broadcast`, `broadcast_object_list`, `scatter` and
`scatter_object_list` without `src`/`group_src`, and `gather`,
`gather_object` and `reduce` without `dst`/`group_dst` (also through
`torch.distributed.distributed_c10d` and `deepspeed.comm`). Calls that pass
`*args` or `**kwargs` are not reported: the root may be among them.
"""
    why = """\
The root decides whose data everyone receives (or who receives everyone's).
Leaving it implicit hides a decision that must be the same on every rank.
In torch 2.13, `broadcast(t)`, `scatter`, `gather` and `reduce` without a
root raise at run time — on the cluster, after the job was scheduled — while
`broadcast_object_list(objs)`, `scatter_object_list`, and `gather_object`
silently use global rank 0, which is wrong (and not a member) for most
subgroups.
"""
    limits = """\
Only the catalog's torch.distributed APIs and their DeepSpeed mirrors;
accelerate's `broadcast(tensor, from_process=0)` has a documented default and
is not reported.
"""
    valid = (
        """
        import torch.distributed as dist


        def share(t, objs, group):
            dist.broadcast(t, src=0)
            dist.broadcast_object_list(objs, group_src=0, group=group)
            dist.gather(t, dst=0)
        """,
        """
        import torch.distributed as dist


        def share(t, *args, **kwargs):
            dist.broadcast(t, *args, **kwargs)
        """,
    )
    invalid = (
        """
        import torch.distributed as dist


        def share(t, objs, out):
            dist.broadcast(t)  # expect: RNK103
            dist.broadcast_object_list(objs)  # expect: RNK103
            dist.gather_object(objs[0], out)  # expect: RNK103
            dist.reduce(t, op=dist.ReduceOp.SUM)  # expect: RNK103
        """,
        """
        from torch.distributed import distributed_c10d as c10d


        def spread(t, chunks, objs, out):
            c10d.scatter(t, chunks)  # expect: RNK103
            c10d.scatter_object_list(out, objs)  # expect: RNK103
            c10d.gather(t, chunks)  # expect: RNK103
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        spec, _ = self.ctx.facts.classify(node)
        if spec is None or not spec.root_required or has_unpacking(node):
            return
        if any(find_argument(node, root) is not None for root in spec.roots):
            return
        keyword = spec.roots[0].keyword
        silent = spec.short in ("broadcast_object_list", "scatter_object_list", "gather_object")
        consequence = (
            "torch silently uses global rank 0, which is wrong for a subgroup"
            if silent
            else "torch raises at run time, on the cluster"
        )
        self.report(
            node,
            f"`{spec.short}` without `{keyword}`/`group_{keyword}`: {consequence}; pass the "
            f"root explicitly (`{keyword}=0`, or `group_{keyword}=0` with a subgroup)",
        )


class RankDependentRoot(Rule):
    code = "RNK104"
    name = "rank-dependent-root"
    severity = Severity.ERROR
    summary = "The root of a collective is the caller's own rank"
    what = """\
Reports `src`, `dst`, `group_src` or `group_dst` values that depend on the
calling rank: `src=dist.get_rank()`, `src=rank`, `dst=local_rank`,
`src=int(os.environ["RANK"])`. A root computed from a group
(`dist.get_global_rank(group, 0)`) or a constant is fine.
"""
    why = """\
Every rank names itself as the root, so each one believes it is the sender:
a broadcast sends nothing anyone receives and the ranks' data silently
diverge, or NCCL pairs mismatched roots and hangs. The root must be one value
that all members of the group agree on.
"""
    limits = """\
Only rank *queries* count (`get_rank()`, `os.environ["RANK"]`,
`mesh.get_local_rank()`, directly or through assignments in the same
function): a parameter named `rank` may hold any rank the caller chose. Only
calls that every rank surely runs are reported — none under an enclosing
condition or after a rank-dependent early exit, where naming oneself as root
is usually the sending side of a protocol whose receivers name the sender.
A project helper that returns the rank is not followed here.
"""
    valid = (
        """
        import torch.distributed as dist


        def share(t, group):
            dist.broadcast(t, src=0)
            dist.broadcast(t, src=dist.get_global_rank(group, 0), group=group)
        """,
        """
        import torch.distributed as dist


        def invoke_on_rank(pg, rank, func):
            # `rank` is a parameter: the rank the caller chose, not the caller's own.
            out = [func() if pg.rank() == rank else None]
            dist.broadcast_object_list(out, group_src=rank, group=pg)
            return out[0]
        """,
        """
        import torch.distributed as dist


        def load(state, shards):
            for name, loaded in shards.items():
                # Only the rank that holds the data runs this arm; the others
                # receive with `src=0` in the else arm.
                if loaded is not None:
                    dist.broadcast(loaded, src=dist.get_rank())
                else:
                    dist.broadcast(state[name], src=0)
        """,
    )
    invalid = (
        """
        import os

        import torch.distributed as dist


        def share(t, objs):
            rank = dist.get_rank()
            dist.broadcast(t, src=rank)  # expect: RNK104
            dist.broadcast_object_list(objs, src=dist.get_rank())  # expect: RNK104
            dist.reduce(t, int(os.environ["LOCAL_RANK"]), op=dist.ReduceOp.SUM)  # expect: RNK104


        def share_local(t):
            local_rank = int(os.environ["LOCAL_RANK"])
            dist.broadcast(t, src=local_rank)  # expect: RNK104
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        spec, _ = self.ctx.facts.classify(node)
        if spec is None or not spec.roots or not spec.kind.synchronising:
            return
        for root in spec.roots:
            value = find_argument(node, root)
            if value is None:
                continue
            taint = self.ctx.rank.taint(value)
            if taint.rank and taint.strong and not taint.membership and not self._guarded():
                self.report(
                    value,
                    f"`{root.keyword}` of `{spec.short}` is the caller's own rank: every rank "
                    f"names itself as root, so ranks disagree on whose data counts; use one "
                    f"value all ranks share (`{root.keyword}=0`)",
                )
                return

    def _guarded(self) -> bool:
        """Maybe only some ranks run this line: then naming oneself as root is the sender's side."""
        ctx = self.ctx
        # Any enclosing condition: rank checks, and data that only the root has
        # (`if isinstance(loaded, Tensor): broadcast(..., src=get_rank())`).
        return ctx.facts.rank_exit_seen or bool(ctx.conditions)


class PartialGroupCreation(Rule):
    code = "RNK105"
    name = "partial-group-creation"
    severity = Severity.ERROR
    project = True
    summary = "A process group or device mesh is created by only some ranks"
    what = """\
Reports `new_group`, `new_subgroups`, `new_subgroups_by_enumeration`,
`init_device_mesh` and `DeviceMesh(...)` calls that only some ranks reach
(the same reachability as RNK102: rank-dependent branches, loops, early exits,
rank-zero-only functions, project helpers called under rank conditions), that
rank-dependent branches make with different arguments, or whose ranks
argument depends on the calling rank (`new_group([rank, rank ^ 1])`).
"""
    why = """\
Creating a group is a collective over the default group: every rank must
call `new_group` for every group, in the same order, with the same ranks —
also the ranks that will not be members. A rank that skips one, or builds
only "its own" group, hangs the others in group creation or silently pairs
group N on one rank with group N+1 on another, so later collectives run on
the wrong ranks.
"""
    limits = """\
Same as RNK102 for reachability. Ranks arguments built from loop variables
(`for i in range(n): new_group(range(i * tp, (i + 1) * tp))`) are the correct
pattern and are not reported; nor is `new_group([dist.get_rank()])`, a
one-rank group of the caller (a Megatron idiom). `init_process_group` (with
the process's own `rank=` by design) is initialisation, not a subgroup.
Creation under `if self.x is None:` is lazy — whichever call comes first
creates it on every rank — and is not followed through calls.
"""
    valid = (
        """
        import torch.distributed as dist


        def build_groups(world_size, tp):
            rank = dist.get_rank()
            mine = None
            for start in range(0, world_size, tp):
                ranks = list(range(start, start + tp))
                group = dist.new_group(ranks)  # every rank creates every group
                if rank in ranks:
                    mine = group
            return mine
        """,
        """
        import os

        import torch.distributed as dist


        def setup():
            # The default group is created with the process's own rank by design.
            rank = int(os.environ["RANK"])
            dist.init_process_group("nccl", rank=rank, world_size=8)
            # A one-rank group of the caller (Megatron's fallback when no group is given).
            return dist.new_group(ranks=[dist.get_rank()])
        """,
        """
        import torch.distributed as dist
        from torch.distributed.device_mesh import init_device_mesh


        class Rollout:
            def __init__(self):
                self.mesh = None

            def start(self):
                self._ensure_mesh()  # every rank, first

            def _ensure_mesh(self):
                if self.mesh is None:  # lazily, once per object
                    self.mesh = init_device_mesh("cpu", (dist.get_world_size(),))

            def resume(self, rank):
                if rank == 0:
                    self._ensure_mesh()
        """,
    )
    invalid = (
        """
        import torch.distributed as dist


        def build_groups(rank):
            if rank < 4:
                return dist.new_group([0, 1, 2, 3])  # expect: RNK105
            return dist.new_group([4, 5, 6, 7])


        def pair_group():
            rank = dist.get_rank()
            return dist.new_group([rank, rank ^ 1])  # expect: RNK105
        """,
        """
        import torch.distributed as dist
        from torch.distributed.device_mesh import init_device_mesh


        def setup(world_size):
            if dist.get_rank() == 0:
                return init_device_mesh("cuda", (world_size,))  # expect: RNK105
            return None
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        spec, _ = self.ctx.facts.classify(node)
        if spec is None or spec.kind is not catalog.CallKind.GROUP_CREATION:
            return
        rank = self.ctx.rank
        for arg in node.args:
            if _is_self_group(arg.value):
                continue
            taint = rank.taint(arg.value)
            if taint.rank:
                self.report(
                    node,
                    f"`{spec.short}` gets a ranks argument that depends on the calling rank: "
                    f"each rank builds a different group, but every rank must create every "
                    f"group with the same ranks; create all groups in a loop on every rank "
                    f"and keep the one that contains this rank",
                )
                return


class ImplicitReduceOp(Rule):
    code = "RNK106"
    name = "implicit-reduce-op"
    severity = Severity.WARNING
    summary = "A reduction does not name its reduce op"
    what = """\
Reports `all_reduce`, `reduce`, `reduce_scatter`, `reduce_scatter_tensor`,
`reduce_scatter_single`, `all_reduce_coalesced` and `_reduce_scatter_base`
(torch.distributed, `distributed_c10d`, `deepspeed.comm`) without an `op`.
Functional collectives take the op as a required argument and are never
reported.
"""
    why = """\
The default is `ReduceOp.SUM`. Many wrong-metric and wrong-gradient bugs
start as a sum that should have been a mean: a loss or accuracy summed over
ranks looks plausible on 2 GPUs and is 256 times too large on 256. Naming
the op makes the intent reviewable.
"""
    limits = """\
`ReduceOp.AVG` exists only on NCCL (and some other backends); on gloo, sum
and divide by the world size.
"""
    valid = (
        """
        import torch.distributed as dist
        from torch.distributed import ReduceOp


        def mean_loss(loss):
            dist.all_reduce(loss, op=ReduceOp.AVG)
            dist.reduce(loss, dst=0, op=ReduceOp.SUM)
        """,
        """
        import torch.distributed._functional_collectives as funcol


        def mean_loss(loss, group):
            # Functional collectives take the op as a required argument.
            return funcol.all_reduce(loss, "avg", group)
        """,
    )
    invalid = (
        """
        import torch.distributed as dist


        def mean_loss(loss, shards, out):
            dist.all_reduce(loss)  # expect: RNK106
            dist.reduce_scatter_tensor(out, shards)  # expect: RNK106
            dist.reduce(loss, dst=0)  # expect: RNK106
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        spec, _ = self.ctx.facts.classify(node)
        if spec is None or spec.op is None or has_unpacking(node):
            return
        if find_argument(node, spec.op) is not None:
            return
        self.report(
            node,
            f"`{spec.short}` without `op` sums across ranks (the default, `ReduceOp.SUM`); "
            f"if a mean is meant this is off by the world size: pass `op=ReduceOp.SUM` or "
            f"`op=ReduceOp.AVG` explicitly",
        )


class BarrierAsSync(Rule):
    code = "RNK107"
    name = "barrier-as-sync"
    severity = Severity.INFO
    default_enabled = False
    summary = "A barrier is used in library code"
    what = """\
Reports `barrier`, `monitored_barrier` (and `accelerator.wait_for_everyone`,
`strategy.barrier`) in library code: not in test files (`test_*.py`,
`*_test.py`, `conftest.py`, files under `tests/`), not in `__main__.py`,
not under `if __name__ == "__main__":`, not in a function named `main`.
Off by default: opt in with `extend-select = ["RNK107"]`.
"""
    why = """\
A barrier orders nothing by itself: it waits until every rank arrives, then
lets all of them go. Used "to make sure rank 0 finished writing", it hides
the real dependency, costs a full round of synchronisation every time, and
becomes a hang as soon as one rank takes a different path. Collectives that
carry the data (broadcast the path, all_reduce the flag) synchronise exactly
what is needed.
"""
    limits = """\
A barrier is sometimes the simplest correct tool (around a one-time download
on rank 0); suppress those with `# noqa: RNK107` and a reason.
"""
    valid = (
        """
        import torch.distributed as dist


        def main():
            dist.init_process_group("gloo")
            dist.barrier()
        """,
    )
    invalid = (
        """
        import torch.distributed as dist


        def save(state, path):
            if dist.get_rank() == 0:
                write(state, path)
            dist.barrier()  # expect: RNK107
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        spec, _ = ctx.facts.classify(node)
        if spec is None or spec.kind is not catalog.CallKind.BARRIER:
            return
        if _is_test_or_entry_file(ctx.path) or any(
            frame.node.name.value == "main"
            for frame in ctx.functions
            if isinstance(frame.node, cst.FunctionDef)
        ):
            return
        if not ctx.functions and any(is_main_guard(c.test) for c in ctx.conditions):
            return
        self.report(
            node,
            f"`{spec.short}` in library code: a barrier only waits, it does not pass the data "
            f"the other ranks depend on; synchronise with the collective that carries it "
            f"(broadcast the result, all_reduce the flag) or suppress with a reason",
        )


_GROUP_PARAMS = frozenset({"group", "pg", "process_group", "device_mesh", "mesh"})
_WORLD_SIZE_QUERIES = frozenset(
    f"{prefix}.get_world_size"
    for prefix in ("torch.distributed", "torch.distributed.distributed_c10d", "deepspeed.comm")
)
# Words that make a `*_group` parameter a count or an index, not a process group.
_NOT_A_GROUP = frozenset({"num", "n", "count", "size", "idx", "index", "id", "ids", "name"})


class IgnoredProcessGroup(Rule):
    code = "RNK108"
    name = "ignored-process-group"
    severity = Severity.WARNING
    summary = "A function takes a process group but a collective inside uses the default group"
    what = """\
In a function with a process-group parameter (`group`, `pg`,
`process_group`, `*_group`, `*_pg`, `device_mesh`, `mesh`; not counts such as
`num_samples_group`), reports collectives that pass no group, and — next to a
group parameter, not a mesh — `get_world_size()` without one (the classic
"average over the wrong number of ranks"). `get_rank()` without a group is
not reported: the global rank is often what is meant (logging on rank 0,
membership tests against global rank lists).
Calls under a condition that mentions the parameter (`if group is None:`)
are not reported: that is the usual default-group fallback.
"""
    why = """\
The caller passed a group because the work is meant for that group. The
call without `group=` silently runs on the default (world) group instead:
the sum includes ranks of other replicas, the rank is the global one, or the
collective waits for ranks that never call it — and it works in every test
with a single group.
"""
    limits = """\
Wrappers from the catalog without a group parameter (accelerate, Lightning)
are not reported.
"""
    valid = (
        """
        import torch.distributed as dist


        def average(t, group=None):
            if group is None:
                dist.all_reduce(t)
            else:
                dist.all_reduce(t, group=group)
            return t / dist.get_world_size(group)
        """,
    )
    invalid = (
        """
        import torch.distributed as dist


        def average(t, dp_group):
            dist.all_reduce(t, op=dist.ReduceOp.SUM)  # expect: RNK108
            return t / dist.get_world_size()  # expect: RNK108


        def scatter_counts(t, num_samples_per_group):
            dist.all_reduce(t, op=dist.ReduceOp.SUM)  # no group parameter here
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        frame = ctx.function
        if frame is None or not isinstance(frame.node, cst.FunctionDef):
            return
        params = [
            p.name.value
            for p in (
                *frame.node.params.posonly_params,
                *frame.node.params.params,
                *frame.node.params.kwonly_params,
            )
            if _is_group_param(p.name.value)
        ]
        if not params:
            return
        spec, target = ctx.facts.classify(node)
        if spec is not None:
            if spec.group is None or has_unpacking(node):
                return
            if find_argument(node, spec.group) is not None:
                return
            what = f"`{spec.short}`"
        elif target in _WORLD_SIZE_QUERIES:
            # A mesh is sized per dimension (`mesh.size(dim)`); the world size
            # next to a mesh parameter is often meant.
            params = [p for p in params if p not in ("mesh", "device_mesh")]
            if node.args or not params:
                return
            what = f"`{target.rsplit('.', 1)[-1]}()`"
        else:
            return
        mentioned = {
            name.value for condition in ctx.conditions for name in _names_in(condition.test)
        }
        if mentioned & set(params):
            return
        self.report(
            node,
            f"{what} uses the default group although this function takes "
            f"`{params[0]}`: it runs over all ranks instead of the caller's group; pass "
            f"`group={params[0]}` (for a mesh, `group={params[0]}.get_group(dim)`)",
        )


class GlobalRootWithSubgroup(Rule):
    code = "RNK109"
    name = "global-root-with-subgroup"
    severity = Severity.WARNING
    summary = "An integer src/dst is combined with a subgroup"
    what = """\
Reports rooted collectives that pass an integer literal as `src` or `dst`
together with a group along a parallel axis (`group=dp_group`,
`group=mesh["tp"].get_group()`, `group=get_data_parallel_group()`).
"""
    why = """\
`src` and `dst` are *global* ranks even when a subgroup is given. `src=0`
with the second data-parallel group names a rank that is not a member: torch
raises "rank is not part of group" — or, with a computed value, the wrong
member silently becomes the root. Since torch 2.6, `group_src`/`group_dst`
take the rank within the group.
"""
    limits = """\
Only integer literals; computed roots are assumed to be global ranks
(`dist.get_global_rank(group, 0)`). Groups whose axis cannot be told from
their name (`group=self.model_update_group`) are not reported: RL trainers
create such groups outside the default group, where ranks map to themselves.
"""
    valid = (
        """
        import torch.distributed as dist


        def share(t, group):
            dist.broadcast(t, group_src=0, group=group)
            dist.broadcast(t, src=dist.get_global_rank(group, 0), group=group)
            dist.broadcast(t, src=0)
        """,
    )
    invalid = (
        """
        import torch.distributed as dist


        def share(t, dp_group):
            dist.broadcast(t, src=0, group=dp_group)  # expect: RNK109
            dist.gather(t, None, 0, dp_group)  # expect: RNK109
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        spec, _ = self.ctx.facts.classify(node)
        if spec is None or not spec.roots or spec.group is None:
            return
        root = spec.roots[0]
        value = find_argument(node, root)
        group = find_argument(node, spec.group)
        if not isinstance(value, cst.Integer) or group is None:
            return
        if isinstance(group, cst.Name) and group.value == "None":
            return
        if (dotted_name(group) or "").endswith("WORLD"):
            return
        if not axes_of_expression(group):
            # A group of unknown make-up may be a separate process group (an RL
            # trainer's weight-sync group with vLLM workers) whose ranks map to
            # themselves; only groups along a parallel axis are surely subgroups.
            return
        self.report(
            value,
            f"`{root.keyword}={value.value}` is a global rank, but `{spec.short}` runs on a "
            f"subgroup: it is probably not a member ('rank is not part of group') or not "
            f"the member meant; use `group_{root.keyword}={value.value}` (torch >= 2.6)",
        )


def _is_self_group(node: cst.BaseExpression) -> bool:
    """``[dist.get_rank()]``: a one-rank group of the caller, a known idiom (Megatron)."""
    return (
        isinstance(node, cst.List)
        and len(node.elements) == 1
        and isinstance(node.elements[0].value, cst.Call)
        and (dotted_name(node.elements[0].value.func) or "").endswith("get_rank")
    )


def _is_group_param(name: str) -> bool:
    if name in _GROUP_PARAMS:
        return True
    if not (name.endswith("_group") or name.endswith("_pg")):
        return False
    return not (set(name.lower().split("_")) & _NOT_A_GROUP)


def _names_in(node: cst.CSTNode) -> list[cst.Name]:
    found: list[cst.Name] = []
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name):
            found.append(current)
        stack.extend(current.children)
    return found


def _is_test_or_entry_file(path: str) -> bool:
    posix = path.replace("\\", "/")
    name = posix.rsplit("/", 1)[-1]
    return (
        name.startswith("test_")
        or name.endswith("_test.py")
        or name in ("conftest.py", "__main__.py")
        or "/tests/" in f"/{posix}"
        or "/test/" in f"/{posix}"
    )
