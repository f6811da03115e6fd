"""RNK201 host-sync-in-hot-path."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from ranklint.analysis.events import CostKind, HostCost
from ranklint.analysis.project import ProjectFacts
from ranklint.findings import Severity
from ranklint.rules.base import ProjectFinding, Rule
from ranklint.rules.hot_path.hot_costs import SYNC_ADVICE, Description, hot_cost_findings

_SHAPE_ADVICE = (
    "use fixed-size operations instead (`torch.where(mask, x, 0)`, `masked_fill`, "
    "multiplying by the mask), or pass the output size where the API takes one"
)
_WAITS = "the host waits for the device"
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
optimizer's or scheduler's `.step()`, `zero_grad()`, or a model forward,
directly or through project functions), a function named in `hot-functions`
(`train_step`, `training_step`, `forward` of an `nn.Module`, ...), one compiled
with `@torch.compile`, one marked `# ranklint: hot` on its `def` line, and every
project function called from hot code, in any file: the message shows the call
chain. Code under `if step % N == 0:` is not hot by default (a deliberate,
amortised sync); set `allow-periodic-sync = false` to report it too.
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
reported. Calls through objects of unknown class (`self.trainer.log(...)`) are
not followed. Exception handlers are not hot. A step loop is recognised by its
markers; a loop that steps only through an opaque callable is not.
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
            if loss > 10:  # expect: RNK201
                print("diverging")
            return float(loss)  # expect: RNK201
        """,
        """
        import torch


        class Head(torch.nn.Module):
            def forward(self, x: torch.Tensor):
                keep = x[x > 0]  # expect: RNK201
                idx = torch.nonzero(x)  # expect: RNK201
                return keep.to("cpu"), idx  # expect: RNK201
        """,
        """
        import torch


        @torch.compile
        def step(x: torch.Tensor):
            torch.cuda.synchronize()  # expect: RNK201
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
                    ok = bool(loss < 1) and not loss.isnan()  # expect: RNK201, RNK201
                    step += 1
        """,
    )

    @classmethod
    def check_project(cls, project: ProjectFacts) -> Iterable[ProjectFinding]:
        return hot_cost_findings(project, frozenset(_SYNCS), _describe)


def _describe(cost: HostCost) -> Description:
    text, advice = _SYNCS[cost.kind]
    return cost.text, text.format(cost.text), advice
