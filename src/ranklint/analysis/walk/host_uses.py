"""What a host cost's value is for, and code that runs where there is no device.

Two facts the host-cost recorder (:mod:`ranklint.analysis.walk.host_costs`) asks
about while it walks:

- *decisions*: the operands whose value decides host control flow or a size.
  A sync read there (``if t.item() > 0:``, ``int(n.item())``, ``x[:
  n.item()]``, ``range(n.item())``, ``max_seqlen=lens.max().item()``) is often
  one the program needs: the host cannot choose a branch or allocate without
  the value. Such costs are recorded with ``decides`` (the sync rule tiers them low);
  a value read to log or accumulate it (``total += loss.item()``) is not a
  decision;
- *Ray drivers*: a class decorated ``@ray.remote(num_cpus=...)`` with no GPU,
  or a class or function that fetches results with ``ray.get(...)``. Its
  values are what workers sent back, on the host: ``.item()``, ``.tolist()``
  and masks on them are host work, not syncs, unless the value is known to be
  a device tensor.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import libcst as cst

from ranklint.analysis.walk.axes import identifier_words
from ranklint.analysis.walk.names import NameTable
from ranklint.syntax import reads_name

# Words of a keyword argument that takes a size or an index on the host
# (`max_seqlen=`, `num_tokens=`, `split_size=`, `dim=`).
_SIZE_WORDS = frozenset(
    {"len", "length", "seqlen", "size", "sizes", "num", "count", "shape", "index", "indices"}
    | {"idx", "max", "min", "dim", "offset", "offsets", "start", "end", "stop", "k", "n"}
)
# Words of a name assigned a size or a position (`max_seqlen = lens.max().item()`,
# `seq_len`, `batch_size`, `seq_start`); not counts, which are often only logged.
_SIZE_TARGET_WORDS = frozenset(
    {"len", "length", "lens", "seqlen", "seqlens", "size", "sizes", "shape", "idx", "index"}
    | {"indices", "offset", "offsets", "pos", "position", "positions", "start", "end", "begin"}
)
# Builtins whose arguments are sizes or counts.
_SIZE_BUILTINS = frozenset({"int", "range"})
# How deep arithmetic around a value is followed (`range(n.item() + 1)`).
_MAX_DEPTH = 8
# How many statements after `name = ...` a test of `name` makes it a decision.
_TESTED_WITHIN = 8
# The most nodes read in one such test.
_TEST_BUDGET = 256
# The most nodes a Ray scan reads in one class or function.
_SCAN_BUDGET = 20000


def decisive_operands(node: cst.CSTNode, names: NameTable) -> Iterator[cst.BaseExpression]:
    """The sub-expressions of ``node`` whose value decides control flow or a size.

    The operands of a comparison, the argument of ``int()`` and ``range()``,
    a keyword argument named like a size (``max_seqlen=``), and the index and
    slice bounds of a subscript; through arithmetic (``n.item() + 1``).
    """
    operands: list[cst.BaseExpression] = []
    if isinstance(node, cst.Comparison):
        operands = [node.left, *(target.comparator for target in node.comparisons)]
    elif isinstance(node, cst.Call):
        func = node.func
        if (
            isinstance(func, cst.Name)
            and func.value in _SIZE_BUILTINS
            and not names.is_bound(func.value)
        ):
            operands = [arg.value for arg in node.args]
        else:
            operands = [
                arg.value
                for arg in node.args
                if arg.keyword is not None and _names_a_size(arg.keyword.value)
            ]
    elif isinstance(node, cst.Subscript):
        for element in node.slice:
            index = element.slice
            if isinstance(index, cst.Index):
                operands.append(index.value)
            else:
                operands.extend(b for b in (index.lower, index.upper, index.step) if b is not None)
    for operand in operands:
        yield from _through_arithmetic(operand, 0)


def sized_value(node: cst.Assign) -> Iterator[cst.BaseExpression]:
    """The value of ``max_seqlen = ...`` (a name of a size or a position), through arithmetic."""
    for target in node.targets:
        name = target.target
        last = name.attr.value if isinstance(name, cst.Attribute) else None
        if isinstance(name, cst.Name):
            last = name.value
        if last is not None and {w.lower() for w in identifier_words(last)} & _SIZE_TARGET_WORDS:
            yield from _through_arithmetic(node.value, 0)
            return


def tested_soon(body: Sequence[cst.BaseStatement]) -> Iterator[cst.BaseExpression]:
    """The values of ``name = ...`` that an ``if``, ``while`` or ``assert`` among the
    next few statements of ``body`` tests (``loss_value = loss.item()``, then ``if
    not math.isfinite(loss_value):``), through arithmetic."""
    for index, statement in enumerate(body):
        assigned = _single_assign(statement)
        if assigned is None:
            continue
        name, value = assigned
        later = body[index + 1 : index + 1 + _TESTED_WITHIN]
        tests = [test for test in map(_test_of, later) if test is not None]
        if any(reads_name(test, name, budget=_TEST_BUDGET) for test in tests):
            yield from _through_arithmetic(value, 0)


def _single_assign(statement: cst.BaseStatement) -> tuple[str, cst.BaseExpression] | None:
    """``name = value``: one target, a plain name; (name, value)."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        target = small.targets[0].target
        if isinstance(target, cst.Name):
            return target.value, small.value
    return None


