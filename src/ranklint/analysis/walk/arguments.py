"""What a call passes: the expression for a catalog parameter, literal and flag arguments.

Shared by the facts builder (:mod:`ranklint.analysis.walk.summary`) and the rules
that read a collective's arguments (roots, groups, reduce ops).
"""

from __future__ import annotations

import libcst as cst

from ranklint.analysis.walk.catalog import ParamRef
from ranklint.analysis.walk.names import dotted_name
from ranklint.model.events import FLAG_PREFIX, UNKNOWN, Literal


def find_argument(node: cst.Call, param: ParamRef | None) -> cst.BaseExpression | None:
    """The expression passed for ``param`` (by keyword or position), or ``None``."""
    if param is None:
        return None
    position = 0
    for arg in node.args:
        if arg.keyword is not None:
            if arg.keyword.value == param.keyword:
                return arg.value
            continue
        if arg.star:
            return None  # unpacked: cannot tell which parameter gets what
        if param.position is not None and position == param.position:
            return arg.value
        position += 1
    return None


def has_unpacking(node: cst.Call) -> bool:
    """``*args`` or ``**kwargs`` in the call: any parameter may be passed."""
    return any(arg.star for arg in node.args)


def is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def literal(node: cst.BaseExpression) -> Literal:
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    return UNKNOWN


def call_args(node: cst.Call) -> tuple[tuple[int | None, str | None, Literal], ...]:
    found: list[tuple[int | None, str | None, Literal]] = []
    position = 0
    for arg in node.args:
        if arg.star:
            continue  # pragma: no mutate  (a call with * or ** binds no parameter)
        value = literal(arg.value)
        if value == UNKNOWN and (name := dotted_name(arg.value)) is not None:
            # A flag passed on: decided where the caller's test decides it.
            value = FLAG_PREFIX + name
        if arg.keyword is not None:
            found.append((None, arg.keyword.value, value))
            continue
        found.append((position, None, value))
        position += 1
    return tuple(found)
