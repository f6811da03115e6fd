"""Which expressions of a test are evidently integer or bool tensors (or Python ints).

Used by RNK601: tolerances do not apply to integer and bool comparisons
(`assert_close` compares them exactly), so such a comparison says what it
means without `rtol`/`atol`. Only what the file shows counts: an integer or
bool `dtype=`, `.long()` / `.int()` / `.bool()`, integer literals, comparison
results, index-valued functions (`argmax`, `nonzero`, `randint`), shapes and
sizes, and local names bound to any of these. Anything else is not exact.
"""

from __future__ import annotations

import libcst as cst

from ranklint.analysis.walk.names import NameTable

_EXACT_DTYPES = frozenset(
    f"{module}.{dtype}"
    for module in ("torch", "numpy")
    for dtype in (
        "bool",
        "bool_",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "int8",
        "int16",
        "int32",
        "int64",
        "int",
        "long",
        "short",
        "intc",
        "intp",
    )
) | frozenset({"int", "bool"})

# Methods whose result is an integer or bool tensor (or a Python int).
_EXACT_METHODS = frozenset(
    {
        "long",
        "int",
        "bool",
        "short",
        "byte",
        "char",
        "argmax",
        "argmin",
        "argsort",
        "nonzero",
        "numel",
        "size",
        "dim",
        "stride",
        "count_nonzero",
        "bincount",
        "eq",
        "ne",
        "gt",
        "lt",
        "ge",
        "le",
        "isnan",
        "isinf",
        "isfinite",
        "logical_not",
        "logical_and",
        "logical_or",
        "any",
        "all",
        # index-valued accessors of jagged tensors (torchrec `KeyedJaggedTensor`)
        "lengths",
        "offsets",
    }
)

# Methods whose result has the dtype of the tensor they are called on.
_SAME_DTYPE_METHODS = frozenset(
    {
        "cpu",
        "cuda",
        "detach",
        "clone",
        "view",
        "reshape",
        "flatten",
        "squeeze",
        "unsqueeze",
        "permute",
        "transpose",
        "t",
        "contiguous",
        "expand",
        "expand_as",
        "repeat",
        "flip",
        "roll",
        "view_as",
        "reshape_as",
        "narrow",
        "select",
        "index_select",
        "gather",
        "numpy",
        "tolist",
        "sum",
        "cumsum",
        "abs",
        "neg",
        "unique",
        "item",
    }
)

# Functions whose result is an integer or bool tensor, whatever their arguments.
_EXACT_FUNCTIONS = frozenset(
    f"{module}.{name}"
    for module in ("torch", "numpy")
    for name in (
        "LongTensor",
        "IntTensor",
        "BoolTensor",
        "ByteTensor",
        "ShortTensor",
        "randint",
        "randint_like",
        "randperm",
        "argmax",
        "argmin",
        "argsort",
        "nonzero",
        "bincount",
        "count_nonzero",
        "searchsorted",
        "bucketize",
        "eq",
        "ne",
        "gt",
        "lt",
        "ge",
        "le",
        "equal",
        "isnan",
        "isinf",
        "isfinite",
        "isin",
        "logical_not",
        "logical_and",
        "logical_or",
        "logical_xor",
    )
) | frozenset({"len", "int", "bool", "range"})

# Functions whose result has the dtype of their first argument.
_SAME_DTYPE_FUNCTIONS = frozenset(
    f"{module}.{name}"
    for module in ("torch", "numpy")
    for name in (
        "tensor",
        "as_tensor",
        "from_numpy",
        "array",
        "asarray",
        "zeros_like",
        "ones_like",
        "empty_like",
        "clone",
        "flatten",
        "stack",
        "cat",
        "concat",
        "concatenate",
        "vstack",
        "hstack",
        "flip",
        "roll",
        "sort",
        "unique",
        "cumsum",
        "sum",
    )
) | frozenset({"list", "tuple", "sorted"})

_AXIS_FUNCTIONS = frozenset({"torch.arange", "torch.range", "numpy.arange"})

# Final words of names that hold indices, ids or counts (`token_ids`, `reverse_indices`);
# `kjt`: a torchrec KeyedJaggedTensor, whose `values()` are ids.
_INDEX_WORDS = frozenset({"ids", "idx", "indices", "lengths", "offsets", "ranks", "shape", "kjt"})

_EXACT_OPERATORS = (
    cst.Add,
    cst.Subtract,
    cst.Multiply,
    cst.FloorDivide,
    cst.Modulo,
    cst.Power,
    cst.BitAnd,
    cst.BitOr,
    cst.BitXor,
    cst.LeftShift,
    cst.RightShift,
)

_MAX_DEPTH = 12


