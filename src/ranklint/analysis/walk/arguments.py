"""What a call passes: the expression for a catalog parameter, literal and flag arguments.

Shared by the facts builder (:mod:`ranklint.analysis.walk.summary`) and the rules
that read a collective's arguments (roots, groups, reduce ops).
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ranklint.analysis.walk.catalog import CallSpec, ParamRef
from ranklint.analysis.walk.names import dotted_name
from ranklint.model.events import FLAG_PREFIX, UNKNOWN, Literal
from ranklint.model.taint import Taint
from ranklint.syntax import source_text


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


def call_args(
    node: cst.Call, wrapped: Callable[[cst.BaseExpression], str | None] = lambda _: None
) -> tuple[tuple[int | None, str | None, Literal], ...]:
    """(position, keyword, value) of each argument: a literal, a name passed on
    (FLAG_PREFIX), a wrapped model (``wrapped``: see analysis.walk.wrapped), or UNKNOWN."""
    found: list[tuple[int | None, str | None, Literal]] = []
    position = 0
    for arg in node.args:
        if arg.star:
            continue  # pragma: no mutate  (a call with * or ** binds no parameter)
        value = literal(arg.value)
        if value == UNKNOWN and (model := wrapped(arg.value)) is not None:
            value = model
        elif value == UNKNOWN and (name := dotted_name(arg.value)) is not None:
            # A flag passed on: decided where the caller's test decides it.
            value = FLAG_PREFIX + name
        if arg.keyword is not None:
            found.append((None, arg.keyword.value, value))
            continue
        found.append((position, None, value))
        position += 1
    return tuple(found)


_CONSTANTS = (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString, cst.Ellipsis)


def rank_arguments(
    node: cst.Call, taint_of: Callable[[cst.BaseExpression], Taint]
) -> tuple[tuple[int | None, str | None, str, Taint], ...]:
    """The arguments whose value may depend on the rank, as (position, keyword,
    source text, taint); the position counts as in :func:`call_args`."""
    found: list[tuple[int | None, str | None, str, Taint]] = []
    position = 0
    for arg in node.args:
        if arg.star:
            continue  # pragma: no mutate  (a call with * or ** binds no parameter)
        keyword = arg.keyword.value if arg.keyword is not None else None
        # (A shortcut: a literal has no taint; its mutants read the same, not mutated.)
        if (
            not isinstance(arg.value, _CONSTANTS) and literal(arg.value) == UNKNOWN
        ):  # pragma: no mutate
            taint = taint_of(arg.value)
            if taint.possible:
                text = " ".join(source_text(arg.value).split())
                found.append((None if keyword else position, keyword, text, taint))
        if keyword is None:
            position += 1
    return tuple(found)


def group_arguments(
    node: cst.Call, made: Callable[[cst.BaseExpression], str | None] | None
) -> tuple[tuple[int | None, str | None, str], ...]:
    """The arguments that are groups whose make-up the caller shows (``made``: how
    a value was made, see analysis.walk.membership.made_group; None: no argument
    is), as (position, keyword, how); the position counts as in :func:`call_args`."""
    found: list[tuple[int | None, str | None, str]] = []
    if made is None:
        return ()
    position = 0
    for arg in node.args:
        if arg.star:
            continue  # pragma: no mutate  (a call with * or ** binds no parameter)
        keyword = arg.keyword.value if arg.keyword is not None else None
        how = made(arg.value)
        if how is not None:
            found.append((None if keyword else position, keyword, how))
        if keyword is None:
            position += 1
    return tuple(found)


# Rooted collectives whose first argument receives what the root sends.
_RECEIVING_NAMES = frozenset(
    {"broadcast", "broadcast_object_list", "scatter", "scatter_object_list", "recv", "irecv"}
)


def received_buffer(op: str, node: cst.Call) -> frozenset[str]:
    """The buffer a rooted collective ``op`` fills from its root, by name (``msg``
    in ``broadcast(msg, src=0)``): one name, or none."""
    name = dotted_name(node.args[0].value) if op in _RECEIVING_NAMES and node.args else None
    return frozenset() if name is None else frozenset({name})


_REDUCE_OPS = frozenset(
    {"SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM"}
)


def reduce_op_name(node: cst.Call, spec: CallSpec) -> str | None:
    """A reduction's op as a ``ReduceOp`` member name: ``MAX`` for
    ``op=dist.ReduceOp.MAX``, ``SUM`` where the call leaves it out; ``None``
    where ``spec`` takes no op or the op is not a ``ReduceOp`` member written out."""
    if spec.op is None:
        return None
    argument = find_argument(node, spec.op)
    if argument is None:
        return "SUM"
    name = dotted_name(argument) or ""
    owner, _, member = name.rpartition(".")
    return member if member in _REDUCE_OPS and owner.endswith("ReduceOp") else None
