"""Reduction semantics: where a sum across ranks is used as a mean, or a mean is scaled twice.

DDP, FSDP and ZeRO *average* gradients over the data-parallel group; an
``all_reduce`` without ``op`` *sums*. Code that mixes the two is off by the
world size W. :func:`scan_functions` reads the functions of one module (the
nodes of :data:`NODE_KINDS` the walk passed in each) and returns the places
where the mix-up is visible, each as a :class:`Mismatch`:

- ``mean-summed``: a per-rank mean (``x.mean()``) all-reduced with SUM and
  never divided afterwards: W times the mean;
- ``sum-as-mean``: the result of a same-module helper that returns a
  SUM-all-reduced, undivided tensor, fed to an average meter
  (``avg_loss.update(reduce_tensor(loss).item())``);
- ``local-loss-times-world``: a loss that is a *local* mean (not divided by a
  count) multiplied by the world size: the wrapper's mean of gradients is
  then W times too large;
- ``grad-over-global-count``: gradients scaled after ``backward()`` by
  1/(an all-reduced count) with no world-size factor, while the wrapper has
  already averaged them: 1/W too small;
- ``autograd-less-all-reduce``: ``dist.all_reduce`` (which has no backward)
  of a value computed by matrix products of a loss function's inputs: the
  other ranks' contributions get no gradient;
- ``aliased-in-place-reduce``: one tensor stored under two keys of a dict
  whose values a function of the module all-reduces in place: it is reduced
  twice.
- ``resummed-total``: a running total kept in an attribute (``self.total +=
  batch``) that the same method replaces by its SUM all-reduce (in place, or
  through a copy written back): the next call adds to a total already summed
  over the ranks and sums it again.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import libcst as cst

from ranklint.analysis.walk.catalog import torch_distributed
from ranklint.analysis.walk.definitions import self_attribute
from ranklint.analysis.walk.dist_state import walk_code
from ranklint.analysis.walk.names import last_name
from ranklint.syntax import reads_name, source_text

Resolve = Callable[[cst.BaseExpression], "str | None"]

_ALL_REDUCE = torch_distributed("all_reduce")
_WORLD_SIZE = torch_distributed("get_world_size")
# A getter of the data-parallel size by its name (`get_data_parallel_world_size()`,
# `self._get_dp_group_size(...)`, `get_dp_size()`): the ranks DDP or FSDP average over.
_DP_SIZE_GETTER = re.compile(r"^_?(get_)?(dp|data_parallel)(_group)?(_world)?_size$")
# Calls without which no mismatch can exist in a module.
REDUCTION_CALLS = _ALL_REDUCE | _WORLD_SIZE
_MATMUL = frozenset({"matmul", "mm", "bmm", "einsum"})
_METER_WORDS = ("avg", "ave", "mean", "meter", "average")


class MismatchKind(enum.Enum):
    """Which reduction mix-up a :class:`Mismatch` is."""

    MEAN_SUMMED = "mean-summed"
    SUM_AS_MEAN = "sum-as-mean"
    LOCAL_LOSS_TIMES_WORLD = "local-loss-times-world"
    GRAD_OVER_GLOBAL_COUNT = "grad-over-global-count"
    AUTOGRAD_LESS_ALL_REDUCE = "autograd-less-all-reduce"
    ALIASED_IN_PLACE_REDUCE = "aliased-in-place-reduce"
    RESUMMED_TOTAL = "resummed-total"


@dataclass(frozen=True)
class Mismatch:
    """One reduction mix-up: its kind, the node to report and the values involved."""

    kind: MismatchKind
    node: cst.CSTNode
    value: str
    detail: str = ""


def is_dp_size_getter(node: cst.Call) -> bool:
    """A call of a project's data-parallel size getter, by its name."""
    return _DP_SIZE_GETTER.match(last_name(node.func) or "") is not None


def _name(node: cst.BaseExpression) -> str | None:
    return node.value if isinstance(node, cst.Name) else None


def _reduce_op(call: cst.Call) -> str:
    """``SUM``, ``AVG``, ... of an all_reduce call (``SUM`` when no op is given)."""
    for index, arg in enumerate(call.args):
        if (arg.keyword is not None and arg.keyword.value == "op") or (
            arg.keyword is None and index == 1
        ):
            return last_name(arg.value) or "?"
    return "SUM"


