"""RNK112 reduction-semantics."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ranklint.analysis.walk.context import FileContext
from ranklint.analysis.walk.function_nodes import FunctionNodes
from ranklint.findings import Severity
from ranklint.rules.base import PendingFinding, Rule
from ranklint.rules.collectives._reductions import (
    REDUCTION_CALLS,
    Mismatch,
    MismatchKind,
    is_dp_size_getter,
    scan_functions,
)
from ranklint.syntax import placement

# What each kind of mismatch means and how to fix it; `{value}` and `{detail}`
# come from the Mismatch.
_MESSAGES: dict[MismatchKind, str] = {
    MismatchKind.MEAN_SUMMED: (
        "`{value}` is a per-rank mean, all-reduced with SUM and never divided: the result is "
        "the world size W times the mean; pass `op=ReduceOp.AVG` (NCCL) or divide by "
        "`dist.get_world_size()` after the sum"
    ),
    MismatchKind.SUM_AS_MEAN: (
        "`{value}` comes from `{detail}()`, which all-reduces with SUM and does not divide, yet "
        "it feeds an average: the logged value is the world size W times the mean; divide by "
        "`dist.get_world_size()` in `{detail}()`"
    ),
    MismatchKind.LOCAL_LOSS_TIMES_WORLD: (
        "`{value}` is a per-rank mean loss (not divided by a global count), multiplied by the "
        "world size W: DDP/FSDP already average gradients over ranks, so they come out W times "
        "too large; multiply only a term normalised by a global count (tokens, samples "
        "all-reduced over ranks)"
    ),
    MismatchKind.GRAD_OVER_GLOBAL_COUNT: (
        "gradients are divided by `{value}`, a count summed over ranks, after `backward()`; "
        "DDP/FSDP already divided them by the world size W, so they are W times too small; "
        "scale by `world_size / {value}`"
    ),
    MismatchKind.AUTOGRAD_LESS_ALL_REDUCE: (
        "`dist.all_reduce({value})` in a loss has no backward: the sum of the other ranks' "
        "contributions is a constant to autograd, so their part of the gradient is lost (1/W "
        "of it flows); use `torch.distributed.nn.functional.all_reduce`"
    ),
    MismatchKind.RESUMMED_TOTAL: (
        "`{value}` is a running total (`+=` in this method) that this all-reduce replaces by "
        "its SUM over ranks: the next call adds its batch to a total already summed and sums "
        "it again, so earlier batches count W, W², ... times; all-reduce only this call's part "
        "and add it to the total, or reduce the total once when it is read"
    ),
    MismatchKind.ALIASED_IN_PLACE_REDUCE: (
        "`{value}` is also the value of `{detail}` in this dict, and a function of this module "
        "all-reduces every value of such dicts in place: the shared tensor is summed twice "
        "(W² times); store a `.clone()`"
    ),
}


def _message(found: Mismatch) -> str:
    return _MESSAGES[found.kind].format(value=found.value, detail=found.detail)


class ReductionSemantics(Rule):
    code = "RNK112"
    name = "reduction-semantics"
    severity = Severity.WARNING
    summary = "A sum across ranks is used as a mean, or a mean is scaled by the world size twice"
    what = """\
Reports reductions whose sum-versus-mean choice is provably wrong by the
world size W:

- a per-rank mean (`x.mean()`) all-reduced with SUM and never divided;
- the result of a helper of the same module that SUM-all-reduces and does
  not divide, fed to an average meter (`avg_loss.update(...)`);
- a loss that is a per-rank mean (not divided by a count) multiplied by
  `dist.get_world_size()`;
- gradients scaled after `backward()` by 1/(a count all-reduced with SUM)
  with no world-size factor, in a function that does not reduce the
  gradients itself (so a DDP/FSDP wrapper already averaged them);
- `dist.all_reduce` of a value built by matrix products of a loss
  function's inputs (no backward through the collective);
- one tensor stored under two keys of a dict, in a module whose functions
  all-reduce every value of a dict in place;
- a running total kept in an attribute (`self.total += ...`) that the same
  method SUM-all-reduces in place, or copies (`torch.tensor(self.total)`,
  `.clone()`), all-reduces and writes back (`self.total = t.item()`).
"""
    why = """\
