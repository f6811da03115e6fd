"""RNK201 host-sync-in-hot-path."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from ranklint.analysis.project.facts import ProjectFacts
from ranklint.analysis.project.hot_regions import HotCost, HotRegion, trains
from ranklint.findings import Confidence, Evidence, Link, Severity
from ranklint.model.events import CostKind, HostCost, HotKind
from ranklint.rules.base import ProjectFinding, Rule
from ranklint.rules.hot_path._hot_costs import SYNC_ADVICE, Description, hot_cost_findings

_SHAPE_ADVICE = (
    "use fixed-size operations instead (`torch.where(mask, x, 0)`, `masked_fill`, "
    "multiplying by the mask), or pass the output size where the API takes one"
)
_WAITS = "the host waits for the device"
HIGH, MEDIUM, LOW = Confidence.HIGH, Confidence.MEDIUM, Confidence.LOW
# What each kind of sync does, and how to avoid it.
_SYNCS: dict[CostKind, tuple[str, str]] = {
    CostKind.COPY: (
        "`{}` copies a tensor to the host and waits for the device to finish all queued work",
        SYNC_ADVICE,
    ),
    CostKind.SYNCHRONIZE: (
        "`{}` blocks the host until the device has finished all queued work",
        "synchronize only where a measurement needs it, once per log interval, "
        "or time with CUDA events",
    ),
    CostKind.DATA_DEPENDENT: (
        "`{}` has an output size that depends on the data: the host waits for the device "
        "to learn it",
        _SHAPE_ADVICE,
    ),
    CostKind.FORMAT: (f"`{{}}` formats a tensor's value on the host: {_WAITS}", SYNC_ADVICE),
    CostKind.CONVERSION: (f"`{{}}` converts a tensor to a Python number: {_WAITS}", SYNC_ADVICE),
    CostKind.TRUTH_TEST: (
        f"the test `{{}}` reads a tensor's value on the host: {_WAITS}",
        "keep the decision on the device (`torch.where`, masking) or check it once "
        "per log interval",
    ),
}


class HostSyncInHotPath(Rule):
    project: ClassVar[bool] = True
    code = "RNK201"
    name = "host-sync-in-hot-path"
    severity = Severity.WARNING
    summary = "A device-to-host sync runs every training or inference step"
    what = """\
Reports, in hot code, operations that make the host wait for the accelerator:

- explicit syncs on any value: `.item()`, `.tolist()`, `.cpu()`, `.numpy()`,
  `.to("cpu")` (also `device="cpu"`, `torch.device("cpu")`),
  `torch.cuda.synchronize()` and stream/event `.synchronize()`,
  `torch.nonzero` / `.nonzero()`, `torch.masked_select`, `torch.unique`, and
  indexing with a boolean mask (`x[x > 0]`): their output size depends on the
  data, so the host must wait to learn it;
- implicit syncs on values known to be tensors: `float()`, `int()`, `bool()`,
  truth tests (`if loss > 5:`, `while t:`, `assert t`, `and`/`or`, `not`,
  conditional expressions), `print()`, f-strings, `str()`, `repr()`,
  `format()`, `%` and `.format()` formatting.

Hot code is the body of a step loop (a loop that calls `.backward()`, an
optimizer's `.step()` (not a scheduler's), `zero_grad()`, or a model forward,
directly or through project functions that step on every call; a function
whose only step outside its loops is a `zero_grad()` before a loop that
trains runs an epoch per call, not a step), a function named in `hot-functions`
(`train_step`, `training_step`, `forward` of an `nn.Module`, ...), a forward
helper of an `nn.Module` (`_forward`, `forward_*`, `*_forward`), the
`compute_loss` / `prediction_step` of a `...Trainer` subclass (its framework
calls them every step), one compiled with `@torch.compile`, one marked
`# ranklint: hot` on its `def` line, and every project function called from
hot code, in any file: the message shows the call chain.

Code that does not run every step is not hot:

- under `if step % N == 0:` (a deliberate, amortised sync);
- once-only code: under `if step == 1:`, `if self.step - loaded_step == 1:`,
  `if batch_idx == 0:` (a step counter compared for equality), the last
  iteration (`if i == len(loader) - 1:`, `if epoch == num_epochs - 1:`), a
  step counter at a loop's bound (`if step >= total_steps:`, `if batch_count
  == num_batches_per_epoch:`; a bound is a name with `num`, `total`, `max`,
  `last` or `final` and a word of steps, iterations, batches or epochs), a
  first- or last-step flag (`if first_step:`, `if self._first:`, `if
  last_step:`, `if last_batch:`), `if not self._initialized:`, and `or` of such tests (`if
  batch_idx == 0 or batch_idx % N == 0:`);
- after a test that skips most steps: `if step % N: continue`, `if step !=
  capture_step or done: return` (an `or` fails only where each operand
  fails), `if step - last_step < interval: return` (a step difference below an
  interval), and `if step % N == 0: ... else: return`;
- under a test that names a periodic event: a name with one of the words
  `log`, `logging`, `eval`, `evaluate`, `evaluation`, `validate`, `validation`,
  `save`, `checkpoint`, `ckpt`, `report`, `interval`, `every`, `print`,
  `profile`, `profiling` (`if self.should_log(step):`, `if is_eval_step:`,
  `if do_checkpoint:`), unless the name also counts or measures something
  (`num_eval`, `eval_count`, `eval_loss`, `log_probs`: words such as `num`,
  `count`, `total`, `sum`, `mean`, `len`, `loss`, `mask`, `tokens`, `size`,
  `probs`), which may hold on every step;
- a `raise` statement and an `assert`'s message: they run only when
  something already failed (the `assert`'s test itself runs every time);
- under a check that a value is broken: `if torch.isnan(loss).any():`,
  `if math.isinf(x):`, `if not torch.isfinite(loss).all():` (the check
  itself runs every step);
- tests: code in a file that matches `test-patterns` or is named `test.py`
  or `tests.py`, in a `test_*` function or in a method of a `Test*` class
  checks the code it runs: neither its step loops nor its step functions
  (`train_step`, a module's `forward`) make anything hot, unless marked
  `# ranklint: hot`.

Set `allow-periodic-sync = false` to report periodic and once-only code too.

Not reported, because the host needs the value or nothing waits:

- reads of a tensor a collective just filled in place: after
  `dist.broadcast(info, src)` or `dist.all_reduce(done, op=ReduceOp.MAX)`
  (also MIN and the bitwise ops), every read (`if done.item():`,
  `int(max_len.item())`); after a sum, only tests (`if found.item() > 0:`,
  `bool(flag)`). Every rank takes the same decision; that sync is the point;
- values already on the host: tensors made without `device=`
  (`torch.tensor(values)`, `torch.from_numpy(a)`), torch functions of them,
  and copies (`y = x.cpu()` then `y.item()`; `x.cpu().detach().numpy()` is
  one copy, reported once at `.cpu()`);
- `x[mask] = 0` with a number or a non-tensor name on the right: PyTorch runs
  it as `masked_fill_`, with no output size to learn;
- host values an API needs, passed straight to it: split sizes
  (`x.split(sizes.tolist())`, `torch.split`, all-to-all) and token ids for a
  tokenizer's `decode` / `ids_to_text`;
- moving a model or module (`model.to("cpu")`, `self.vae.cpu()`; a name
  ending in a word of a model or a module: `model`, `net`, `policy`,
  `module`, `layer`, `encoder`, `decoder`, `backbone`, `head`, `block`,
  `adapter`, `vae`, `unet`, `transformer`, `controlnet`, `discriminator`):
  not a read of a value;
- `x.to("cpu", non_blocking=True)`: the copy is queued and the host moves on.

Not reported either: code of a Ray driver, whose values are what the workers
sent back, on the host (see "Evidence and confidence").
"""
    why = """\
An accelerator runs ahead of the Python host: kernels are queued and the host
moves on. A sync drains that queue and the host waits for the device; the next
step's kernels start late and the accelerator idles while the host catches up.
One `.item()` per step is enough to cost tens of percent of throughput on a
large model, and on a cluster the slowest rank's stall is everyone's stall: the
next collective waits for it. `len(t)` and `t.shape` are fine: shapes live on
the host.
"""
    limits = """\