# The nodes a function's reading needs, as the walk passes them in its body.
NODE_KINDS: tuple[type[cst.CSTNode], ...] = (
    cst.Assign,
    cst.AugAssign,
    cst.BinaryOperation,
    cst.Call,
    cst.Dict,
    cst.For,
    cst.Return,
)


class _Function:
    """What one function does with reductions, read in walk order."""

    def __init__(
        self, function: cst.FunctionDef, nodes: Sequence[cst.CSTNode], resolve: Resolve
    ) -> None:
        self.function = function
        self.resolve = resolve
        self.nodes = nodes
        self.assigned: dict[str, list[cst.BaseExpression]] = {}
        for node in self.nodes:
            if isinstance(node, cst.Assign):
                for target in node.targets:
                    name = _name(target.target)
                    if name is not None:
                        self.assigned.setdefault(name, []).append(node.value)
            elif isinstance(node, cst.AugAssign):
                name = _name(node.target)
                if name is not None:
                    operation = cst.BinaryOperation(
                        left=node.target,
                        operator=_binary_of(node.operator),
                        right=node.value,
                    )
                    self.assigned.setdefault(name, []).append(operation)

    def defining(self, name: str) -> list[cst.BaseExpression]:
        """The values ``name`` is given, except updates of itself (``loss = loss * 2``)."""
        return [v for v in self.assigned.get(name, []) if not reads_name(v, name)]

    def all_reduces(self) -> Iterator[tuple[cst.Call, str, cst.BaseExpression]]:
        """``(call, op, reduced expression)`` of each ``dist.all_reduce`` of the function."""
        for node in self.nodes:
            if isinstance(node, cst.Call) and node.args and self.resolve(node.func) in _ALL_REDUCE:
                yield node, _reduce_op(node), node.args[0].value

    def is_world_size(self, node: cst.BaseExpression, depth: int = 0) -> bool:
        if isinstance(node, cst.Call):
            if is_dp_size_getter(node):
                return True
            return self.resolve(node.func) in _WORLD_SIZE and not node.args
        name = _name(node)
        if name is None or depth > 4:
            return False
        values = self.assigned.get(name, [])
        return bool(values) and all(self.is_world_size(v, depth + 1) for v in values)

    def mentions_world_size(self, node: cst.CSTNode) -> bool:
        for current in walk_code(node):
            if isinstance(current, (cst.Name, cst.Call)) and self.is_world_size(current):
                return True
            if isinstance(current, cst.Name) and "world" in current.value.lower():
                return True
        return False

    def divided_after(self, name: str, call: cst.Call) -> bool:
        """Whether ``name`` is divided (or scaled) anywhere after ``call``."""
        seen = False
        for node in self.nodes:
            if node is call:
                seen = True
                continue
            if not seen:
                continue
            if _scales(node, name):
                return True
        return False

    def normalised(self, node: cst.BaseExpression, depth: int = 0) -> bool | None:
        """Whether a loss value is divided by a count; ``None`` when it cannot be told."""
        if depth > 6:
            return None
        if isinstance(node, cst.BinaryOperation):
            if isinstance(node.operator, (cst.Divide, cst.FloorDivide)):
                return not isinstance(node.right, (cst.Integer, cst.Float))
            if isinstance(node.operator, cst.Add | cst.Subtract):
                left = self.normalised(node.left, depth + 1)
                right = self.normalised(node.right, depth + 1)
                if left is None or right is None:
                    return None
                return left and right
            if isinstance(node.operator, cst.Multiply):
                if isinstance(node.left, (cst.Integer, cst.Float)):
                    return self.normalised(node.right, depth + 1)  # `0.01 * aux_loss`
                if isinstance(node.right, (cst.Integer, cst.Float)):
                    return self.normalised(node.left, depth + 1)
                left = self.normalised(node.left, depth + 1)
                right = self.normalised(node.right, depth + 1)
                if left or right:
                    return True
                return None if left is None or right is None else False
            return None
        name = _name(node)
        if name is not None:
            values = self.defining(name)
            if not values:
                return None  # a parameter: what the caller passed
            verdicts = [self.normalised(v, depth + 1) for v in values]
            if any(v is None for v in verdicts):
                return None
            return any(verdicts)
        if isinstance(node, cst.Call | cst.Attribute | cst.Subscript):
            return False  # `loss_fn(...)`, `outputs.loss`: a per-rank mean
        return None


