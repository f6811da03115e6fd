"""Tensor-ness: which expressions are known to be tensors, locally and conservatively.

Implicit host syncs (``float(loss)``, ``if loss > 5:``, ``print(loss)``) are
syncs only when the value is a tensor. A value is known to be one when it is:

- a parameter annotated ``torch.Tensor`` / ``Tensor`` / ``DTensor``;
- the result of a tensor-returning ``torch.*`` function or of any
  ``torch.nn.functional`` function;
- the result of a tensor method on a tensor (``sum``, ``mean``, ``detach``,
  ``float``, ``view`` ...), an arithmetic or comparison on a tensor, an index
  into one, ``.grad`` / ``.data`` / ``.T`` of one;
- the result of a function of the same file annotated ``-> torch.Tensor``;
- the output of a model forward (``model(x)``), of a loss function
  (``criterion(...)``, ``loss_fn(...)``, ``*_loss(...)``, an ``nn.*Loss``
  instance), of an ``nn`` module instance; ``.loss`` / ``.logits`` of
  anything (model outputs);
- a name last assigned one of the above, or iterated from a tensor or from
  ``.parameters()``.

Tensors known to be on the host are told apart: a factory without
``device=`` (``torch.tensor(values)``, ``torch.from_numpy(a)``), a torch
function of a host tensor, and a copy (``x.cpu()``, ``x.to("cpu")``): reading
their values waits for nothing. Names a collective just filled
(``dist.all_reduce(done, op=MAX)``, ``dist.broadcast(info, src)``) are noted
as *shared*: every rank holds the same value, which the host usually reads to
make one decision on all ranks (see :meth:`TensorTypes.shared`).

Anything else is unknown and never reported as an implicit sync. Names are
tracked per function; ``loss = loss.item()`` makes ``loss`` a Python number
again.
"""

from __future__ import annotations

import enum

import libcst as cst

from ranklint.analysis.walk.hot_markers import is_model_call
from ranklint.analysis.walk.names import NameTable, dotted_name, last_name


class Kind(enum.Enum):
    NONE = 0  # not known to be a tensor
    TENSOR = 1
    BOOL = 2  # a boolean tensor (a mask)
    MODULE = 3  # an nn module instance: calling it gives a tensor
    HOST = 4  # a tensor made on the host (a factory without `device=`): no sync to read it
    # A copy on the host of a tensor (`x.cpu()`, `x.to("cpu")`): no sync to read it,
    # and not reported when iterated (the copy itself is the host cost).
    COPIED = 5
    # A model's output (`model(x)`): a tensor, or a tuple, list or ModelOutput of
    # them. Read as a tensor, but not reported when iterated (that walks the tuple).
    OUTPUT = 6


_DEVICE = (Kind.TENSOR, Kind.BOOL, Kind.OUTPUT)
_ON_HOST = (Kind.HOST, Kind.COPIED)
_ANY_TENSOR = (Kind.TENSOR, Kind.BOOL, Kind.HOST, Kind.COPIED)
# The last names of dtypes: `x.to(torch.float16)` converts where the tensor is.
_DTYPE_NAMES = frozenset(
    {"float", "float16", "float32", "float64", "half", "double", "bfloat16", "int", "int8"}
    | {"int16", "int32", "int64", "uint8", "long", "short", "bool", "dtype", "complex64"}
    | {"complex128", "float8_e4m3fn", "float8_e5m2"}
)
# Constructors that allocate on the host: `torch.Tensor(xs)`, `torch.LongTensor(xs)`.
_LEGACY_CONSTRUCTORS = frozenset(
    f"torch.{kind}Tensor" for kind in ("", "Float", "Double", "Half", "Long", "Int", "Short")
) | frozenset({"torch.ByteTensor", "torch.BoolTensor", "torch.CharTensor"})
# Factories that allocate on the host unless given `device=`.
HOST_FACTORIES = frozenset(
    {"zeros", "ones", "empty", "full", "rand", "randn", "randint", "arange", "linspace"}
    | {"tensor", "as_tensor", "from_numpy"}
)