Implicit syncs are reported only on values known to be tensors (annotations,
torch calls, tensor methods, model and loss outputs, `.loss`/`.logits`, and
names assigned from those in the same function); unknown values are not
reported. Inside `if isinstance(x, list):` (or another non-tensor type) `x` is
not a tensor, and a branch that ends in `return`, `raise`, `continue` or
`break` does not change what the code after it sees. Calls through objects of
unknown class (`self.trainer.log(...)`) are not followed. Exception handlers
are not hot. A step loop is recognised by its markers; a loop that steps only
through an opaque callable is not.

Once-only and periodic code are recognised by the names in the test (a step
counter: `step`, `global_step`, `iteration`, `batch_idx`; not `micro_step`,
`num_steps`, `max_iters`; a flag with `first` or `initialized` in its name),
not by what the code does. A guard that every hot caller switches off by a
literal argument (`if out_size is None:` where all hot callers pass
`out_size`) is still reported: arguments are not followed into the callee's
branches.

A collective is recognised by the last name of its callee (`all_reduce`,
`allreduce`, `broadcast`), filling its first argument in place, earlier in
the same function; a value read after a broadcast or a MAX/MIN reduction is
never reported, even where it is only logged. Host tensors are followed
through names and `self.` attributes assigned in the same function
(`self.it = self.it.cpu()`), not through attributes set in `__init__`.
Tensors that stay on the host only because a process never moves them are
recognised only in a Ray driver (below); a DataLoader's batch read before it
is moved to the device is taken for a device tensor by explicit syncs.

What a value is for is read from where the sync stands: a test, a
comparison, `int()`, `range()`, an index or slice bound, a keyword argument
named like a size (`max_seqlen=`), or an assignment to a name of a size or a
position (`max_len = ...`, `seq_start = ...`). A value assigned to a name
that an `if`, `while` or `assert` among the next 8 statements of the same
block tests (`loss_value = loss.item()`, then `if not
math.isfinite(loss_value):`) decides too; one tested further away, or only
logged, is read as logged: high.

A Ray driver is a class decorated `@ray.remote(...)` with arguments and no
`num_gpus` (or `num_gpus=0`), or a class or function that calls `ray.get(...)`:
there `.item()`, `.tolist()`, masks and `nonzero` are not reported on values
not known to be device tensors. A bare `@ray.remote` says nothing (GPUs may
come with `.options(num_gpus=...)`). A loop of a module that imports Ray and
steps only through other objects' hot-named methods (`self.critic.train_step(batch)`)
is a driver loop, low. A function reached from a driver loop and from a
training loop is judged by the first that reaches it.
"""
    tiers = """\
Each finding records what the sync reads (**source**) and why its code runs
every step (**reach**); the tier is the weaker of the two.

- **source**: `value-read` (high): a value read to log, keep or return
  (`total += loss.item()`, `print(f"{loss}")`); `synchronize` (medium):
  `torch.cuda.synchronize()`, often a timing measurement; `host-decision`
  (low): the value decides host control flow or a size: a truth test, a
  comparison, `int()`, an index or slice bound, `range()`, a keyword named
  like a size, an assignment to a name of a size or position, and
  data-dependent shapes (`nonzero`, `x[mask]`). Such syncs are often ones the
  program needs (a stop check, `max_seqlen` for a kernel, split sizes), which
  a reader of the line alone cannot tell from avoidable ones.
- **reach**: `training-loop` (high): a step loop that trains (`backward()`,
  an optimizer step, `zero_grad()`, a training-step function);
  `named-function`, `compiled-function`, `marked-function` (high): a function
  named like a training step (`train_step`, `compute_loss` of a `Trainer`),
  compiled, or marked `# ranklint: hot`; `inference-loop`, `module-forward`,
  `inference-function` (medium): a loop that only runs a model, a module's
  forward, or a function named for evaluation or generation
  (`validation_step`, `predict_step`, `generate_step`), where syncs are often
  needed (a stop-token check, token ids to decode); `driver-loop` (low): a
  loop of a Ray program that only dispatches its steps to other objects.