_SCALING_METHODS = frozenset({"div_", "div", "mul_", "mul", "true_divide"})
_SCALING_FUNCTIONS = frozenset({"div", "true_divide", "mul"})


def _scales(node: cst.CSTNode, name: str) -> bool:
    """Whether ``node`` divides or multiplies ``name`` (``x / n``, ``x /= n``, ``x.div_(n)``)."""
    if isinstance(node, cst.BinaryOperation):
        scaling = isinstance(node.operator, (cst.Divide, cst.FloorDivide, cst.Multiply))
        return scaling and (reads_name(node.left, name) or reads_name(node.right, name))
    if isinstance(node, cst.AugAssign):
        return _name(node.target) == name
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    if isinstance(func, cst.Attribute) and _name(func.value) == name:
        return func.attr.value in _SCALING_METHODS
    passed = any(_name(arg.value) == name for arg in node.args)
    return passed and (last_name(func) or "") in _SCALING_FUNCTIONS


def _binary_of(operator: cst.BaseAugOp) -> cst.BaseBinaryOp:
    table: dict[type[cst.BaseAugOp], cst.BaseBinaryOp] = {
        cst.AddAssign: cst.Add(),
        cst.SubtractAssign: cst.Subtract(),
        cst.MultiplyAssign: cst.Multiply(),
        cst.DivideAssign: cst.Divide(),
    }
    return table.get(type(operator), cst.Power())


def scan_functions(
    functions_nodes: Iterable[tuple[cst.FunctionDef, Sequence[cst.CSTNode]]], resolve: Resolve
) -> list[Mismatch]:
    """Every reduction mix-up visible in a module's functions, given with their nodes."""
    functions = [_Function(f, nodes, resolve) for f, nodes in functions_nodes]
    found: list[Mismatch] = []
    summed_helpers = {
        f.function.name.value for f in functions if _returns_undivided_sum(f) is not None
    }
    in_place_reducers = any(_reduces_dict_values(f) for f in functions)
    for function in functions:
        found += _mean_summed(function)
        found += _sum_as_mean(function, summed_helpers)
        found += _local_loss_times_world(function)
        found += _grad_over_global_count(function)
        found += _autograd_less(function)
        if in_place_reducers:
            found += _aliased_values(function)
        found += _resummed_totals(function)
    return found


def _resummed_totals(function: _Function) -> Iterator[Mismatch]:
    """``self.total += batch`` and, in the same method, ``dist.all_reduce(self.total)``
    or ``t = torch.tensor(self.total); dist.all_reduce(t); self.total = t.item()``."""
    accumulated = {
        attribute
        for node in function.nodes
        if isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.AddAssign)
        for attribute in (self_attribute(node.target),)
        if attribute is not None
    }
    if not accumulated:
        return
    for call, op, reduced in function.all_reduces():
        if op != "SUM":
            continue
        attribute = self_attribute(reduced)
        if attribute in accumulated:
            yield Mismatch(MismatchKind.RESUMMED_TOTAL, call, f"self.{attribute}")
            continue
        name = _name(reduced)
        values = [] if name is None else function.defining(name)
        copied = _copied_attribute(values[0]) if len(values) == 1 else None
        if (
            name is not None
            and copied in accumulated
            and _written_back(function, call, name, copied)
        ):
            yield Mismatch(MismatchKind.RESUMMED_TOTAL, call, f"self.{copied}")


# Calls that copy a value into a tensor, or a tensor into another one.
_COPIES = frozenset({"tensor", "as_tensor", "clone", "detach", "to", "cuda", "float", "double"})