_TENSOR_ANNOTATIONS = frozenset(
    {
        "torch.Tensor",
        "torch.FloatTensor",
        "torch.LongTensor",
        "torch.distributed.tensor.DTensor",
        "torch.distributed._tensor.DTensor",
    }
)
_TENSOR_ANNOTATION_NAMES = frozenset({"Tensor", "DTensor"})

# torch functions that return one tensor.
_TORCH_TENSOR_FUNCTIONS = frozenset(
    {"tensor", "as_tensor", "from_numpy", "zeros", "ones", "empty", "full", "rand", "randn"}
    | {"randint", "randperm", "arange", "linspace", "logspace", "eye", "zeros_like"}
    | {"ones_like", "empty_like", "full_like", "rand_like", "randn_like", "cat", "concat"}
    | {"concatenate", "stack", "hstack", "vstack", "where", "matmul", "mm", "bmm", "einsum"}
    | {"sum", "mean", "std", "var", "norm", "abs", "exp", "log", "sqrt", "rsqrt", "sigmoid"}
    | {"tanh", "relu", "softmax", "log_softmax", "argmax", "argmin", "clamp", "clip"}
    | {"gather", "index_select", "masked_fill", "outer", "dot", "cumsum", "prod", "square"}
    | {"pow", "mul", "add", "sub", "div", "maximum", "minimum", "flatten", "reshape"}
    | {"transpose", "permute", "squeeze", "unsqueeze", "clone", "tril", "triu", "multinomial"}
    | {"bernoulli", "normal", "cdist", "nan_to_num", "sign", "floor", "ceil", "round"}
    | {"log1p", "expm1", "erf", "lerp", "addmm", "baddbmm", "amax", "amin", "logsumexp"}
)
_TORCH_BOOL_FUNCTIONS = frozenset(
    {"isnan", "isinf", "isfinite", "isclose", "isin", "logical_and", "logical_or"}
    | {"logical_not", "logical_xor", "eq", "ne", "gt", "lt", "ge", "le", "any", "all"}
)
# Tensor methods that return a tensor of the same kind of data.
_TENSOR_METHODS = frozenset(
    {"sum", "mean", "std", "var", "norm", "abs", "exp", "log", "sqrt", "pow", "argmax"}
    | {"argmin", "detach", "clone", "float", "half", "double", "bfloat16", "int", "long"}
    | {"to", "cuda", "view", "view_as", "reshape", "flatten", "squeeze", "unsqueeze"}
    | {"transpose", "permute", "contiguous", "t", "mul", "add", "sub", "div", "neg"}
    | {"sigmoid", "softmax", "log_softmax", "clamp", "masked_fill", "gather", "square"}
    | {"prod", "cumsum", "type_as", "expand", "expand_as", "repeat", "amax", "amin"}
    | {"logsumexp", "full_tensor", "redistribute", "to_local", "sub_", "add_", "mul_", "div_"}
    | {"clamp_", "zero_", "fill_", "copy_"}
)
# Tensor methods that return a tensor only when called without a dimension
# (``t.max()``; ``t.max(dim=1)`` returns values and indices).
_REDUCTIONS_WITHOUT_DIM = frozenset({"max", "min", "median"})
_BOOL_METHODS = frozenset(
    {"eq", "ne", "gt", "lt", "ge", "le", "isnan", "isinf", "isfinite", "any", "all", "bool"}
)
_TENSOR_ATTRIBUTES = frozenset({"grad", "data", "T", "mT", "H", "real", "imag"})
# Attributes that hold tensors on model outputs (`outputs.loss`, `out.logits`).
_OUTPUT_ATTRIBUTES = frozenset({"loss", "logits"})
_LOSS_NAMES = frozenset(
    {"criterion", "loss_fn", "loss_func", "lossfn", "loss_function", "compute_loss"}
)
_ARITHMETIC = (
    cst.Add,
    cst.Subtract,
    cst.Multiply,
    cst.Divide,
    cst.FloorDivide,
    cst.Power,
    cst.MatrixMultiply,
)
_BITWISE = (cst.BitAnd, cst.BitOr, cst.BitXor)
_MAX_DEPTH = 24


