"""Containers a rank value flows through: dicts with constant keys, and changes in place.

``flags = {"main": rank == 0}`` then ``if flags["main"]:`` tests the rank: the
taint of each constant key's value is kept under a name of its own
(:func:`key_slot`), so that reading that key gives the value's taint and not
the whole dict's. The dict itself is as rank-dependent as its keys: its length
and what iterating it gives; a value is read through its key.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ranklint.analysis.walk.literals import int_value, string_value
from ranklint.model.taint import Taint

# A dict batch's keys are its schema, the same on every rank (`batch.items()`).
SCHEMA_METHODS = frozenset({"keys", "items", "values"})
# Methods that add to or remove from a list, dict or set in place. (`reverse` and `sort`
# change the order only, which `sorted(...)` undoes: a taint has no order of its own.)
MUTATORS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "update",
        "add",
        "setdefault",
        "pop",
        "popitem",
        "remove",
        "discard",
        "clear",
    }
)


def key_slot(container: cst.BaseExpression, key: cst.BaseExpression) -> str | None:
    """The name the taint of ``container[key]`` is kept under, for a local name and a
    string or integer literal key (``flags["main"]``: ``flags['main']``); else None.
    No Python name looks like it."""
    if not isinstance(container, cst.Name):
        return None
    literal: str | int | None = string_value(key)
    if literal is None:
        literal = int_value(key)
    return None if literal is None else f"{container.value}[{literal!r}]"


def subscript_slot(node: cst.Subscript) -> str | None:
    """:func:`key_slot` of ``name[key]`` with one plain index; else None."""
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    return key_slot(node.value, node.slice[0].slice.value)


def literal_items(name: cst.Name, value: cst.Dict) -> Iterator[tuple[str, cst.BaseExpression]]:
    """(slot, value) of each constant key of a dict literal assigned to ``name``."""
    for element in value.elements:
        if isinstance(element, cst.DictElement):
            slot = key_slot(name, element.key)
            if slot is not None:
                yield slot, element.value


def target_taints(target: cst.BaseExpression, value: Taint) -> dict[str, Taint]:
    """Names a comprehension target binds, each to ``value`` (what the comprehension
    builds is joined with its iterables anyway, so unpacking needs no finer part)."""
    if isinstance(target, cst.Name):
        return {target.value: value}
    out: dict[str, Taint] = {}
    for element in target.elements if isinstance(target, (cst.Tuple, cst.List)) else ():
        out.update(target_taints(element.value, value))
    return out