def _copied_attribute(node: cst.BaseExpression, depth: int = 0) -> str | None:
    """``total`` where ``node`` copies ``self.total`` (``torch.tensor(self.total)``,
    ``self.total.clone()``, ``self.total.detach().to(device)``); None otherwise."""
    attribute = self_attribute(node)
    if attribute is not None or depth > 4 or not isinstance(node, cst.Call):
        return attribute
    if last_name(node.func) not in _COPIES:
        return None
    func = node.func
    if (
        isinstance(func, cst.Attribute)
        and self_attribute(func) is None
        and (func.attr.value not in ("tensor", "as_tensor"))
    ):
        return _copied_attribute(func.value, depth + 1)  # `self.total.clone()`
    return _copied_attribute(node.args[0].value, depth + 1) if node.args else None


def _written_back(function: _Function, call: cst.Call, name: str, attribute: str) -> bool:
    """Whether ``self.<attribute> = ...name...`` follows ``call``."""
    seen = False
    for node in function.nodes:
        seen = seen or node is call
        if (
            seen
            and isinstance(node, cst.Assign)
            and reads_name(node.value, name)
            and any(self_attribute(target.target) == attribute for target in node.targets)
        ):
            return True
    return False


def _mean_summed(function: _Function) -> Iterator[Mismatch]:
    for call, op, reduced in function.all_reduces():
        name = _name(reduced)
        if op != "SUM" or name is None:
            continue
        values = function.defining(name)
        if len(values) != 1 or not _is_mean(values[0]):
            continue
        if not function.divided_after(name, call):
            yield Mismatch(MismatchKind.MEAN_SUMMED, call, name)


def _is_mean(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Call) and last_name(node.func) == "mean"


def _returns_undivided_sum(function: _Function) -> str | None:
    """The name a helper returns after SUM-all-reducing it, never divided."""
    returned = {
        _name(node.value)
        for node in function.nodes
        if isinstance(node, cst.Return) and node.value is not None
    }
    for call, op, reduced in function.all_reduces():
        name = _name(reduced)
        if op == "SUM" and name in returned and not function.divided_after(name, call):
            return name
    return None


def _sum_as_mean(function: _Function, helpers: set[str]) -> Iterator[Mismatch]:
    """``reduced = reduce_tensor(loss)`` then ``avg_meter.update(reduced.item())``."""
    if not helpers:
        return
    sums: dict[str, str] = {}
    for name, values in function.assigned.items():
        if len(values) == 1 and isinstance(values[0], cst.Call):
            callee = _name(values[0].func)
            if callee in helpers:
                sums[name] = callee
    if not sums:
        return
    for node in function.nodes:
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
            continue
        receiver = (last_name(node.func.value) or "").lower()
        if node.func.attr.value != "update" or not any(w in receiver for w in _METER_WORDS):
            continue
        for arg in node.args:
            used = {_name(n) for n in walk_code(arg.value) if isinstance(n, cst.Name)}
            for name in used & set(sums):
                if not function.divided_after(name, node) and not _scaled_in(arg.value, name):
                    yield Mismatch(MismatchKind.SUM_AS_MEAN, node, name, sums[name])


def _scaled_in(node: cst.BaseExpression, name: str) -> bool:
    return any(
        isinstance(n, cst.BinaryOperation)
        and isinstance(n.operator, cst.Divide)
        and name in {_name(n.left)}
        for n in walk_code(node)
    )


def _local_loss_times_world(function: _Function) -> Iterator[Mismatch]:
    """``loss = loss_fn(...)`` then ``loss * dist.get_world_size()`` (not divided by a
    count right after: ``loss * world / num_tokens`` normalises the product)."""
    divided = {
        id(node.left)
        for node in function.nodes
        if isinstance(node, cst.BinaryOperation)
        and isinstance(node.operator, cst.Divide)
        and not isinstance(node.right, (cst.Integer, cst.Float))
    }
    for node in function.nodes:
        if id(node) in divided:
            continue
        if isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.MultiplyAssign):
            pairs = ((node.target, node.value),)
        elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
            pairs = ((node.left, node.right), (node.right, node.left))
        else:
            continue
        for loss, world in pairs:
            name = _name(loss)
            if name is None or "loss" not in name.lower() or not function.is_world_size(world):
                continue
            if function.normalised(loss) is False:
                yield Mismatch(MismatchKind.LOCAL_LOSS_TIMES_WORLD, node, name)


