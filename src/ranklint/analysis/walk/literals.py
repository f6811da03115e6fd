"""Literal values read from the syntax tree: strings, integers, environment writes.

Facts any rule family may read; they never compile or evaluate code beyond a
string literal's escapes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import libcst as cst

_LONGEST_STRING = 400


def string_value(node: cst.BaseExpression) -> str | None:
    """The value of a plain string literal (no f-string, no bytes), else None."""
    if isinstance(node, cst.SimpleString) and "b" not in node.prefix.lower():
        raw = node.value
        if len(raw) > _LONGEST_STRING:
            return None  # no rule looks at long text; evaluating it costs a compile
        if "\\" not in raw:
            # No escapes: the text between the quotes is the value (no compile).
            quote = raw[len(node.prefix) :][:3]
            width = 3 if quote in ('"""', "'''") else 1
            return raw[len(node.prefix) + width : len(raw) - width]
        try:
            value = node.evaluated_value
        except (SyntaxError, ValueError, MemoryError):
            return None
        return value if isinstance(value, str) else None  # pragma: no mutate  (never bytes here)
    if isinstance(node, cst.ConcatenatedString):
        left, right = string_value(node.left), string_value(node.right)  # type: ignore[arg-type]
        return None if left is None or right is None else left + right
    return None


def int_value(node: cst.BaseExpression) -> int | None:
    """The value of an integer literal (libcst has checked its syntax), else None."""
    if isinstance(node, cst.Integer):
        return int(node.value, 0)  # base 0 reads prefixes and underscores as Python does
    return None


def index_value(part: cst.BaseSlice) -> int | None:
    """The integer of a subscript index written as a literal (``[1]``, ``[-1]``)."""
    if not isinstance(part, cst.Index):
        return None
    value = part.value
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
        number = int_value(value.expression)
        return None if number is None else -number
    return int_value(value)


_ENVIRON_WRITERS = frozenset({"setdefault", "putenv", "update"})


def environ_writes(
    node: cst.CSTNode, resolve: Callable[[cst.BaseExpression], str | None]
) -> Iterator[tuple[str, cst.BaseExpression | None, cst.CSTNode]]:
    """(variable, value expression, node to report) for writes to ``os.environ`` in ``node``.

    Handles ``os.environ["X"] = v``, ``os.environ.setdefault("X", v)``,
    ``os.putenv("X", v)`` and ``os.environ.update({"X": v}, X=v)``.
    """
    if isinstance(node, cst.Assign):
        if not any(isinstance(target.target, cst.Subscript) for target in node.targets):
            return
        for target in node.targets:
            subject = target.target
            if (
                isinstance(subject, cst.Subscript)
                and resolve(subject.value) == "os.environ"
                and len(subject.slice) == 1
                and isinstance(subject.slice[0].slice, cst.Index)
            ):
                key = string_value(subject.slice[0].slice.value)
                if key is not None:
                    yield key, node.value, node
        return
    if not (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value in _ENVIRON_WRITERS
    ):
        return
    name = resolve(node.func)
    if name in ("os.environ.setdefault", "os.putenv") and node.args:
        key = string_value(node.args[0].value)
        if key is not None:
            value = node.args[1].value if len(node.args) > 1 else None
            yield key, value, node
    elif name == "os.environ.update":
        for arg in node.args:
            if arg.keyword is not None:
                yield arg.keyword.value, arg.value, node
            elif isinstance(arg.value, cst.Dict):
                for element in arg.value.elements:
                    if isinstance(element, cst.DictElement):
                        key = string_value(element.key)
                        if key is not None:
                            yield key, element.value, node