# What a tensor has: its methods and attributes (`row.max()`, `row.shape`).
TENSOR_MEMBERS = (
    _TENSOR_METHODS
    | _BOOL_METHODS
    | _REDUCTIONS_WITHOUT_DIM
    | _TENSOR_ATTRIBUTES
    | frozenset(
        {"shape", "size", "dtype", "device", "item", "tolist", "numel", "dim", "cpu", "numpy"}
    )
)


class TensorTypes:
    """Evaluates whether expressions are tensors at the current point of the walk."""

    def __init__(self, names: NameTable) -> None:
        self.names = names
        self._envs: list[dict[str, Kind]] = [{}]
        # Per function: names a collective filled, and whether its result is
        # a decision (a broadcast, a MAX/MIN reduction) rather than a sum.
        self._shared: list[dict[str, bool]] = [{}]
        # Functions of this file annotated to return a tensor (`-> torch.Tensor`).
        self._returns_tensor: set[str] = set()

    def define_function(self, node: cst.FunctionDef) -> None:
        """Note a ``def`` whose return annotation is a tensor type."""
        if node.returns is not None and self._is_tensor_annotation(node.returns.annotation):
            self._returns_tensor.add(node.name.value)
        else:
            self._returns_tensor.discard(node.name.value)

    # -- scopes and bindings -----------------------------------------------
    def push(self) -> None:
        self._envs.append({})
        self._shared.append({})

    def pop(self) -> None:
        if len(self._envs) > 1:
            self._envs.pop()
            self._shared.pop()

    def bind_params(self, params: cst.Parameters) -> None:
        env = self._envs[-1]
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            if param.annotation is not None and self._is_tensor_annotation(
                param.annotation.annotation
            ):
                env[param.name.value] = Kind.TENSOR

    def bind(self, target: cst.BaseExpression, kind: Kind) -> None:
        if isinstance(target, cst.Name):
            self._shared[-1].pop(target.value, None)
            env = self._envs[-1]
            if kind is Kind.NONE:
                env.pop(target.value, None)
            else:
                env[target.value] = kind
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self.bind(element.value, Kind.NONE)
        elif isinstance(target, cst.Attribute):
            # `self.step_tensor = self.step_tensor.cpu()`: only a place on the host
            # is remembered for an attribute (it is read, not reported, later on).
            key = dotted_name(target)
            if key is not None:
                self._shared[-1].pop(key, None)
                env = self._envs[-1]
                if kind in _ON_HOST:
                    env[key] = kind
                else:
                    env.pop(key, None)

    def bind_assignment(
        self, targets: list[cst.BaseExpression], value: cst.BaseExpression | None
    ) -> None:
        kind = self.kind(value) if value is not None else Kind.NONE
        shared = self.shared(value) if value is not None else None
        for target in targets:
            self.bind(target, kind)
            if shared is not None:
                # `tensor = tensor.view(torch.bfloat16)` after the broadcast.
                self.mark_shared(target, decision=shared)

    def bind_annotated(
        self,
        target: cst.BaseExpression,
        annotation: cst.BaseExpression,
        value: cst.BaseExpression | None,
    ) -> None:
        if self._is_tensor_annotation(annotation):
            self.bind(target, Kind.TENSOR)
        elif value is not None:
            self.bind(target, self.kind(value))

    def bind_augmented(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        # `total += loss`: a Python number plus a tensor is a tensor.
        if self.kind(value) in _DEVICE or self.kind(target) is Kind.TENSOR:
            self.bind(target, Kind.TENSOR)

    def bind_loop_target(self, target: cst.BaseExpression, iterable: cst.BaseExpression) -> None:
        kind = Kind.NONE  # pragma: no mutate  (bound as None, a name reads as not a tensor)
        if self.is_tensor(iterable):
            kind = Kind.TENSOR  # rows of a tensor are tensors
        elif self.is_host(iterable):
            kind = self.kind(iterable)  # rows of a host copy are on the host too
        elif (
            isinstance(iterable, cst.Call)
            and isinstance(iterable.func, cst.Attribute)
            and iterable.func.attr.value == "parameters"
        ):
            kind = Kind.TENSOR
        self.bind(target, kind)

    def bind_comprehension_target(
        self, target: cst.BaseExpression, iterable: cst.BaseExpression
    ) -> None:
        """``[r.tolist() for r in labels.cpu()]``: rows of a host tensor are on the host.

        Device rows are left unknown, as before (the loop itself is a host cost).
        """
        if self.is_host(iterable):
            self.bind(target, self.kind(iterable))

    def snapshot(self) -> dict[str, Kind]:
        """The current function's bindings (see :meth:`restore`)."""
        return dict(self._envs[-1])

    def restore(self, saved: dict[str, Kind]) -> None:
        """Back to ``saved``: after ``if ...: x = ...; return``, the code that follows
        runs only where the branch was not taken, with the kinds from before it."""
        env = self._envs[-1]
        env.clear()
        env.update(saved)

    def mark_shared(self, node: cst.BaseExpression, *, decision: bool) -> None:
        """Note that a collective just gave ``node`` the same value on every rank."""
        key = dotted_name(node)
        if key is not None:
            shared = self._shared[-1]
            shared[key] = shared.get(key, False) or decision

    def shared(self, node: cst.BaseExpression) -> bool | None:
        """Whether ``node`` reads a value a collective just filled (see :meth:`mark_shared`).

        None: it does not; True: the collective was a broadcast or a MAX/MIN
        (or bitwise) reduction, whose result is a decision every rank takes
        alike (stop, skip the step, pad to the longest length); False: a sum
        or mean, a decision only where the host tests it.
        """
        for _ in range(_MAX_DEPTH):  # pragma: no mutate  (a bound on the chain)
            if isinstance(node, cst.Subscript):
                node = node.value
            elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
                node = node.func.value  # `done.item()`, `flag.int().cpu()`
            elif isinstance(node, cst.Attribute) and node.attr.value in _TENSOR_ATTRIBUTES:
                node = node.value
            else:
                break
        key = dotted_name(node)
        return None if key is None else self._shared[-1].get(key)

    # -- queries -----------------------------------------------------------
    def is_tensor(self, node: cst.BaseExpression) -> bool:
        """Known to be a tensor that may live on an accelerator."""
        return self.kind(node) in _DEVICE

    def kind(self, node: cst.BaseExpression, depth: int = 0) -> Kind:
        if depth > _MAX_DEPTH:
            return Kind.NONE
        if isinstance(node, cst.Name):
            return self._envs[-1].get(node.value, Kind.NONE)
        if isinstance(node, cst.Call):
            return self._call(node, depth)
        if isinstance(node, cst.Attribute):
            attr = node.attr.value
            known = self._envs[-1].get(dotted_name(node) or "")
            if known is not None:
                return known
            if attr in _OUTPUT_ATTRIBUTES:
                return Kind.TENSOR
            if attr in _TENSOR_ATTRIBUTES and self.is_tensor_at(node.value, depth):
                return Kind.TENSOR
            return Kind.NONE
        if isinstance(node, cst.Subscript):
            inner = self.kind(node.value, depth + 1)
            if inner is Kind.OUTPUT:
                return Kind.TENSOR  # `out[0]`: a row of the tensor, or its first output
            return inner if inner in _ANY_TENSOR else Kind.NONE
        if isinstance(node, cst.BinaryOperation):
            if isinstance(node.operator, cst.Modulo) and _is_string(node.left):
                return Kind.NONE
            left = self.kind(node.left, depth + 1)
            right = self.kind(node.right, depth + 1)
            masks = Kind.BOOL in (left, right) and not {Kind.TENSOR, Kind.OUTPUT} & {left, right}
            if isinstance(node.operator, _BITWISE) and masks:
                return Kind.BOOL
            if isinstance(node.operator, (*_ARITHMETIC, *_BITWISE, cst.Modulo)):
                if left in _DEVICE or right in _DEVICE:
                    return Kind.TENSOR
                if Kind.HOST in (left, right):
                    return Kind.HOST
                if Kind.COPIED in (left, right):
                    return Kind.COPIED
            return Kind.NONE
        if isinstance(node, cst.UnaryOperation):
            if isinstance(node.operator, cst.Not):
                return Kind.NONE
            inner = self.kind(node.expression, depth + 1)
            return inner if inner in _ANY_TENSOR else Kind.NONE
        if isinstance(node, cst.Comparison):
            if any(
                isinstance(c.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn))
                for c in node.comparisons
            ):
                return Kind.NONE
            operands = [node.left, *(c.comparator for c in node.comparisons)]
            if any(self.is_tensor_at(operand, depth) for operand in operands):
                return Kind.BOOL
            return Kind.NONE
        if isinstance(node, cst.IfExp):
            body = self.kind(node.body, depth + 1)
            return body if body is self.kind(node.orelse, depth + 1) else Kind.NONE
        return Kind.NONE

    def is_tensor_at(self, node: cst.BaseExpression, depth: int) -> bool:
        return self.kind(node, depth + 1) in _DEVICE

    def is_iterated_tensor(self, node: cst.BaseExpression) -> bool:
        """Known to be a tensor when iterated, on the host or not.

        Not a copy to the host (the copy is the finding), nor a model's output
        (iterating it may walk a tuple of outputs).
        """
        return self.kind(node) in (Kind.TENSOR, Kind.BOOL, Kind.HOST)

    def is_output(self, node: cst.BaseExpression) -> bool:
        """A model's output: a tensor, or a tuple, list or ModelOutput of them."""
        return self.kind(node) is Kind.OUTPUT

    def has_shape(self, node: cst.BaseExpression) -> bool:
        """``node.shape`` / ``node.size()`` is a device tensor's (a model's output included)."""
        return self.kind(node) in _DEVICE

    def is_host(self, node: cst.BaseExpression) -> bool:
        """Known to be a tensor on the host (made or copied there): reading it waits for nothing."""
        return self.kind(node) in _ON_HOST

    def _call(self, node: cst.Call, depth: int) -> Kind:
        func = node.func
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            receiver = func.value
            qualified = self.names.resolve(func)
            if qualified is not None:
                if (method in _TORCH_TENSOR_FUNCTIONS or method in _TORCH_BOOL_FUNCTIONS) and (
                    qualified == f"torch.{method}" or qualified == f"torch.linalg.{method}"
                ):
                    return self._torch_function(node, method, depth)
                if qualified.startswith("torch.nn.functional."):
                    return Kind.TENSOR
                last = qualified.rpartition(".")[2]
                if qualified.startswith("torch.nn.") and last[:1].isupper():
                    return Kind.MODULE
                return self._host_input(node, qualified, depth)
            receiver_kind = self.kind(receiver, depth + 1)
            if receiver_kind is not Kind.MODULE and is_host_copy(node):
                return Kind.COPIED
            if receiver_kind in _ON_HOST:
                if method == "cuda" or (method == "to" and not converts_only(node)):
                    return Kind.TENSOR
                return receiver_kind if method in _TENSOR_METHODS else Kind.NONE
            if receiver_kind in _DEVICE:
                if method in _BOOL_METHODS:
                    return Kind.BOOL
                if method in _TENSOR_METHODS:
                    return Kind.TENSOR
                if method in _REDUCTIONS_WITHOUT_DIM and not node.args:
                    return Kind.TENSOR
                return Kind.NONE
            if receiver_kind is Kind.MODULE and method == "forward":
                return Kind.TENSOR
        elif isinstance(func, cst.Name):
            callee_kind = self._envs[-1].get(func.value, Kind.NONE)
            if callee_kind is Kind.MODULE:
                return Kind.TENSOR
            if func.value in self._returns_tensor and not self.names.is_bound_locally(func.value):
                return Kind.TENSOR
            qualified = self.names.lookup(func.value)
            if qualified is not None:
                if qualified.startswith("torch.nn.functional."):
                    return Kind.TENSOR
                if qualified.startswith("torch.") and qualified.count(".") == 1:
                    name = qualified[len("torch.") :]
                    if name in _TORCH_BOOL_FUNCTIONS or name in _TORCH_TENSOR_FUNCTIONS:
                        return self._torch_function(node, name, depth)
                return self._host_input(node, qualified, depth)
        elif isinstance(func, cst.Call):
            # `nn.CrossEntropyLoss()(logits, target)`
            return Kind.TENSOR if self._call(func, depth + 1) is Kind.MODULE else Kind.NONE
        if _is_loss_callee(func):
            return Kind.TENSOR
        if is_model_call(func):
            return Kind.OUTPUT
        return Kind.NONE

    def _torch_function(self, node: cst.Call, name: str, depth: int) -> Kind:
        """The kind of ``torch.<name>(...)``: on the host for host factories and host inputs."""
        if name in HOST_FACTORIES:
            if any(arg.keyword is not None and arg.keyword.value == "device" for arg in node.args):
                return Kind.TENSOR
            if name not in ("tensor", "as_tensor") or not node.args:
                return Kind.HOST
            # `torch.as_tensor(t)` of a device tensor stays where it is.
            return (
                Kind.HOST
                if self.kind(node.args[0].value, depth + 1) not in _DEVICE
                else Kind.TENSOR
            )
        if node.args:
            first = self.kind(node.args[0].value, depth + 1)
            if first in _ON_HOST:
                return first
        return Kind.BOOL if name in _TORCH_BOOL_FUNCTIONS else Kind.TENSOR

    def _host_input(self, node: cst.Call, qualified: str, depth: int) -> Kind:
        """Any other ``torch.*`` function of a host tensor (``torch.mode(torch.tensor(xs))``),
        and the legacy constructors (``torch.Tensor(xs)``, ``torch.LongTensor(xs)``)."""
        if qualified in _LEGACY_CONSTRUCTORS:
            return Kind.HOST
        if (
            qualified.startswith("torch.")
            and not qualified.startswith("torch.nn.")
            and node.args
            and not any(
                arg.keyword is not None and arg.keyword.value == "device" for arg in node.args
            )
        ):
            first = self.kind(node.args[0].value, depth + 1)
            if first in _ON_HOST:
                return first
        return Kind.NONE

    def _is_tensor_annotation(self, annotation: cst.BaseExpression) -> bool:
        if isinstance(annotation, cst.Name) and annotation.value in _TENSOR_ANNOTATION_NAMES:
            return True
        qualified = self.names.resolve(annotation)
        if qualified is not None and qualified in _TENSOR_ANNOTATIONS:
            return True
        if qualified is not None and qualified.rpartition(".")[2] in _TENSOR_ANNOTATION_NAMES:
            return qualified.startswith("torch.")
        return False


