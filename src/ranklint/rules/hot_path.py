"""Hot-path rules (RNK2xx): per-step costs in training and inference loops.

During the walk these rules only *record* candidates (a sync, a Python loop
over a tensor, an allocation without a device) with
:meth:`~ranklint.analysis.summary.FactsBuilder.hot_use`; the project phase
(:mod:`ranklint.analysis.hot_path`) reports the ones in hot code, through
helpers in other files too. See :mod:`ranklint.analysis.hot` for what is hot
and :mod:`ranklint.analysis.tensors` for what is known to be a tensor.
"""

from __future__ import annotations

from typing import ClassVar

import libcst as cst

from ranklint.analysis.names import dotted_name
from ranklint.analysis.tensors import HOST_FACTORIES, Kind, TensorTypes, short_text
from ranklint.findings import Severity
from ranklint.rules.base import Rule

_SYNC_ADVICE = (
    "keep the value on the device (accumulate `x.detach()`) and read it on the host once "
    "per log interval (`if step % log_every == 0:`)"
)
_SHAPE_ADVICE = (
    "use fixed-size operations instead (`torch.where(mask, x, 0)`, `masked_fill`, "
    "multiplying by the mask), or pass the output size where the API takes one"
)
_COPY_METHODS = frozenset({"item", "tolist", "cpu", "numpy"})
_DATA_DEPENDENT = frozenset({"torch.nonzero", "torch.masked_select", "torch.unique"})
_CONVERSIONS = frozenset({"float", "int", "bool", "complex"})
_FORMATTERS = frozenset({"str", "repr", "format", "print"})
# The host factories that RNK203 checks (`from_numpy` has no `device=`).
_FACTORIES = HOST_FACTORIES - {"from_numpy"}


class _HotRule(Rule):
    """Shared recording of hot-path candidates; decided in the project phase."""

    project: ClassVar[bool] = True

    def record(self, node: cst.CSTNode, label: str, text: str, advice: str) -> None:
        ctx = self.ctx
        if ctx.import_time and not ctx.functions and ctx.loop_depth == 0:
            return  # module-level code outside loops runs once
        ctx.facts.hot_use(
            self.code, node, label, text, advice, (ctx.top_index, ctx.statement, ctx.top_statement)
        )

    def text(self, node: cst.CSTNode, limit: int = 40) -> str:
        return short_text(self.ctx.module, node, limit)

    def is_builtin_call(self, node: cst.Call, names: frozenset[str]) -> str | None:
        """The builtin's name when ``node`` calls one of ``names`` (not shadowed)."""
        func = node.func
        if (
            isinstance(func, cst.Name)
            and func.value in names
            and not self.ctx.names.is_bound(func.value)
        ):
            return func.value
        return None


class HostSyncInHotPath(_HotRule):
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

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        tensors = self.ctx.tensors
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if (
                (method in _COPY_METHODS and not node.args)
                or (method == "to" and _is_cpu_move(node))
            ) and not (tensors.is_host(func.value) or _is_copy(func.value)):
                self._copy(node)
            elif method == "synchronize":
                self.record(
                    node,
                    self.text(node),
                    f"`{self.text(node)}` blocks the host until the device has finished "
                    f"all queued work",
                    "synchronize only where a measurement needs it, once per log interval, "
                    "or time with CUDA events",
                )
            elif method in ("nonzero", "masked_select", "unique") and (
                self.ctx.names.resolve(func) in _DATA_DEPENDENT
                or (method == "nonzero" and self.ctx.names.resolve(func) is None)
            ):
                self._data_dependent(node)
            elif (
                method == "format"
                and isinstance(func.value, cst.SimpleString)
                and any(tensors.is_tensor(arg.value) for arg in node.args)
            ):
                self._formatted(node)
            return
        conversion = self.is_builtin_call(node, _CONVERSIONS)
        if conversion is not None and node.args and tensors.is_tensor(node.args[0].value):
            self.record(
                node,
                self.text(node),
                f"`{self.text(node)}` converts a tensor to a Python number: the host waits "
                f"for the device",
                _SYNC_ADVICE,
            )
            return
        formatter = self.is_builtin_call(node, _FORMATTERS)
        if formatter is not None and any(
            not arg.keyword and tensors.is_tensor(arg.value) for arg in node.args
        ):
            self._formatted(node)

    def _copy(self, node: cst.Call) -> None:
        self.record(
            node,
            self.text(node),
            f"`{self.text(node)}` copies a tensor to the host and waits for the device to "
            f"finish all queued work",
            _SYNC_ADVICE,
        )

    def _data_dependent(self, node: cst.CSTNode) -> None:
        self.record(
            node,
            self.text(node),
            f"`{self.text(node)}` has an output size that depends on the data: the host "
            f"waits for the device to learn it",
            _SHAPE_ADVICE,
        )

    def _formatted(self, node: cst.CSTNode) -> None:
        self.record(
            node,
            self.text(node),
            f"`{self.text(node)}` formats a tensor's value on the host: the host waits for "
            f"the device",
            _SYNC_ADVICE,
        )

    def _truth(self, test: cst.BaseExpression) -> None:
        if self.ctx.tensors.is_tensor(test):
            self.record(
                test,
                self.text(test),
                f"the test `{self.text(test)}` reads a tensor's value on the host: the host "
                f"waits for the device",
                "keep the decision on the device (`torch.where`, masking) or check it once "
                "per log interval",
            )

    def visit_If(self, node: cst.If) -> None:
        self._truth(node.test)

    def visit_While(self, node: cst.While) -> None:
        self._truth(node.test)

    def visit_Assert(self, node: cst.Assert) -> None:
        self._truth(node.test)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._truth(node.test)

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        for operand in (node.left, node.right):
            if not isinstance(operand, cst.BooleanOperation):
                self._truth(operand)

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        if isinstance(node.operator, cst.Not):
            self._truth(node.expression)

    def visit_FormattedStringExpression(self, node: cst.FormattedStringExpression) -> None:
        if self.ctx.tensors.is_tensor(node.expression):
            self._formatted(node.expression)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if not (
            isinstance(node.operator, cst.Modulo)
            and isinstance(node.left, (cst.SimpleString, cst.ConcatenatedString))
        ):
            return
        right = node.right
        values = [e.value for e in right.elements] if isinstance(right, cst.Tuple) else [right]
        if any(self.ctx.tensors.is_tensor(value) for value in values):
            self._formatted(node)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        tensors = self.ctx.tensors
        for element in node.slice:
            index = element.slice
            if isinstance(index, cst.Index) and tensors.kind(index.value) is Kind.BOOL:
                self._data_dependent(node)
                return