def _test_of(statement: cst.BaseStatement) -> cst.BaseExpression | None:
    if isinstance(statement, (cst.If, cst.While)):
        return statement.test
    if isinstance(statement, cst.SimpleStatementLine):
        for small in statement.body:
            if isinstance(small, cst.Assert):
                return small.test
    return None


def _through_arithmetic(node: cst.BaseExpression, depth: int) -> Iterator[cst.BaseExpression]:
    yield node
    if depth >= _MAX_DEPTH:
        return
    if isinstance(node, cst.BinaryOperation):
        yield from _through_arithmetic(node.left, depth + 1)
        yield from _through_arithmetic(node.right, depth + 1)
    elif isinstance(node, cst.UnaryOperation) and not isinstance(node.operator, cst.Not):
        yield from _through_arithmetic(node.expression, depth + 1)


def _names_a_size(keyword: str) -> bool:
    return bool({word.lower() for word in identifier_words(keyword)} & _SIZE_WORDS)


def imports_ray(names: NameTable) -> bool:
    """Whether the module's name ``ray`` is the Ray package (``import ray``)."""
    return names.lookup("ray") == "ray"


def is_ray_driver(node: cst.ClassDef | cst.FunctionDef, names: NameTable) -> bool:
    """A CPU-only Ray actor class, or a class or function that calls ``ray.get``.

    An actor with ``num_gpus`` above zero in its decorator is a GPU worker,
    never a driver.
    """
    if isinstance(node, cst.ClassDef):
        gpus = _decorator_gpus(node, names)
        if gpus is not None:
            return not gpus
    return _calls_ray_get(node.body, names)


def _decorator_gpus(node: cst.ClassDef, names: NameTable) -> bool | None:
    """Whether a ``@ray.remote(...)`` decorator asks for GPUs; None without one.

    A bare ``@ray.remote`` says nothing: GPUs may come with ``.options(num_gpus=...)``.
    """
    for decorator in node.decorators:
        call = decorator.decorator
        if not isinstance(call, cst.Call) or names.resolve(call.func) != "ray.remote":
            continue
        if not any(arg.keyword is not None for arg in call.args):
            return None
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "num_gpus":
                value = arg.value
                return not (isinstance(value, (cst.Integer, cst.Float)) and not float(value.value))
        return False
    return None


def _calls_ray_get(body: cst.CSTNode, names: NameTable) -> bool:
    stack: list[cst.CSTNode] = [body]
    seen = 0  # pragma: no mutate  (a bound on the walk: one node more or less)
    while stack and seen < _SCAN_BUDGET:  # pragma: no mutate  (the same bound)
        current = stack.pop()
        seen += 1
        if isinstance(current, cst.Call) and names.resolve(current.func) == "ray.get":
            return True
        stack.extend(current.children)
    return False