def is_host_copy(node: cst.Call) -> bool:
    """``x.cpu()``, ``x.to("cpu")`` (also ``device="cpu"``, ``torch.device("cpu")``)."""
    func = node.func
    if not isinstance(func, cst.Attribute):
        return False
    if func.attr.value == "cpu":
        return not node.args
    return func.attr.value == "to" and _is_cpu_move(node)


def _is_cpu_move(node: cst.Call) -> bool:
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


def converts_only(node: cst.Call) -> bool:
    """``x.to(torch.float16)``, ``x.to(dtype=...)``, ``x.to(other.dtype)``: the data stays put."""
    if any(arg.keyword is not None and arg.keyword.value == "device" for arg in node.args):
        return False
    positional = [arg.value for arg in node.args if arg.keyword is None]
    if not positional:
        return any(arg.keyword is not None and arg.keyword.value == "dtype" for arg in node.args)
    name = last_name(positional[0])
    return name is not None and (name in _DTYPE_NAMES or name.endswith("_dtype"))


def _is_loss_callee(func: cst.BaseExpression) -> bool:
    name = func.attr.value if isinstance(func, cst.Attribute) else None
    if isinstance(func, cst.Name):
        name = func.value
    if name is None:
        return False
    return (
        name in _LOSS_NAMES
        or name.endswith("_loss")
        or (name.endswith("Loss") and not name[:1].isupper())
    )


def _is_string(node: cst.BaseExpression) -> bool:
    return isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))


def short_text(module: cst.Module, node: cst.CSTNode, limit: int = 40) -> str:
    """One-line source text of ``node`` for a message, shortened to ``limit``."""
    text = " ".join(module.code_for_node(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