def _is_copy(node: cst.BaseExpression) -> bool:
    """``x.cpu()`` / ``x.to("cpu")``: what is called on its result is on the host already."""
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and (
            (node.func.attr.value in _COPY_METHODS and not node.args)
            or (node.func.attr.value == "to" and _is_cpu_move(node))
        )
    )


def _is_cpu_move(node: cst.Call) -> bool:
    """``x.to("cpu")``, ``x.to(device="cpu")``, ``x.to(torch.device("cpu"))``."""
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value != "device":
            continue
        value = arg.value
        if isinstance(value, cst.Call) and dotted_name(value.func) in (
            "torch.device",
            "device",
        ):
            value = value.args[0].value if value.args else value
        if isinstance(value, cst.SimpleString) and value.value.strip("'\"").startswith("cpu"):
            return True
        if arg.keyword is None:
            return False  # only the first positional argument can be the device
    return False


class PythonLoopOverTensor(_HotRule):
    code = "RNK202"
    name = "python-loop-over-tensor"
    severity = Severity.WARNING
    summary = "Hot code iterates a tensor element by element in Python"
    what = """\
Reports, in hot code (see RNK201), Python iteration over a tensor: `for x in t`,
comprehensions over a tensor, and `for i in range(len(t))` /
`range(t.shape[0])` / `range(t.size(0))` loops whose body indexes `t[i]`.
"""
    why = """\
Each element is a separate tiny tensor: one kernel launch or host round trip per
element, and usually a sync when the element is tested or converted. A loop of
1000 elements per step turns a microsecond of device work into milliseconds of
host overhead; vectorised tensor operations do the same work in one launch.
"""
    limits = """\
Only tensors known as such (see RNK201) are reported; iterating `.tolist()` is
reported by RNK201 as a copy. Loops over a tensor's first dimension that do not
index the tensor by the loop variable are not reported.
"""
    valid = (
        """
        def train(model, loader, optimizer):
            for batch in loader:
                loss = model(batch).mean()
                loss.backward()
                optimizer.step()
                for group in optimizer.param_groups:
                    group["lr"] *= 0.99
        """,
        """
        import torch


        def train_step(model, batch: torch.Tensor):
            out = model(batch)
            return out.sum(dim=1)
        """,
    )
    invalid = (
        """
        import torch


        def train_step(model, batch: torch.Tensor):
            out = model(batch)
            scores = [s * 2 for s in out]  # expect: RNK202
            for row in out:  # expect: RNK202
                scores.append(row)
            return scores
        """,
        """
        def train(model, loader, optimizer):
            for batch in loader:
                logits = model(batch)
                loss = logits.mean()
                loss.backward()
                optimizer.step()
                for i in range(logits.shape[0]):  # expect: RNK202
                    logits[i] = logits[i] * 2
        """,
    )

    def visit_For(self, node: cst.For) -> None:
        tensors = self.ctx.tensors
        if tensors.is_any_tensor(node.iter):
            self._report_loop(node.iter, self.text(node.iter))
            return
        indexed = _range_over(node.iter, tensors)
        if (
            indexed is not None
            and isinstance(node.target, cst.Name)
            and _indexes(node.body, indexed, node.target.value)
        ):
            self._report_loop(node.iter, self.text(node.iter))

    def visit_CompFor(self, node: cst.CompFor) -> None:
        if self.ctx.tensors.is_any_tensor(node.iter):
            self._report_loop(node.iter, self.text(node.iter))

    def _report_loop(self, node: cst.CSTNode, text: str) -> None:
        self.record(
            node,
            f"for ... in {text}",
            f"the loop over `{text}` runs Python code once per tensor element",
            "write it as one tensor operation over the whole tensor (broadcasting, "
            "`torch.where`, `gather`/`scatter`, a reduction)",
        )


