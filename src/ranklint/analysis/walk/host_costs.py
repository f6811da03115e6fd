"""Host costs, per file: code that syncs with the device or costs host time each time it runs.

Recorded during the walk for every candidate, whatever rules are selected, as
:class:`~ranklint.model.events.HostCost` events of the file's summary; the
project phase (:mod:`ranklint.analysis.project.hot_regions`) finds the ones in hot
code, and the RNK2xx rules word them. What is a tensor comes from
:mod:`ranklint.analysis.walk.tensors`:

- syncs on any value: ``.item()``, ``.tolist()``, ``.cpu()``, ``.numpy()``,
  ``.to("cpu")``, ``.synchronize()``, ``nonzero`` / ``masked_select`` /
  ``unique``, boolean-mask indexing;
- syncs on known tensors: ``float()``/``int()``/``bool()``, truth tests,
  formatting (``print``, f-strings, ``%``, ``.format``);
- Python loops over a tensor's elements;
- tensor factories without ``device=`` (or float data without ``dtype=``).

Not recorded:

- code of a ``raise`` statement and the message of an ``assert``: they run
  only when something already went wrong;
- reads of a value on the host (a host factory's tensor, ``x.cpu()`` and what
  is computed from it: ``x.cpu().detach().numpy()`` is one copy);
- reads of a value a collective just filled (``dist.all_reduce(done,
  op=ReduceOp.MAX)`` then ``if done.item():``): every rank reads it to take
  the same decision, a sync the code needs. After a broadcast or a MAX/MIN
  (bitwise) reduction every read is such a decision; after a sum only a test
  is (``if found.item() > 0:``), while ``log(total.item())`` is still
  reported.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import libcst as cst

from ranklint.analysis.walk.host_uses import (
    decisive_operands,
    imports_ray,
    is_ray_driver,
    sized_value,
    tested_soon,
)
from ranklint.analysis.walk.hot_markers import is_model_name
from ranklint.analysis.walk.names import last_name
from ranklint.analysis.walk.tensor_loops import indexes, is_schedule, range_over, used_as
from ranklint.analysis.walk.tensors import (
    HOST_FACTORIES,
    Kind,
    TensorTypes,
    converts_only,
    is_host_copy,
    short_text,
)
from ranklint.analysis.walk.visitor import NodeVisitor
from ranklint.model.events import CostKind

if TYPE_CHECKING:
    from ranklint.analysis.walk.context import FileContext

_COPY_METHODS = frozenset({"item", "tolist", "cpu", "numpy"})
_DATA_DEPENDENT = frozenset({"torch.nonzero", "torch.masked_select", "torch.unique"})
_CONVERSIONS = frozenset({"float", "int", "bool", "complex"})
_FORMATTERS = frozenset({"str", "repr", "format", "print"})
# The host factories checked for `device=` (`from_numpy` has no `device=`).
_FACTORIES = HOST_FACTORIES - {"from_numpy"}
# Collectives that leave their first argument the same on every rank (the last
# name of the callee: `dist.all_reduce`, a project's `comm.broadcast`).
_SHARING = frozenset({"all_reduce", "allreduce", "broadcast"})
# Callees that need their arguments' values on the host: `torch.split` and
# all-to-all take split sizes as Python ints, a tokenizer decodes Python ids.
_NEEDS_HOST_VALUES = re.compile(
    r"(^|_)(split|splits|split_with_sizes|all_to_all\w*|decode|batch_decode|detokenize|"
    r"ids_to_text|ids_to_tokens|convert_ids_to_tokens)$"
)
# Reduction operators whose result is a decision (a flag, a longest length).
_DECISION_OPS = re.compile(r"\b(MAX|MIN|BAND|BOR|LAND|LOR)\b", re.IGNORECASE)


class HostCostRecorder(NodeVisitor):
    """Records the host-cost candidates of one file into its facts."""

    where = "analysis host-costs"

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self._raising = False  # within a `raise` statement (they do not nest)
        # The message of the `assert` being walked.
        self._assert_message: cst.BaseExpression | None = None
        # Tests of the enclosing `if`/`while`/conditional expressions, innermost last.
        self._tests: list[cst.BaseExpression] = []
        # Per enclosing `if`: the tensor kinds before it.
        self._before_if: list[dict[str, Kind]] = []
        # Subscripts assigned a scalar (`x[mask] = 0`), arguments an API needs
        # on the host (`x.split(sizes.tolist())`): ids of their nodes.
        self._filled: set[int] = set()
        self._needed: set[int] = set()
        # The element of the comprehension each `for ... in` clause (by id) builds.
        self._comprehension_uses: dict[int, cst.CSTNode] = {}
        # Operands whose value decides host control flow or a size (ids).
        self._decisive: set[int] = set()
        # Per enclosing class or function: whether it is a Ray driver (no device).
        self._drivers: list[bool] = [False]

    def record(self, kind: CostKind, node: cst.CSTNode, missing: tuple[str, ...] = ()) -> None:
        ctx = self.ctx
        if ctx.import_time and not ctx.functions and ctx.loop_depth == 0:
            return  # module-level code outside loops runs once
        if self._raising or (
            self._assert_message is not None and _contains(self._assert_message, node)
        ):
            return  # runs only when something already failed
        decides = (
            kind in (CostKind.TRUTH_TEST, CostKind.DATA_DEPENDENT)
            or id(node) in self._decisive
            or self._in_a_test(node)
        )
        ctx.facts.host_cost(kind, node, short_text(ctx.module, node), ctx.place, missing, decides)

    def _mark_decisive(self, node: cst.CSTNode) -> None:
        self._decisive.update(map(id, decisive_operands(node, self.ctx.names)))

    # -- Ray drivers -------------------------------------------------------
    def _enter_scope(self, node: cst.ClassDef | cst.FunctionDef) -> None:
        driver = self._drivers[-1] or (
            imports_ray(self.ctx.names) and is_ray_driver(node, self.ctx.names)
        )
        self._drivers.append(driver)

    def _leave_scope(self, node: cst.ClassDef | cst.FunctionDef) -> None:
        self._drivers.pop()

    visit_ClassDef = visit_FunctionDef = _enter_scope
    leave_ClassDef = leave_FunctionDef = _leave_scope

    def _from_workers(self, subject: cst.BaseExpression) -> bool:
        """In a Ray driver, a value not known to be a device tensor: workers sent it."""
        return self._drivers[-1] and not self.ctx.tensors.is_tensor(subject)

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

    # -- error paths -------------------------------------------------------
    def visit_Raise(self, node: cst.Raise) -> None:
        self._raising = True

    def leave_Raise(self, node: cst.Raise) -> None:
        self._raising = False

    # -- collectives -------------------------------------------------------
    def _note_collective(self, node: cst.Call) -> None:
        """``dist.all_reduce(flag, op=MAX)``: ``flag`` now holds one value on every rank."""
        name = last_name(node.func)
        if name not in _SHARING or isinstance(node.func, cst.Call):
            return
        tensor = None  # pragma: no mutate  (any non-name marks nothing: `mark_shared` keys names)
        for arg in node.args:
            if arg.keyword is None and not arg.star:
                tensor = arg.value
                break
            if arg.keyword is not None and arg.keyword.value == "tensor":
                tensor = arg.value
                break
        if tensor is None:
            return
        decision = name == "broadcast" or any(
            arg.value is not tensor
            and _DECISION_OPS.search(self.ctx.module.code_for_node(arg.value)) is not None
            for arg in node.args
        )
        self.ctx.tensors.mark_shared(tensor, decision=decision)

    def _necessary(
        self, subject: cst.BaseExpression, node: cst.CSTNode, *, decides: bool = False
    ) -> bool:
        """A read of a value a collective just filled, where it decides something."""
        shared = self.ctx.tensors.shared(subject)
        if shared is None:
            return False
        return shared or decides or self._in_a_test(node)

    def _in_a_test(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` is read by the test of an enclosing ``if``/``while`` (or
        conditional expression), among the four innermost."""
        return any(_contains(test, node) for test in self._tests[-4:])

    # -- syncs -------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        self._mark_decisive(node)
        self._note_needed(node)
        self._sync_call(node)
        self._factory(node)
        self._note_collective(node)

    def _note_needed(self, node: cst.Call) -> None:
        """Arguments the callee needs as host values: split sizes, token ids to decode."""
        name = last_name(node.func)
        if name is not None and _NEEDS_HOST_VALUES.search(name):
            self._needed.update(id(arg.value) for arg in node.args)

    def _sync_call(self, node: cst.Call) -> None:
        func = node.func
        tensors = self.ctx.tensors
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if (
                ((method in _COPY_METHODS and not node.args) or is_host_copy(node))
                and not _on_host(func.value, tensors)
                and not self._necessary(func.value, node)
                and id(node) not in self._needed
                and not _moves_a_model(func.value)
                and not _non_blocking(node)
                and not self._from_workers(func.value)
            ):
                self.record(CostKind.COPY, node)
            elif method == "synchronize":
                self.record(CostKind.SYNCHRONIZE, node)
            elif (
                method in ("nonzero", "masked_select", "unique")
                and (
                    self.ctx.names.resolve(func) in _DATA_DEPENDENT
                    or (method == "nonzero" and self.ctx.names.resolve(func) is None)
                )
                and not self._from_workers(func.value)
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
            if not self._necessary(node.args[0].value, node, decides=conversion == "bool"):
                if conversion in ("int", "bool"):
                    self._decisive.add(id(node))  # a count, an index or a flag
                self.record(CostKind.CONVERSION, node)
            return
        formatter = self._builtin_call(node, _FORMATTERS)
        if formatter is not None and any(
            not arg.keyword and tensors.is_tensor(arg.value) for arg in node.args
        ):
            self.record(CostKind.FORMAT, node)

    def _truth(self, test: cst.BaseExpression) -> None:
        if self.ctx.tensors.is_tensor(test) and not self._necessary(test, test, decides=True):
            self.record(CostKind.TRUTH_TEST, test)

    def visit_If(self, node: cst.If) -> None:
        self._truth(node.test)
        self._tests.append(node.test)
        tensors = self.ctx.tensors
        self._before_if.append(tensors.snapshot())
        narrowed = _not_a_tensor(node.test)
        if narrowed is not None:
            tensors.bind(narrowed, Kind.NONE)  # `if isinstance(logits, list):`

    def leave_If(self, node: cst.If) -> None:
        self._tests.pop()
        before = self._before_if.pop()
        if node.orelse is None and _ends_in_exit(node.body):
            # The code after the `if` runs only where its body did not.
            self.ctx.tensors.restore(before)

    def visit_While(self, node: cst.While) -> None:
        self._truth(node.test)
        self._tests.append(node.test)

    def leave_While(self, node: cst.While) -> None:
        self._tests.pop()

    def visit_Assert(self, node: cst.Assert) -> None:
        self._truth(node.test)
        self._assert_message = node.msg

    def leave_Assert(self, node: cst.Assert) -> None:
        self._assert_message = None

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._truth(node.test)
        self._tests.append(node.test)

    def leave_IfExp(self, node: cst.IfExp) -> None:
        self._tests.pop()

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

    def visit_Assign(self, node: cst.Assign) -> None:
        self._decisive.update(map(id, sized_value(node)))
        if _is_scalar_value(node.value, self.ctx.tensors):
            # `x[mask] = 0` runs as `masked_fill_`: no output size to learn.
            for target in node.targets:
                if isinstance(target.target, cst.Subscript):
                    self._filled.add(id(target.target))

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        # `loss_value = loss.item()`, then `if not math.isfinite(loss_value):`.
        self._decisive.update(map(id, tested_soon(node.body)))

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self._mark_decisive(node)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        self._mark_decisive(node)
        if id(node) in self._filled or self._from_workers(node.value):
            return
        tensors = self.ctx.tensors
        for element in node.slice:
            index = element.slice
            if isinstance(index, cst.Index) and tensors.kind(index.value) is Kind.BOOL:
                self.record(CostKind.DATA_DEPENDENT, node)
                return

    # -- loops over tensors ------------------------------------------------
    def _element_loop(
        self, iterable: cst.BaseExpression, target: cst.BaseExpression, uses: cst.CSTNode | None
    ) -> bool:
        """Whether iterating ``iterable`` into ``target`` (used in ``uses``) is a tensor loop."""
        tensors = self.ctx.tensors
        if is_schedule(iterable):
            return False
        name = target.value if isinstance(target, cst.Name) else None
        if tensors.is_output(iterable):
            # A model's output iterated as records (`[r[0] for r in reward_model(x)]`,
            # `for out in llm.generate(...): out.text`) is a list, not a tensor.
            return name is not None and uses is not None and not used_as(uses, name, record=True)
        if not tensors.is_iterated_tensor(iterable):
            return False
        # Host indices into Python data (`[data[i] for i in torch.randint(n, (k,))]`):
        # no launch or sync per element.
        return not (
            tensors.is_host(iterable)
            and name is not None
            and uses is not None
            and used_as(uses, name, record=False)
        )

    def visit_ListComp(self, node: cst.ListComp | cst.SetComp | cst.GeneratorExp) -> None:
        self._comprehension_uses[id(node.for_in)] = node.elt

    visit_SetComp = visit_GeneratorExp = visit_ListComp

    def visit_DictComp(self, node: cst.DictComp) -> None:
        self._comprehension_uses[id(node.for_in)] = node

    def visit_For(self, node: cst.For) -> None:
        tensors = self.ctx.tensors
        if tensors.is_iterated_tensor(node.iter) or tensors.is_output(node.iter):
            if self._element_loop(node.iter, node.target, node.body):
                self.record(CostKind.TENSOR_LOOP, node.iter)
            return
        indexed = range_over(node.iter, tensors)
        if (
            indexed is not None
            and isinstance(node.target, cst.Name)
            and indexes(node.body, indexed, node.target.value)
        ):
            self.record(CostKind.TENSOR_LOOP, node.iter)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        uses = self._comprehension_uses.pop(id(node), None)
        if node.inner_for_in is not None and uses is not None:
            self._comprehension_uses[id(node.inner_for_in)] = uses
        if self._element_loop(node.iter, node.target, uses):
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


def _on_host(node: cst.BaseExpression, tensors: TensorTypes) -> bool:
    """Whether ``node`` is on the host already: a host tensor, or computed from a copy.

    ``x.cpu().detach().numpy()``: the ``.numpy()`` reads the copy ``.cpu()``
    made; ``x.cpu().cuda().item()`` moves it back first.
    """
    for _ in range(24):  # pragma: no mutate  (a bound on the chain)
        if tensors.is_host(node):
            return True
        if isinstance(node, cst.Subscript) or (
            isinstance(node, cst.Attribute) and node.attr.value in ("data", "T", "mT")
        ):
            node = node.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            method = node.func.attr.value
            if (method in _COPY_METHODS and not node.args) or is_host_copy(node):
                return True
            if method == "cuda" or (method == "to" and not converts_only(node)):
                return False
            node = node.func.value
        else:
            return False
    return False


# Types whose `isinstance` test says a value is not a tensor.
_NOT_TENSOR_TYPES = frozenset(
    {"list", "tuple", "dict", "int", "float", "bool", "str", "Sequence", "Mapping"}
)


def _not_a_tensor(test: cst.BaseExpression) -> cst.Name | None:
    """``x`` in ``isinstance(x, list)`` / ``isinstance(x, (list, tuple))``."""
    if not (
        isinstance(test, cst.Call)
        and isinstance(test.func, cst.Name)
        and test.func.value == "isinstance"
        and len(test.args) == 2
        and isinstance(test.args[0].value, cst.Name)
    ):
        return None
    types = test.args[1].value
    elements = [e.value for e in types.elements] if isinstance(types, cst.Tuple) else [types]
    if elements and all(last_name(e) in _NOT_TENSOR_TYPES for e in elements):
        return test.args[0].value
    return None


def _ends_in_exit(body: cst.BaseSuite) -> bool:
    """Whether a block always leaves by its last statement (``return``, ``raise``, ...)."""
    last = body.body[-1] if body.body else None
    statements = last.body if isinstance(last, cst.SimpleStatementLine) else body.body
    exits = (cst.Return, cst.Raise, cst.Continue, cst.Break)
    return bool(statements) and isinstance(statements[-1], exits)


def _is_scalar_value(value: cst.BaseExpression, tensors: TensorTypes) -> bool:
    """A number, or a name not known to be a tensor (``pad_id``, ``self.fill_value``)."""
    while isinstance(value, cst.UnaryOperation):
        value = value.expression
    if isinstance(value, (cst.Integer, cst.Float)):
        return True
    if isinstance(value, cst.Call):
        # float("-inf")
        return (
            isinstance(value.func, cst.Name)
            and value.func.value in ("float", "int")
            and bool(value.args)
            and isinstance(value.args[0].value, (cst.SimpleString, cst.Integer, cst.Float))
        )
    return isinstance(value, (cst.Name, cst.Attribute)) and tensors.kind(value) is Kind.NONE


# Last words of a name that holds a module (besides models: see `is_model_name`).
_MODULE_WORDS = (
    *("module", "modules", "layer", "layers", "encoder", "decoder", "backbone", "head"),
    *("block", "blocks", "adapter", "vae", "unet", "transformer", "controlnet", "discriminator"),
)


def _non_blocking(node: cst.Call) -> bool:
    """``x.to("cpu", non_blocking=True)``: the host queues the copy and moves on."""
    return any(
        arg.keyword is not None
        and arg.keyword.value == "non_blocking"
        and isinstance(arg.value, cst.Name)
        and arg.value.value == "True"
        for arg in node.args
    )


def _moves_a_model(node: cst.BaseExpression) -> bool:
    """``model.to("cpu")``, ``self.module.cpu()``: a model moved, not a value read."""
    name = last_name(node) if not isinstance(node, cst.Call) else None
    return name is not None and is_model_name(name, also=_MODULE_WORDS)


def _contains(tree: cst.CSTNode, node: cst.CSTNode) -> bool:
    """Whether ``node`` is ``tree`` or inside it (searched within a budget of 500 nodes)."""
    stack: list[cst.CSTNode] = [tree]
    seen = 0
    while stack and seen < 500:
        current = stack.pop()
        if current is node:
            return True
        seen += 1
        stack.extend(current.children)
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