DDP, FSDP and ZeRO average gradients over the data-parallel group, and
`all_reduce` without `op` sums. Mixing the two silently scales a metric or a
gradient by W or 1/W: the logged loss grows with the job's size (HRNet#34),
a learning rate tuned on 8 GPUs is wrong on 64 (sparseml#135,
torchtune#2172, transformers#48706), or one rank's share of a contrastive
loss gets all the gradient (lightly#1977). Nothing fails: the run trains,
worse.
"""
    limits = """\
Only what one function (or, for helpers and in-place dict reducers, one
module) shows. Whether a model is wrapped by DDP/FSDP is assumed from the
gradient scaling pattern, not proven; a loss passed in as a parameter, or
normalised by a count of unknown scope, is not judged. Framework metrics that
synchronise themselves (Lightning's `self.log(..., sync_dist=True)`,
torchmetrics) are not modelled, so summing them again is not seen.
"""
    valid = (
        """
        import torch.distributed as dist
        from torch.distributed import ReduceOp


        def epoch_metrics(outputs, world_size):
            avg = outputs.mean()
            dist.all_reduce(avg, op=ReduceOp.SUM)
            return avg / world_size


        def reduce_tensor(inp):
            reduced = inp.clone()
            dist.all_reduce(reduced)
            reduced /= dist.get_world_size()
            return reduced


        def log_step(loss, avg_loss):
            avg_loss.update(reduce_tensor(loss).item())
        """,
        """
        import torch.distributed as dist


        def compute_loss(outputs, num_items_in_batch):
            # Normalised by a global count: the factor undoes DDP's mean.
            ce = outputs.ce_loss_sum / num_items_in_batch
            return ce * dist.get_world_size()


        def train_step(model, batch, loss_fn):
            loss = loss_fn(model(batch["x"]), batch["y"])
            num_tokens = (batch["y"] != -100).sum()
            dist.all_reduce(num_tokens)
            loss.backward()
            world_size = dist.get_world_size()
            for p in model.parameters():
                p.grad.mul_(world_size / num_tokens)
        """,
        """
        import torch
        import torch.distributed as dist


        class BooleanAccuracy:
            def __call__(self, correct):
                # Only this call's part is summed, then added to the total.
                part = correct.sum()
                dist.all_reduce(part)
                self._correct_count += part.item()
        """,
    )
    invalid = (
        """
        import torch
        import torch.distributed as dist


        def test_epoch_end(outputs):
            # https://github.com/Lightning-AI/pytorch-lightning/issues/3713
            avg_acc = torch.stack(outputs).mean()
            dist.all_reduce(avg_acc, op=dist.ReduceOp.SUM)  # expect: RNK112
            return {"test_acc": avg_acc}


        def reduce_tensor(inp):
            reduced = inp.clone()
            dist.all_reduce(reduced)
            return reduced


        def log_step(loss, avg_loss):
            # https://github.com/HRNet/HRNet-Semantic-Segmentation/issues/34
            reduced_loss = reduce_tensor(loss)
            avg_loss.update(reduced_loss.item())  # expect: RNK112
        """,
        """
        import torch.distributed as dist


        def step(model, x, y, loss_fn):
            # https://github.com/neuralmagic/sparseml/pull/135
            loss = loss_fn(model(x), y)
            loss = loss * dist.get_world_size()  # expect: RNK112
            loss.backward()


        def train_step(model, batch, loss_fn):
            # https://github.com/meta-pytorch/torchtune/pull/2172
            loss = loss_fn(model(batch["x"]), batch["y"])
            num_tokens = (batch["y"] != -100).sum()
            dist.all_reduce(num_tokens)
            loss.backward()
            for p in model.parameters():
                p.grad.mul_(1.0 / num_tokens)  # expect: RNK112
        """,
        """
        import torch.distributed as dist


        def barlow_twins_loss(z_a, z_b):
            # https://github.com/lightly-ai/lightly/issues/1977
            c = z_a.T @ z_b
            dist.all_reduce(c)  # expect: RNK112
            return (c - 1).pow(2).sum()


        def accuracy(correct, total):
            # https://github.com/vllm-project/speculators/pull/759
            return {"full_num": correct, "cond_num": correct, "den": total}  # expect: RNK112


        def reduce_metrics(metrics):
            for v in metrics.values():
                dist.all_reduce(v)
            return metrics
        """,
        """
        import torch
        import torch.distributed as dist


        class BooleanAccuracy:
            def __call__(self, correct):
                # https://github.com/allenai/allennlp/pull/4568: the running total is
                # summed over ranks again at every call.
                self._correct_count += correct.sum()
                total = torch.tensor(self._correct_count)
                dist.all_reduce(total)  # expect: RNK112
                self._correct_count = total.item()
        """,
    )

    def __init__(self, ctx: FileContext, sink: Callable[[PendingFinding], None]) -> None:
        super().__init__(ctx, sink)
        # (A gate that saves the reading: without a reduction, it finds nothing;
        # and `nested=None` reads as False; not mutated.)
        self._relevant = False  # pragma: no mutate
        self._functions = FunctionNodes(ctx, nested=False)  # pragma: no mutate

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.enter(node)

    def visit_Call(self, node: cst.Call) -> None:
        # (The gate again: `or` only opens it sooner; not mutated.)
        if not self._relevant and (
            self.ctx.resolve(node.func) in REDUCTION_CALLS or is_dp_size_getter(node)
        ):  # pragma: no mutate
            self._relevant = True
        self._functions.add(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        self._functions.add(node)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._functions.add(node)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self._functions.add(node)

    def visit_Dict(self, node: cst.Dict) -> None:
        self._functions.add(node)

    def visit_For(self, node: cst.For) -> None:
        self._functions.add(node)

    def visit_Return(self, node: cst.Return) -> None:
        self._functions.add(node)

    def leave_Module(self, node: cst.Module) -> None:
        # Read once the walk is over, and only where a reduction or the world size is used.
        if not self._relevant:
            return
        functions = self._functions
        read = ((f, functions.nodes(f)) for f in functions.functions)
        for found in scan_functions(read, self.ctx.resolve):
            self.report(found.node, _message(found), where=placement(node, found.node))
