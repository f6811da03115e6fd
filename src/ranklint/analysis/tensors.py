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

Anything else is unknown and never reported as an implicit sync. Names are
tracked per function; ``loss = loss.item()`` makes ``loss`` a Python number
again.
"""

from __future__ import annotations

import enum

import libcst as cst

from ranklint.analysis.hot_markers import is_model_call
from ranklint.analysis.names import NameTable


class Kind(enum.Enum):
    NONE = 0  # not known to be a tensor
    TENSOR = 1
    BOOL = 2  # a boolean tensor (a mask)
    MODULE = 3  # an nn module instance: calling it gives a tensor
    HOST = 4  # a tensor made on the host (a factory without `device=`): no sync to read it


_DEVICE = (Kind.TENSOR, Kind.BOOL)
# Factories that allocate on the host unless given `device=`.
HOST_FACTORIES = frozenset(
    {
        "zeros",
        "ones",
        "empty",
        "full",
        "rand",
        "randn",
        "randint",
        "arange",
        "linspace",
        "tensor",
        "as_tensor",
        "from_numpy",
    }
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
    {
        "tensor",
        "as_tensor",
        "from_numpy",
        "zeros",
        "ones",
        "empty",
        "full",
        "rand",
        "randn",
        "randint",
        "randperm",
        "arange",
        "linspace",
        "logspace",
        "eye",
        "zeros_like",
        "ones_like",
        "empty_like",
        "full_like",
        "rand_like",
        "randn_like",
        "cat",
        "concat",
        "concatenate",
        "stack",
        "hstack",
        "vstack",
        "where",
        "matmul",
        "mm",
        "bmm",
        "einsum",
        "sum",
        "mean",
        "std",
        "var",
        "norm",
        "abs",
        "exp",
        "log",
        "sqrt",
        "rsqrt",
        "sigmoid",
        "tanh",
        "relu",
        "softmax",
        "log_softmax",
        "argmax",
        "argmin",
        "clamp",
        "clip",
        "gather",
        "index_select",
        "masked_fill",
        "outer",
        "dot",
        "cumsum",
        "prod",
        "square",
        "pow",
        "mul",
        "add",
        "sub",
        "div",
        "maximum",
        "minimum",
        "flatten",
        "reshape",
        "transpose",
        "permute",
        "squeeze",
        "unsqueeze",
        "clone",
        "tril",
        "triu",
        "multinomial",
        "bernoulli",
        "normal",
        "cdist",
        "nan_to_num",
        "sign",
        "floor",
        "ceil",
        "round",
        "log1p",
        "expm1",
        "erf",
        "lerp",
        "addmm",
        "baddbmm",
        "amax",
        "amin",
        "logsumexp",
    }
)
_TORCH_BOOL_FUNCTIONS = frozenset(
    {
        "isnan",
        "isinf",
        "isfinite",
        "isclose",
        "isin",
        "logical_and",
        "logical_or",
        "logical_not",
        "logical_xor",
        "eq",
        "ne",
        "gt",
        "lt",
        "ge",
        "le",
        "any",
        "all",
    }
)
# Tensor methods that return a tensor of the same kind of data.
_TENSOR_METHODS = frozenset(
    {
        "sum",
        "mean",
        "std",
        "var",
        "norm",
        "abs",
        "exp",
        "log",
        "sqrt",
        "pow",
        "argmax",
        "argmin",
        "detach",
        "clone",
        "float",
        "half",
        "double",
        "bfloat16",
        "int",
        "long",
        "to",
        "cuda",
        "view",
        "view_as",
        "reshape",
        "flatten",
        "squeeze",
        "unsqueeze",
        "transpose",
        "permute",
        "contiguous",
        "t",
        "mul",
        "add",
        "sub",
        "div",
        "neg",
        "sigmoid",
        "softmax",
        "log_softmax",
        "clamp",
        "masked_fill",
        "gather",
        "square",
        "prod",
        "cumsum",
        "type_as",
        "expand",
        "expand_as",
        "repeat",
        "amax",
        "amin",
        "logsumexp",
        "full_tensor",
        "redistribute",
        "to_local",
        "sub_",
        "add_",
        "mul_",
        "div_",
        "clamp_",
        "zero_",
        "fill_",
        "copy_",
    }
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


class TensorTypes:
    """Evaluates whether expressions are tensors at the current point of the walk."""

    def __init__(self, names: NameTable) -> None:
        self.names = names
        self._envs: list[dict[str, Kind]] = [{}]
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

    def pop(self) -> None:
        if len(self._envs) > 1:
            self._envs.pop()

    def bind_params(self, params: cst.Parameters) -> None:
        env = self._envs[-1]
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            if param.annotation is not None and self._is_tensor_annotation(
                param.annotation.annotation
            ):
                env[param.name.value] = Kind.TENSOR

    def bind(self, target: cst.BaseExpression, kind: Kind) -> None:
        if isinstance(target, cst.Name):
            env = self._envs[-1]
            if kind is Kind.NONE:
                env.pop(target.value, None)
            else:
                env[target.value] = kind
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self.bind(element.value, Kind.NONE)

    def bind_assignment(
        self, targets: list[cst.BaseExpression], value: cst.BaseExpression | None
    ) -> None:
        kind = self.kind(value) if value is not None else Kind.NONE
        for target in targets:
            self.bind(target, kind)

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
        elif (
            isinstance(iterable, cst.Call)
            and isinstance(iterable.func, cst.Attribute)
            and iterable.func.attr.value == "parameters"
        ):
            kind = Kind.TENSOR
        self.bind(target, kind)

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
            if attr in _OUTPUT_ATTRIBUTES:
                return Kind.TENSOR
            if attr in _TENSOR_ATTRIBUTES and self.is_tensor_at(node.value, depth):
                return Kind.TENSOR
            return Kind.NONE
        if isinstance(node, cst.Subscript):
            inner = self.kind(node.value, depth + 1)
            return inner if inner in (Kind.TENSOR, Kind.BOOL, Kind.HOST) else Kind.NONE
        if isinstance(node, cst.BinaryOperation):
            if isinstance(node.operator, cst.Modulo) and _is_string(node.left):
                return Kind.NONE
            left = self.kind(node.left, depth + 1)
            right = self.kind(node.right, depth + 1)
            masks = Kind.BOOL in (left, right) and Kind.TENSOR not in (left, right)
            if isinstance(node.operator, _BITWISE) and masks:
                return Kind.BOOL
            if isinstance(node.operator, (*_ARITHMETIC, *_BITWISE, cst.Modulo)):
                if left in _DEVICE or right in _DEVICE:
                    return Kind.TENSOR
                if Kind.HOST in (left, right):
                    return Kind.HOST
            return Kind.NONE
        if isinstance(node, cst.UnaryOperation):
            if isinstance(node.operator, cst.Not):
                return Kind.NONE
            inner = self.kind(node.expression, depth + 1)
            return inner if inner in (Kind.TENSOR, Kind.BOOL, Kind.HOST) else Kind.NONE
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

    def is_any_tensor(self, node: cst.BaseExpression) -> bool:
        """Known to be a tensor, on the host or not."""
        return self.kind(node) in (Kind.TENSOR, Kind.BOOL, Kind.HOST)

    def is_host(self, node: cst.BaseExpression) -> bool:
        """Known to be a tensor on the host: reading it waits for nothing."""
        return self.kind(node) is Kind.HOST

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
                return Kind.NONE
            receiver_kind = self.kind(receiver, depth + 1)
            if receiver_kind is Kind.HOST:
                if method == "to" or method == "cuda":
                    return Kind.TENSOR
                return Kind.HOST if method in _TENSOR_METHODS else Kind.NONE
            if receiver_kind in (Kind.TENSOR, Kind.BOOL):
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
                return Kind.NONE
        elif isinstance(func, cst.Call):
            # `nn.CrossEntropyLoss()(logits, target)`
            return Kind.TENSOR if self._call(func, depth + 1) is Kind.MODULE else Kind.NONE
        if _is_loss_callee(func) or is_model_call(func):
            return Kind.TENSOR
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
        if node.args and self.kind(node.args[0].value, depth + 1) is Kind.HOST:
            return Kind.HOST
        return Kind.BOOL if name in _TORCH_BOOL_FUNCTIONS else Kind.TENSOR

    def _is_tensor_annotation(self, annotation: cst.BaseExpression) -> bool:
        if isinstance(annotation, cst.Name) and annotation.value in _TENSOR_ANNOTATION_NAMES:
            return True
        qualified = self.names.resolve(annotation)
        if qualified is not None and qualified in _TENSOR_ANNOTATIONS:
            return True
        if qualified is not None and qualified.rpartition(".")[2] in _TENSOR_ANNOTATION_NAMES:
            return qualified.startswith("torch.")
        return False


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