The default run shows avoidable reads in training code; `--confidence
medium` adds forward and inference code and `synchronize()`, `--confidence
low` the host decisions and Ray driver loops.
"""
    valid = (
        """
        def train(model, loader, optimizer, log_every=100):
            for step, batch in enumerate(loader):
                loss = model(batch).mean()
                loss.backward()
                optimizer.step()
                if step % log_every == 0:
                    print(f"step {step} loss {loss.item():.3f}")
            print(f"final loss {loss.item():.3f}")
        """,
        """
        def train(model, loader, optimizer):
            total = 0.0
            for batch in loader:
                loss = model(batch).mean()
                loss.backward()
                optimizer.step()
                total += loss.detach()
                n = len(batch)
                lr = float(optimizer.param_groups[0]["lr"])
            return total.item()
        """,
        """
        def evaluate(values):
            for value in values:
                print(float(value))
        """,
        """
        def train(model, loader, optimizer, steps):
            for step, batch in enumerate(loader):
                loss = model(batch).mean()
                loss.backward()
                optimizer.step()
                if step % 10 != 0:
                    continue
                print(loss.item())
        """,
        """
        def summarize(model, loader):
            preds = []
            for batch in loader:
                preds.append(batch)
            return [p.item() for p in preds]
        """,
        # Once-only code, error paths and an `or` of once-only and periodic
        # tests (pytorch-lightning examples/fabric/image_classifier/train_fabric.py,
        # colossalai coati/quant/llama_gptq/quant.py, torchrec modules/mc_modules.py).
        """
        def train(model, loader, optimizer, loaded_step, log_every=100):
            first_step = True
            for batch_idx, batch in enumerate(loader):
                loss = model(batch).mean()
                assert loss.dim() == 0, f"expected a scalar loss, got {loss}"
                loss.backward()
                optimizer.step()
                if batch_idx == 0 or (batch_idx + 1) % log_every == 0:
                    print(f"loss {loss.item():.3f}")
                if model.step - loaded_step == 1:
                    print(f"first step after resuming: {loss.item():.3f}")
                if first_step:
                    print(f"first loss {loss.item():.3f}")
                    first_step = False
                if not model.initialized:
                    model.scale = float(loss)
                if optimizer.param_groups[0]["lr"] > 1.0:
                    raise ValueError(f"lr too large at loss {loss.item()}")
        """,
        # Reading what a collective just filled: one decision on every rank
        # (NeMo speechlm2/models/duplex_s2s_speech_decoder_model.py,
        # nlp/modules/common/text_generation_utils.py, composer/utils/dist.py).
        """
        import torch
        import torch.distributed as dist


        def train(model, loader, optimizer):
            for batch in loader:
                length = torch.tensor([batch.shape[1]], device=batch.device)
                dist.all_reduce(length, op=dist.ReduceOp.MAX)
                longest = int(length.item())
                loss = model(batch, longest).mean()
                loss.backward()
                optimizer.step()
                stop = (loss > 10).int()
                dist.all_reduce(stop)
                if stop.item() > 0:
                    break
                info = torch.empty(2, device=batch.device)
                dist.broadcast(info, src=0)
                temperature = float(info[0].item())
        """,
        # Values on the host, scalar mask fills, sizes an API needs on the host,
        # moving a model (NeMo asr/parts/utils/offline_clustering.py,
        # vlm/llama4/model/base.py, colossalai shardformer/modeling/deepseek.py,
        # speechlm/models/speech_to_text_llm_model.py,
        # examples/nlp/language_modeling/mamba_change_num_partition.py).
        """
        import numpy as np
        import torch


        class Head(torch.nn.Module):
            def forward(self, x: torch.Tensor, counts: torch.Tensor, votes, tokenizer):
                mode = torch.mode(torch.tensor(votes))[0].item()
                table = torch.from_numpy(np.ones(4))
                first = table[0].item()
                x[x < 0] = 0
                parts = x.split(counts.tolist())
                text = tokenizer.decode(counts.tolist())
                self.encoder = self.encoder.to("cpu")
                return parts, mode, first, text
        """,
    )
    invalid = (
        """
        def train(model, loader, optimizer):
            for batch in loader:
                loss = model(batch).mean()
                loss.backward()
                optimizer.step()
                print(loss.item())  # expect: RNK201
        """,
        """
        import torch


        def log_metrics(loss):
            print(loss.item())  # expect: RNK201


        def train(model, loader, optimizer):
            for batch in loader:
                loss = model(batch).mean()
                loss.backward()
                optimizer.step()
                log_metrics(loss)
        """,
        """
        import torch
        import torch.nn.functional as F


        def train_step(model, batch, target, optimizer):
            loss = F.cross_entropy(model(batch), target)
            loss.backward()
            optimizer.step()
            if loss > 10:  # expect: RNK201(low)
                print("diverging")
            return float(loss)  # expect: RNK201
        """,
        """
        import torch


        class Head(torch.nn.Module):
            def forward(self, x: torch.Tensor):
                keep = x[x > 0]  # expect: RNK201(low)
                idx = torch.nonzero(x)  # expect: RNK201(low)
                return keep.to("cpu"), idx  # expect: RNK201(medium)
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            torch.cuda.synchronize()  # expect: RNK201(medium)
            return x.cpu().numpy()  # expect: RNK201
        """,
        """
        def rollout(policy, env, obs):  # ranklint: hot
            value = policy(obs)
            print(f"value={value}")  # expect: RNK201
            print("value %f" % value)  # expect: RNK201
            return "{}".format(value)  # expect: RNK201
        """,
        """
        def train(model, loader, optimizer):
            step = 0
            while step < 1000:
                for batch in loader:
                    loss = model(batch).mean()
                    loss.backward()
                    optimizer.step()
                    ok = bool(loss < 1) and not loss.isnan()  # expect: RNK201(low), RNK201(low)
                    step += 1
        """,
    )

    @classmethod
    def check_project(cls, project: ProjectFacts) -> Iterable[ProjectFinding]:
        return hot_cost_findings(project, frozenset(_SYNCS), _describe, _evidence)


def _evidence(hot: HotCost) -> Evidence:
    return Evidence(source=_source_link(hot.cost), reach=_reach_link(hot.region))


def _source_link(cost: HostCost) -> Link:
    """What the sync reads, and whether its value decides something on the host."""
    shown = f"`{cost.text}`"
    if cost.decides:
        return Link("host-decision", f"{shown} decides host control flow or a size", LOW)
    if cost.kind is CostKind.SYNCHRONIZE:
        return Link("synchronize", f"{shown} (often a timing measurement)", MEDIUM)
    return Link("value-read", f"{shown} reads a value to log, keep or return", HIGH)


def _reach_link(region: HotRegion) -> Link:
    """Why the code runs every step: a training step is sure, a forward or inference
    step often needs its syncs (a stop-token check, a kernel's `max_seqlen`)."""
    shown = f"`{region.function}`"
    through = f", through {len(region.chain)} call(s)" if region.chain else ""
    reason = region.reason
    if reason is None:
        if region.driver:
            return Link(
                "driver-loop",
                f"a loop of {shown} in a Ray program dispatches its steps (`{region.marker}`): "
                f"its values are results on the host{through}",
                LOW,
            )
        if region.training:
            return Link(
                "training-loop", f"a step loop of {shown} calls `{region.marker}`{through}", HIGH
            )
        return Link(
            "inference-loop", f"a loop of {shown} runs a model: `{region.marker}`{through}", MEDIUM
        )
    if reason.kind is HotKind.MODULE_FORWARD:
        return Link("module-forward", f"{shown} is a module's forward{through}", MEDIUM)
    if reason.kind is HotKind.NAMED and not trains(reason, region.function):
        return Link("inference-function", f"{shown} evaluates or generates{through}", MEDIUM)
    return Link(f"{reason.kind.value}-function", f"{shown}{through}", HIGH)


def _describe(cost: HostCost) -> Description:
    text, advice = _SYNCS[cost.kind]
    return cost.text, text.format(cost.text), advice
