"""Host costs, per file: code that syncs with the device or costs host time each time it runs.

Recorded during the walk for every candidate, whatever rules are selected, as
:class:`~ranklint.analysis.events.HostCost` events of the file's summary; the
project phase (:mod:`ranklint.analysis.hot_regions`) finds the ones in hot
code, and the RNK2xx rules word them. What is a tensor comes from
:mod:`ranklint.analysis.tensors`:

- syncs on any value: ``.item()``, ``.tolist()``, ``.cpu()``, ``.numpy()``,
  ``.to("cpu")``, ``.synchronize()``, ``nonzero`` / ``masked_select`` /
  ``unique``, boolean-mask indexing;
- syncs on known tensors: ``float()``/``int()``/``bool()``, truth tests,
  formatting (``print``, f-strings, ``%``, ``.format``);
- Python loops over a tensor's elements;
- tensor factories without ``device=`` (or float data without ``dtype=``).
"""

from __future__ import annotations

import libcst as cst

from ranklint.analysis.events import CostKind
from ranklint.analysis.names import dotted_name
from ranklint.analysis.tensors import HOST_FACTORIES, Kind, TensorTypes, short_text
from ranklint.analysis.visitor import NodeVisitor

_COPY_METHODS = frozenset({"item", "tolist", "cpu", "numpy"})
_DATA_DEPENDENT = frozenset({"torch.nonzero", "torch.masked_select", "torch.unique"})
_CONVERSIONS = frozenset({"float", "int", "bool", "complex"})
_FORMATTERS = frozenset({"str", "repr", "format", "print"})
# The host factories checked for `device=` (`from_numpy` has no `device=`).
_FACTORIES = HOST_FACTORIES - {"from_numpy"}


class HostCostRecorder(NodeVisitor):
    """Records the host-cost candidates of one file into its facts."""

    where = "analysis host-costs"

    def record(self, kind: CostKind, node: cst.CSTNode, missing: tuple[str, ...] = ()) -> None:
        ctx = self.ctx
        if ctx.import_time and not ctx.functions and ctx.loop_depth == 0:
            return  # module-level code outside loops runs once
        ctx.facts.host_cost(
            kind,
            node,
            short_text(ctx.module, node),
            ctx.place,
            missing,
        )

    def _builtin_call(self, node: cst.Call, names: frozenset[str]) -> str | None:
        """The builtin's name when ``node`` calls one of ``names`` (not shadowed)."""
        func = node.func
        if (
            isinstance(func, cst.Name)
            and func.value in names
            and not self.ctx.names.is_bound(func.value)
        ):
            return func.value
        return None

    # -- syncs -------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        self._sync_call(node)
        self._factory(node)

    def _sync_call(self, node: cst.Call) -> None:
        func = node.func
        tensors = self.ctx.tensors
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if (
                (method in _COPY_METHODS and not node.args)
                or (method == "to" and _is_cpu_move(node))
            ) and not (tensors.is_host(func.value) or _is_copy(func.value)):
                self.record(CostKind.COPY, node)
            elif method == "synchronize":
                self.record(CostKind.SYNCHRONIZE, node)
            elif method in ("nonzero", "masked_select", "unique") and (
                self.ctx.names.resolve(func) in _DATA_DEPENDENT
                or (method == "nonzero" and self.ctx.names.resolve(func) is None)
            ):
                self.record(CostKind.DATA_DEPENDENT, node)
            elif (
                method == "format"
                and isinstance(func.value, cst.SimpleString)
                and any(tensors.is_tensor(arg.value) for arg in node.args)
            ):
                self.record(CostKind.FORMAT, node)
            return
        conversion = self._builtin_call(node, _CONVERSIONS)
        if conversion is not None and node.args and tensors.is_tensor(node.args[0].value):
            self.record(CostKind.CONVERSION, node)
            return
        formatter = self._builtin_call(node, _FORMATTERS)
        if formatter is not None and any(
            not arg.keyword and tensors.is_tensor(arg.value) for arg in node.args
        ):
            self.record(CostKind.FORMAT, node)

    def _truth(self, test: cst.BaseExpression) -> None:
        if self.ctx.tensors.is_tensor(test):
            self.record(CostKind.TRUTH_TEST, test)

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
            self.record(CostKind.FORMAT, node.expression)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if not (
            isinstance(node.operator, cst.Modulo)
            and isinstance(node.left, (cst.SimpleString, cst.ConcatenatedString))
        ):
            return
        right = node.right
        values = [e.value for e in right.elements] if isinstance(right, cst.Tuple) else [right]
        if any(self.ctx.tensors.is_tensor(value) for value in values):
            self.record(CostKind.FORMAT, node)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        tensors = self.ctx.tensors
        for element in node.slice:
            index = element.slice
            if isinstance(index, cst.Index) and tensors.kind(index.value) is Kind.BOOL:
                self.record(CostKind.DATA_DEPENDENT, node)
                return

    # -- loops over tensors ------------------------------------------------
    def visit_For(self, node: cst.For) -> None:
        tensors = self.ctx.tensors
        if tensors.is_any_tensor(node.iter):
            self.record(CostKind.TENSOR_LOOP, node.iter)
            return
        indexed = _range_over(node.iter, tensors)
        if (
            indexed is not None
            and isinstance(node.target, cst.Name)
            and _indexes(node.body, indexed, node.target.value)
        ):
            self.record(CostKind.TENSOR_LOOP, node.iter)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        if self.ctx.tensors.is_any_tensor(node.iter):
            self.record(CostKind.TENSOR_LOOP, node.iter)

    # -- factories ---------------------------------------------------------
    def _factory(self, node: cst.Call) -> None:
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
        missing: list[str] = []
        if "device" not in keywords:
            missing.append("device")
        if (
            last in ("tensor", "as_tensor")
            and "dtype" not in keywords
            and node.args
            and _has_float_literal(node.args[0].value)
        ):
            missing.append("dtype")
        if missing:
            self.record(CostKind.FACTORY, node, tuple(missing))


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
    subject: cst.BaseExpression | None = None  # pragma: no mutate  (any non-Name reads as None)
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
