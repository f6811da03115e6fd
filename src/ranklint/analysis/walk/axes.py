"""Parallel axes: which axis (tensor, data, pipeline, ...) a rank value varies along.

``tp_rank`` varies along the tensor-parallel axis only; ``rank`` along every
axis (``"*"``). Axes come from the words of identifiers and mesh-dimension
names. Also holds the default ``rank-names``: the names whose value is taken
to be the caller's rank.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import libcst as cst

from ranklint.analysis.walk.literals import string_value
from ranklint.analysis.walk.names import dotted_name

GLOBAL_AXIS = "*"


# Words of an identifier or mesh-dimension name -> parallel axis.
_AXIS_WORDS: dict[str, str] = {
    "tp": "tp",
    "tensor": "tp",
    "dp": "dp",
    "data": "dp",
    "ddp": "dp",
    "fsdp": "dp",
    "hsdp": "dp",
    "replicate": "dp",
    "shard": "dp",
    "pp": "pp",
    "pipeline": "pp",
    "pipe": "pp",
    "stage": "pp",
    "cp": "cp",
    "context": "cp",
    "ep": "ep",
    "expert": "ep",
    "moe": "ep",
    "sp": "sp",
    "sequence": "sp",
    "ulysses": "sp",
}
_WORD_SPLIT = re.compile(r"[_\W\d]+")


def axes_of_words(words: Iterable[str]) -> frozenset[str]:
    """Parallel axes named by identifier words; ``model`` alone means tp and pp."""
    found: set[str] = set()
    model = False
    for word in words:
        lowered = word.lower()
        axis = _AXIS_WORDS.get(lowered)
        if axis is not None:
            found.add(axis)
        elif lowered == "model":
            model = True
    if model and not found:
        found = {"tp", "pp"}
    return frozenset(found)


def identifier_words(name: str) -> list[str]:
    return [word for word in _WORD_SPLIT.split(name) if word]


def axes_of_expression(node: cst.BaseExpression) -> frozenset[str]:
    """Axes named anywhere in a group or rank expression (names, mesh-dimension strings)."""
    words: list[str] = []
    _collect_words(node, words, depth=0)
    return axes_of_words(words)


def _collect_words(node: cst.CSTNode, words: list[str], depth: int) -> None:
    if depth > 12:
        return
    if isinstance(node, cst.Name):
        words += identifier_words(node.value)
    elif isinstance(node, cst.Attribute):
        _collect_words(node.value, words, depth + 1)
        words += identifier_words(node.attr.value)
    elif isinstance(node, cst.SimpleString):
        words += identifier_words(string_value(node) or "")
    elif isinstance(node, cst.Call):
        _collect_words(node.func, words, depth + 1)
        for arg in node.args:
            if isinstance(arg.value, (cst.SimpleString, cst.Name, cst.Attribute)):
                _collect_words(arg.value, words, depth + 1)
    elif isinstance(node, cst.Subscript):
        _collect_words(node.value, words, depth + 1)
        for element in node.slice:
            if isinstance(element.slice, cst.Index):
                _collect_words(element.slice.value, words, depth + 1)
    elif isinstance(node, (cst.Tuple, cst.List)):
        for element in node.elements:
            _collect_words(element.value, words, depth + 1)


def rank_axes(name: str) -> frozenset[str]:
    axes = axes_of_words(identifier_words(name))
    return axes if axes else frozenset({GLOBAL_AXIS})


def is_axis_subgroup(group: cst.BaseExpression | None) -> bool:
    """A group argument that is surely a subgroup: one along a parallel axis
    (`dp_group`, `mesh["tp"].get_group()`), not the default (`None`, `WORLD`) nor a
    group of unknown make-up (an RL trainer's weight-sync group, whose ranks may
    map to themselves)."""
    if group is None or (isinstance(group, cst.Name) and group.value == "None"):
        return False
    if (dotted_name(group) or "").endswith("WORLD"):
        return False
    return bool(axes_of_expression(group))
