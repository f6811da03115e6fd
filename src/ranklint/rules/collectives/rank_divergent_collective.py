"""RNK102 rank-divergent-collective."""

from __future__ import annotations

from collections.abc import Iterable

from ranklint.analysis.project.facts import ProjectFacts
from ranklint.findings import Severity
from ranklint.rules.base import ProjectFinding, Rule
from ranklint.rules.collectives._divergence import divergence_findings
from ranklint.rules.collectives._evidence import DIVERGENCE_TIERS
from ranklint.rules.collectives._rank_divergent_examples import VALID
from ranklint.rules.collectives._rank_divergent_invalid import INVALID


class RankDivergentCollective(Rule):
    code = "RNK102"
    name = "rank-divergent-collective"
    severity = Severity.ERROR
    project = True
    summary = "A collective is reached by only some ranks of its group"
    what = """\
Reports a collective (all_reduce, broadcast, barrier, all_gather_object,
distributed checkpoint save/load, building a DDP model (it checks the
parameters' shapes and broadcasts rank 0's state), FSDP state-dict gathering, DTensor
`full_tensor()`, DeepSpeed's `GatheredParameters` where the file configures
ZeRO stage 3, a torchmetrics metric's `compute()` (it gathers every rank's
state, unless the metric is built with `sync_on_compute=False`), accelerate,
Lightning and Lightning Fabric wrappers, ...) that
only some ranks of its group reach. Collectives
that frameworks issue implicitly count too: Lightning's `self.log(...,
sync_dist=True)` (and `log_dict`, once per key: a dict whose keys depend on
the rank is a loop with a rank-dependent trip count), reading
`trainer.log_dir` (a broadcast) or, in a hook, `trainer.callback_metrics`
(it computes and syncs the logged metrics), Hugging Face
`trainer.save_model()`. A collective is missed by some ranks because of:

- a rank-dependent `if`/`elif`/`else`, conditional expression, or `and`/`or`
  short circuit (`rank == 0 and dist.barrier()`);
- a rank-dependent `while` condition, or a loop whose trip count depends on
  the rank (`for _ in range(rank)`);
- a rank-dependent early `return`, `sys.exit()`, `continue` or `break`
  before it, or a `break` only some ranks take in the loop around it (`if
  rank == 0: break`: the other ranks go round again). The exit may sit under
  a further test in the rank test's arm (`if rank == 0: if stale > patience:
  return`: the message says those ranks *can* return), and the collective
  after the blocks around the rank test (a uniform `if`, a `with`, a `try`,
  an inner loop) as far as the exit reaches: past the function's blocks for
  a `return`, to the end of the loop's body for a `continue`;
- a decorator that runs the function on one rank only: one of the project
  whose wrapper calls the function only under a rank test (`if
  dist.get_rank() == 0: return fn(...)`), whatever its name; one the run
  cannot read (imported from a package) by its name (`@rank_zero_only`). A
  decorator of the project whose wrapper calls the function on every rank is
  not one, whatever its name;
- a call, under such a condition, to a project function that issues a
  collective directly or through its callees, in this file or another file
  of the run. The message and the trace show the call chain
  (`save_checkpoint() -> dist.barrier() at utils.py:41`);
- a rank-dependent value passed to a project function that tests it
  (`exchange(t, rank == 0)`, where `exchange` does `if go: dist.barrier()`):
  the callee's collectives with that parameter true and false are compared,
  and the call is reported.

A value depends on the rank when it comes from `get_rank()`,
`os.environ["RANK"]` and friends, `mesh.get_local_rank()`,
`accelerator.is_main_process`, names listed in `rank-names` (`rank`,
`tp_rank`, `is_main_process`, ...), or a project function that returns one
(`def is_main(): return dist.get_rank() == 0`), and through every binding
form: tuple unpacking of a helper's result, element by element (`r, w =
setup()`), `self.` attributes read in other methods (an attribute some
method sets under a rank test depends on the rank in every method of the
class, before or after that one, until the method assigns it itself; so
does a module global that a function declaring `global` sets under a rank
test, in every function), `global`/`nonlocal`, walrus, a dict's constant
keys (`flags = {"main": rank == 0}`, then `if flags["main"]:`), and a tensor
made of such a value (`flag = torch.tensor(float(rank == 0))`, then
`flag.item()`). A value assigned
under a rank-dependent test (`if rank == 0: stop = check()`), or computed
in a loop over a rank's share (`files[rank::world]`, `range(rank, n,
world)`), depends on the rank too, until a broadcast or
all_reduce gives it the same value everywhere. So does a draw from a
process-global random state (`random.random()`, `torch.rand()` without a
`generator=`), which differs between ranks unless every rank is seeded alike.

When both arms of a rank-dependent branch issue the same collectives in the
same order on the same group, nothing is reported; when they differ, the
first difference is. Reductions differ also by their reduce op, where both
are written out as `ReduceOp` members or left to the default (`SUM` on one
side, `op=ReduceOp.MAX` on the other: each rank gets a wrong result); an op
passed as a variable matches any. Branches the analysis cannot decide are followed path
by path (up to 32 paths): `barrier(); return` in one arm and one `barrier()`
on every path of the rest is balanced. Uniform tests decide what they
enclose: inside `else:` of `if self.pipe_parallel:`, a method of the same
object that tests `self.pipe_parallel` is known to skip that branch, and a
flag passed on through several calls (`f(use_zero=self.use_zero)`, then
`g(use_zero=use_zero)`) keeps the truth the early exit's test gave it. So
does a module flag bound once to a literal and never rebound (`DEBUG =
False`): `if DEBUG and dist.get_rank() == 0: return` never returns.
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
be told from its name (an RL trainer's weight-sync group holds rank 0 and
inference engines that run other code); a helper called with a literal boolean that turns its
collective off (`log(x, barrier=False)` where the collective is under `if
barrier:` or `if barrier and dist.is_initialized():`); "is this run
distributed" tests on a rank (`local_rank != -1`, `rank >= 0`).

A group that a framework object holds (a DTensor's mesh), or a device mesh's
group kept in a name or in an attribute the class assigns once (`g =
mesh.get_group()`, `self.pg = mesh.get_group()`), is judged only under a test of
the global rank against one number: one rank that reaches it alone (`if
dist.get_rank() == 0: dt.full_tensor()`, `me + 1 < 2`, `rank == world_size -
1`, or the others returning early) hangs, since the mesh spans the ranks that
shard the tensor; a side that several ranks take may be exactly the mesh. A
group made of every rank (`new_group()`, `new_group(list(range(world_size)))`)
(also kept in a name or an attribute assigned once, or passed to a helper) is
judged as the default group, and so is a helper's group parameter that a call
leaves to its default of `None` (`def reduce_mean(t, group=None)`, then
`reduce_mean(t)` under `if rank == 0:`), where the helper never binds it again.
A group whose ranks are written out (`new_group([2, 3])`, or a list
bound once to a name) is judged on each member under a test of the global rank
(or of it modulo a number) against a number; the test is read through names
and flags the function binds once (`me = dist.get_rank()`; `x = 1 if me == 2
else 0`, then `if x:`) and through `and`/`or` with one rank-dependent operand.
`save_state()`/`save_model()` communicate only under DeepSpeed or FSDP; a rank
test around them is not reported where it also tests for that backend (`if
is_deepspeed or is_main:`).

A rank-dependent `raise` is not treated as an early exit: the raising rank
fails with an error and the launcher stops the job, so there is no silent
hang. An exit inside a loop is compared with the code after it in the
same iteration, not with the loop's later iterations: `if rank == 0:
barrier(); return` before a `barrier()` at the end of a loop body is
balanced, although rank 0 misses the next iteration's barrier. A value
that a broadcast, all_reduce or all_gather wrote (its first argument) is
rank-invariant afterwards. Two branches on the same rank
condition are judged together (`if rank > 0: barrier()` … `if rank == 0:
barrier()` is balanced; a nested test of it is decided by its arm), and a
flag set from the rank (`serve = True; if rank > 0: serve = False`) is read
as that rank test.

A method called on a local built from a project class (`model =
Deployable(...)`, then `model.generate()`) is followed into that class. A test
of a value received from a root (`broadcast(message, src=0)`, then `if message
== STOP: return`) hands the rest of the sequence to the sender: a worker loop
that receives until the leader says stop matches any leader that begins with
the same collectives. Not checked: a function that builds a Lightning
`Trainer`/`Fabric` with `devices=1` on one node (one process), and a callback
hook that Lightning 2 no longer calls (`on_keyboard_interrupt`).

Not followed: calls through objects of unknown class (`self.engine.save()`, a
parameter), through variables holding functions (`is_main = ranks.is_main`),
and a rank-dependent argument into anything but a truth or `is None` test of
its parameter (`if who == 0:`, a loop over it, a value derived from it in
the callee). Call chains
across files need all the files in one run (the flake8 face sees one file at
a time); a `# ranklint: skip-file` file is not in the call graph. Exception
handlers are checked on their own, not as part of the normal sequence.

A collective on a group whose members are written out (`g =
dist.new_group([0, 3])`) under a test of the global rank against a number is
reported when some members pass the test and others do not; other groups
whose members cannot be told are not judged.

A name given the same value under a rank test and, later, under its
opposite (`if rank == 0: store = Store(p)` ... `if rank != 0: store =
Store(p)`) holds it on every rank.

The engine `deepspeed.initialize` returns first is followed like a wrapped
model: its forward is a collective in a file that configures ZeRO stage 3
(`"stage": 3`, `zero_stage=3`, `deepspeed.zero.Init`). So are the forward and
`generate` of what `accelerator.prepare` returns, in a file that sets up
accelerate's FSDP plugin (`FullyShardedDataParallelPlugin(...)`,
`fsdp_plugin=`). A wrapper configured only in a JSON or YAML file is not
seen. The forward of `model = DDP(m)` is a collective too: it broadcasts the
module's buffers first, in `eval()` and `no_grad()` as well, unless the
wrapper is given `broadcast_buffers=False` (or `forward_sync_buffers=False`, its name since
torch 2.13); a module without buffers (no
BatchNorm, no registered buffer) does not communicate, which the analysis
cannot see (call `model.module(x)` on one rank, or suppress with a reason).
A wrapped model is followed where it is built in view, where a parameter's
annotation names the wrapper (`model: DistributedDataParallel`), where a
function of the same module defined above the call returns one it builds
(`model = ddp_wrap(model)` with `return DDP(m, ...)`), and into the helpers it
is passed to: `if rank == 0: evaluate(model, loader)` is reported where
`evaluate` runs `model(x)`, `model.forward(x)` or `model.generate(...)` and
never rebinds `model` (`model = model.module` unwraps it). A model, or a
torchmetrics metric, kept in an attribute that the module's methods assign
once (`self.model = DDP(net)`, `self.fid = FrechetInceptionDistance()` in
`__init__`) is followed in every method of the module's classes, where it is
called (`self.model(x)`, `self.fid.compute()`) or passed to a helper
(`evaluate(self.model, x)`); one assigned twice, or returned by a helper of
another module, is not followed.

Framework calls that communicate only in some configurations count where the
code shows that configuration: a state-dict getter
(`get_model_state_dict(model)`) is local before the same function passes the
module to a sharding call (`fully_shard`, `FSDP`, a function named with
`shard`, `fsdp` or `parallelize`), and FSDP's `optim_state_dict_to_load` only
in a function that sets `rank0_only=True`.

Known false alarms (docs/dev/ecosystem-review.md): a leader/worker protocol through
an object of unknown class; a flag tested in a callee under another name; a
framework call whose configuration is set in another file. Data is
per-rank as the `batch` of a Lightning step method (not its dict keys) or what
a rank gives `all_gather_object`; a test of the file system (`os.path.exists`,
`isfile`, `isdir`, `listdir`, `glob`) is rank-dependent only on a path the
same function writes (`open(path, "w")`, `torch.save(x, path)`): ranks that
look after the write see the file, the others do not.
"""
    tiers = DIVERGENCE_TIERS
    runtime_check = """\
Run the function on simulated ranks with the runtime companion (`pip install
'ranklint[runtime]'`, [docs/runtime.md](../runtime.md)): if the ranks really
diverge, the test fails with each rank's line, and this finding is quoted under
the diverging collective.

```python
import pytest
import torch
import torch.distributed as dist
from ranklint.runtime import DivergenceError, run_ranks


def log_loss(rank, world_size):
    loss = torch.ones(1)
    if rank == 0:
        dist.all_reduce(loss)  # only rank 0 reaches it


with pytest.raises(DivergenceError, match="rank 1 never issued it"):
    run_ranks(log_loss, 2)
```
"""
    valid = VALID
    invalid = INVALID

    @classmethod
    def check_project(cls, project: ProjectFacts) -> Iterable[ProjectFinding]:
        return divergence_findings(project, group_creation=False)