def _grad_over_global_count(function: _Function) -> Iterator[Mismatch]:
    """After ``backward()``, ``p.grad.mul_(1 / num_tokens)`` with ``num_tokens`` all-reduced."""
    counts = {
        name
        for _, op, reduced in function.all_reduces()
        if op == "SUM" and (name := _name(reduced)) is not None
    }
    if not counts:
        return
    grads_reduced = any(
        any(isinstance(n, cst.Attribute) and n.attr.value == "grad" for n in walk_code(reduced))
        for _, _, reduced in function.all_reduces()
    )
    backward = False
    for node in function.nodes:
        if isinstance(node, cst.Call) and last_name(node.func) == "backward":
            backward = True
            continue
        if not backward or grads_reduced:
            continue
        scale = _grad_scale(node)
        if scale is None or function.mentions_world_size(scale):
            continue
        used = {n.value for n in walk_code(scale) if isinstance(n, cst.Name)} & counts
        if used:
            yield Mismatch(MismatchKind.GRAD_OVER_GLOBAL_COUNT, node, sorted(used)[0])


def _grad_scale(node: cst.CSTNode) -> cst.BaseExpression | None:
    """The factor of ``x.grad.mul_(f)`` / ``x.grad.div_(f)`` / ``x.grad /= f``, else None."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        receiver = node.func.value
        if (
            node.func.attr.value in ("mul_", "div_")
            and isinstance(receiver, cst.Attribute)
            and receiver.attr.value == "grad"
            and node.args
        ):
            return node.args[0].value
    if (
        isinstance(node, cst.AugAssign)
        and isinstance(node.target, cst.Attribute)
        and node.target.attr.value == "grad"
        and isinstance(node.operator, (cst.DivideAssign, cst.MultiplyAssign))
    ):
        return node.value
    return None


def _autograd_less(function: _Function) -> Iterator[Mismatch]:
    """``c = z_a.T @ z_b / n; dist.all_reduce(c)`` inside a loss: no gradient flows back."""
    if "loss" not in function.function.name.value.lower():
        return
    params = {p.name.value for p in function.function.params.params}
    for call, _, reduced in function.all_reduces():
        name = _name(reduced)
        values = function.defining(name or "")
        if len(values) != 1:
            continue
        value = values[0]
        uses = {n.value for n in walk_code(value) if isinstance(n, cst.Name)}
        if not uses & params or any(
            isinstance(n, cst.Attribute) and n.attr.value == "detach" for n in walk_code(value)
        ):
            continue
        if any(_is_matmul(n) for n in walk_code(value)):
            yield Mismatch(MismatchKind.AUTOGRAD_LESS_ALL_REDUCE, call, name or "")


def _is_matmul(node: cst.CSTNode) -> bool:
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.MatrixMultiply):
        return True
    return isinstance(node, cst.Call) and last_name(node.func) in _MATMUL


def _reduces_dict_values(function: _Function) -> bool:
    """``for v in metrics.values(): dist.all_reduce(v)``: every value reduced in place."""
    for node in function.nodes:
        if not isinstance(node, cst.For) or not isinstance(node.iter, cst.Call):
            continue
        if last_name(node.iter.func) != "values":
            continue
        target = _name(node.target)
        for inner in walk_code(node.body):
            if (
                isinstance(inner, cst.Call)
                and inner.args
                and function.resolve(inner.func) in _ALL_REDUCE
                and _name(inner.args[0].value) == target
            ):
                return True
    return False


def _aliased_values(function: _Function) -> Iterator[Mismatch]:
    for node in function.nodes:
        if not isinstance(node, cst.Dict):
            continue
        seen: dict[str, str] = {}
        for element in node.elements:
            if not isinstance(element, cst.DictElement):
                continue
            name = _name(element.value)
            if name is None:
                continue
            key = source_text(element.key)
            if name in seen:
                yield Mismatch(
                    MismatchKind.ALIASED_IN_PLACE_REDUCE, element.value, name, seen[name]
                )
            else:
                seen[name] = key
