"""Python loops over tensors, per file: which loops walk a tensor's elements.

Helpers of the host-cost recorder (:mod:`ranklint.analysis.walk.host_costs`) for
the tensor-loop rule: a sampler's schedule is not a tensor loop, a host index into Python
data (``data[i]``, ``data[i : i + 8]``) launches nothing per element, and
``for i in range(len(t)): t[i]`` walks ``t``.
"""

from __future__ import annotations

import libcst as cst

from ranklint.analysis.walk.axes import identifier_words
from ranklint.analysis.walk.names import last_name
from ranklint.analysis.walk.tensors import TENSOR_MEMBERS, TensorTypes
from ranklint.syntax import reads_name

# Words of a sampling schedule: `for t in time_steps:` runs one model step per element.
# How many nodes of a slice bound are read for a loop variable (`t[i : i + 8]`).
_BOUND_BUDGET = 200
_SCHEDULE_WORDS = frozenset({"timesteps", "timestep", "time", "times", "sigmas", "schedule"})


def is_schedule(node: cst.BaseExpression) -> bool:
    """``time_steps``, ``scheduler.timesteps``, ``sigmas[1:]``: a diffusion sampler's schedule."""
    for _ in range(8):  # pragma: no mutate  (a bound on the chain)
        if isinstance(node, cst.Subscript):
            node = node.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            node = node.func.value
        else:
            break
    if not isinstance(node, (cst.Name, cst.Attribute)):
        return False
    name = last_name(node)
    return name is not None and bool(
        {word.lower() for word in identifier_words(name)} & _SCHEDULE_WORDS
    )


def used_as(tree: cst.CSTNode, name: str, *, record: bool) -> bool:
    """Whether ``tree`` indexes something by ``name`` (``data[i]``) or, with ``record``,
    reads ``name`` as a record (``name[0]``, ``name["k"]``, ``name.text``); within 2000 nodes."""
    stack: list[cst.CSTNode] = [tree]
    seen = 0
    while stack and seen < 2000:
        current = stack.pop()
        seen += 1
        if isinstance(current, cst.Subscript):
            indices = [e.slice.value for e in current.slice if isinstance(e.slice, cst.Index)]
            if record and _is_name(current.value, name) and len(current.slice) == 1:
                if indices and isinstance(indices[0], (cst.Integer, cst.SimpleString)):
                    return True
            elif not record and any(_is_name(index, name) for index in indices):
                return True
            elif not record and any(
                reads_name(bound, name, budget=_BOUND_BUDGET)
                for element in current.slice
                if isinstance(element.slice, cst.Slice)
                for bound in (element.slice.lower, element.slice.upper, element.slice.step)
                if bound is not None
            ):
                return True  # `data[i : i + 8]`: a window of Python data
        elif (
            record
            and isinstance(current, cst.Attribute)
            and _is_name(current.value, name)
            and current.attr.value not in TENSOR_MEMBERS
        ):
            return True
        stack.extend(current.children)
    return False


def _is_name(node: cst.CSTNode, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name


def range_over(node: cst.BaseExpression, tensors: TensorTypes) -> str | None:
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
    shaped = True  # `t.size(0)`, `t.shape[0]`: only a tensor has them
    if isinstance(bound, cst.Call):
        func = bound.func
        if isinstance(func, cst.Name) and func.value == "len" and bound.args:
            subject = bound.args[0].value
            shaped = False  # pragma: no mutate  (`None` reads as `False`)
        elif isinstance(func, cst.Attribute) and func.attr.value == "size":
            subject = func.value
    elif (
        isinstance(bound, cst.Subscript)
        and isinstance(bound.value, cst.Attribute)
        and bound.value.attr.value == "shape"
    ):
        subject = bound.value.value
    if isinstance(subject, cst.Name) and (
        tensors.has_shape(subject) if shaped else tensors.is_iterated_tensor(subject)
    ):
        return subject.value
    return None


def indexes(body: cst.CSTNode, tensor: str, index: str) -> bool:
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