def _range_over(node: cst.BaseExpression, tensors: TensorTypes) -> str | None:
    """The tensor name in ``range(len(t))`` / ``range(t.shape[0])`` / ``range(t.size(0))``."""
    if not (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value == "range"
        and len(node.args) == 1
    ):
        return None
    bound = node.args[0].value
    subject: cst.BaseExpression | None = None
    if isinstance(bound, cst.Call):
        func = bound.func
        if isinstance(func, cst.Name) and func.value == "len" and bound.args:
            subject = bound.args[0].value
        elif isinstance(func, cst.Attribute) and func.attr.value == "size":
            subject = func.value
    elif (
        isinstance(bound, cst.Subscript)
        and isinstance(bound.value, cst.Attribute)
        and bound.value.attr.value == "shape"
    ):
        subject = bound.value.value
    if isinstance(subject, cst.Name) and tensors.is_any_tensor(subject):
        return subject.value
    return None


def _indexes(body: cst.CSTNode, tensor: str, index: str) -> bool:
    """Whether ``body`` contains ``tensor[index]`` (or ``tensor[index, ...]``)."""
    stack: list[cst.CSTNode] = [body]
    seen = 0
    while stack and seen < 2000:
        node = stack.pop()
        seen += 1
        if (
            isinstance(node, cst.Subscript)
            and isinstance(node.value, cst.Name)
            and node.value.value == tensor
            and node.slice
            and isinstance(node.slice[0].slice, cst.Index)
            and isinstance(node.slice[0].slice.value, cst.Name)
            and node.slice[0].slice.value.value == index
        ):
            return True
        stack.extend(node.children)
    return False


class ImplicitDeviceOrDtype(_HotRule):
    code = "RNK203"
    name = "implicit-device-or-dtype"
    severity = Severity.INFO
    default_enabled = False
    summary = "A tensor factory in hot code has no explicit device (or float dtype)"
    what = """\
Reports, in hot code (see RNK201), `torch.zeros/ones/empty/full/rand/randn/
randint/arange/linspace/tensor/as_tensor` calls without `device=`, and
`torch.tensor`/`torch.as_tensor` of float literals without `dtype=`. The
`*_like` factories take the device of their argument and are not reported.
Off by default (`extend-select = ["RNK203"]`): many such tensors are small or
meant for the CPU.
"""
    why = """\
Without `device=`, the tensor is allocated on the CPU and copied to the
accelerator when it meets a device tensor: a host allocation and a transfer
every step, and with pinned memory absent, a synchronous one. Float data
without `dtype=` becomes float32 whatever precision the model computes in, and
costs a cast in every mixed-precision step.
"""
    limits = """\
A factory whose result stays on the CPU on purpose (indices for a CPU sampler)
is reported too: that is why the rule is off by default. `torch.set_default_device`
is not taken into account.
"""
    valid = (
        """
        import torch


        def train_step(model, batch):
            mask = torch.ones(batch.shape, device=batch.device)
            scale = torch.tensor([0.5, 2.0], device=batch.device, dtype=batch.dtype)
            return model(batch * mask) * scale.sum()
        """,
    )
    invalid = (
        """
        import torch


        def train_step(model, batch):
            mask = torch.ones(batch.shape)  # expect: RNK203
            scale = torch.tensor([0.5, 2.0], device=batch.device)  # expect: RNK203
            return model(batch * mask) * scale.sum()
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        last = func.attr.value if isinstance(func, cst.Attribute) else None
        if isinstance(func, cst.Name):
            last = func.value
        if last not in _FACTORIES:
            return
        qualified = self.ctx.names.resolve(func)
        if qualified != f"torch.{last}":
            return
        keywords = {arg.keyword.value for arg in node.args if arg.keyword is not None}
        if any(arg.star == "**" for arg in node.args):
            return
        problems = []
        if "device" not in keywords:
            problems.append("no `device=`: it is allocated on the CPU, then copied to the device")
        if (
            last in ("tensor", "as_tensor")
            and "dtype" not in keywords
            and node.args
            and _has_float_literal(node.args[0].value)
        ):
            problems.append("float data without `dtype=`: it is float32 whatever the model uses")
        if problems:
            text = self.text(node)
            self.record(
                node,
                text,
                f"`{text}` has " + " and ".join(problems),
                "pass `device=` (for example `device=batch.device`) and `dtype=`, or create "
                "the tensor once outside the step",
            )


def _has_float_literal(node: cst.BaseExpression) -> bool:
    stack: list[cst.CSTNode] = [node]
    seen = 0
    while stack and seen < 200:
        current = stack.pop()
        seen += 1
        if isinstance(current, cst.Float):
            return True
        if isinstance(current, (cst.List, cst.Tuple, cst.Element, cst.UnaryOperation)):
            stack.extend(current.children)
    return False