class _Bindings(cst.CSTVisitor):
    """`name = value` assignments of one function (or module), in source order.

    Each binding and each call gets its place in the walk, so a name is read
    as the last binding before the place where it is used.
    """

    def __init__(self) -> None:
        self.place = 0
        # Calls by id -> their place.
        self.calls: dict[int, int] = {}
        # name -> (place, value); value None: bound by unpacking, a loop or
        # `with ... as`, so not known.
        self.values: dict[str, list[tuple[int, cst.BaseExpression | None]]] = {}

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.place += 1
        if isinstance(node, cst.Call):
            self.calls[id(node)] = self.place
        return super().on_visit(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._unknown(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._unknown(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._unknown(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._unknown(node.asname.name)

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if isinstance(target, cst.Name):
            self.values.setdefault(target.value, []).append((self.place, value))
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind(element.value, None)

    def _unknown(self, target: cst.BaseExpression) -> None:
        self._bind(target, None)


class ExactValues:
    """Decides whether expressions of one scope are evidently integer or bool."""

    def __init__(self, names: NameTable, scope: cst.CSTNode) -> None:
        self._names = names
        self._walk = _Bindings()
        scope.visit(self._walk)

    def exact_at(self, node: cst.BaseExpression, call: cst.Call) -> bool:
        """Whether ``node``, an argument of ``call`` (a call in the scope), is exact."""
        return self.exact(node, self._walk.calls.get(id(call), self._walk.place + 1))

    def exact(self, node: cst.BaseExpression, at: int, depth: int = 0) -> bool:
        """Whether ``node``, read at place ``at`` of the scope, is exact."""
        if depth > _MAX_DEPTH:
            return False
        deeper = depth + 1
        if isinstance(node, cst.Integer):
            return True
        if isinstance(node, cst.Name):
            return self._name(node.value, at, deeper)
        if isinstance(node, cst.Comparison):
            return True
        if isinstance(node, cst.BooleanOperation):
            return self.exact(node.left, at, deeper) and self.exact(node.right, at, deeper)
        if isinstance(node, cst.UnaryOperation):
            return isinstance(node.operator, cst.Not) or self.exact(node.expression, at, deeper)
        if isinstance(node, cst.BinaryOperation):
            return (
                isinstance(node.operator, _EXACT_OPERATORS)
                and self.exact(node.left, at, deeper)
                and self.exact(node.right, at, deeper)
            )
        if isinstance(node, (cst.List, cst.Tuple)):
            return bool(node.elements) and all(
                isinstance(element, cst.Element) and self.exact(element.value, at, deeper)
                for element in node.elements
            )
        if isinstance(node, cst.Subscript):
            return self.exact(node.value, at, deeper)
        if isinstance(node, cst.Attribute):
            attribute = node.attr.value
            if attribute in ("shape", "indices", "ndim"):
                return True
            if attribute in ("T", "mT", "data"):
                return self.exact(node.value, at, deeper)
            return _index_word(attribute)
        if isinstance(node, cst.Call):
            return self._call(node, at, deeper)
        return False

    def _name(self, name: str, at: int, depth: int) -> bool:
        earlier = [binding for binding in self._walk.values.get(name, ()) if binding[0] < at]
        if earlier:
            place, value = earlier[-1]
            if value is not None:
                return self.exact(value, place, depth)
        # A parameter, or bound by a loop or unpacking: only its name tells.
        return _index_word(name) or name in ("True", "False")

    def _call(self, node: cst.Call, at: int, depth: int) -> bool:
        dtype = self._dtype(node)
        if dtype is not None:
            return dtype
        func = node.func
        name = self._names.resolve(func) or (func.value if isinstance(func, cst.Name) else None)
        first = node.args[0].value if node.args else None
        if name is not None:
            if name in _EXACT_FUNCTIONS:
                return True
            if name in _AXIS_FUNCTIONS:
                return not any(isinstance(arg.value, cst.Float) for arg in node.args)
            if name in _SAME_DTYPE_FUNCTIONS:
                return first is not None and self.exact(first, at, depth)
            if name in ("torch.full", "numpy.full") and len(node.args) > 1:
                return self.exact(node.args[1].value, at, depth)
            if name in ("torch.where", "numpy.where") and len(node.args) == 1:
                return True  # the indices where the condition holds
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in _EXACT_METHODS:
                return True
            if method in _SAME_DTYPE_METHODS or method == "to":
                return self.exact(func.value, at, depth)
            if method in ("values", "sort", "max", "min", "topk") and not node.args:
                return self.exact(func.value, at, depth)
        return False

    def _dtype(self, node: cst.Call) -> bool | None:
        """True/False when the call names an integer/bool or another dtype; None if none."""
        func = node.func
        candidates = [arg.value for arg in node.args if _keyword(arg) == "dtype"]
        if isinstance(func, cst.Attribute) and func.attr.value in ("to", "type"):
            candidates += [arg.value for arg in node.args if arg.keyword is None]
        for candidate in candidates:
            name = self._names.resolve(candidate) or (
                candidate.value if isinstance(candidate, cst.Name) else None
            )
            if name is None:
                continue
            if name in _EXACT_DTYPES:
                return True
            if name.startswith(("torch.", "numpy.")) or name == "float":
                return False
        return None


def _keyword(arg: cst.Arg) -> str | None:
    return arg.keyword.value if arg.keyword is not None else None


def _index_word(name: str) -> bool:
    return name.lower().rsplit("_", 1)[-1] in _INDEX_WORDS
