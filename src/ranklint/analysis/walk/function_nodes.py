"""The nodes the walk passes in each function's body, kept for a reading after the walk.

A rule whose question needs a whole function at once (is a value divided
after it is all-reduced; which names hold ranks of a group) keeps a
:class:`FunctionNodes`, feeds it the nodes of the kinds it reads from its
``visit_`` handlers, and reads each function's list once the walk is over.
The file is walked once: nothing walks a function again to find them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

if TYPE_CHECKING:
    from ranklint.analysis.walk.context import FileContext


class FunctionNodes:
    """Per function, the nodes handed to :meth:`add` in its body, in walk order.

    With ``nested``, a node belongs to every function around it (a nested
    function's nodes, a lambda's, are its outer function's too), and every
    function is kept. Without, only functions that no function encloses are
    kept (module-level functions and methods), each with the nodes that run
    with its body: not those of the functions and lambdas inside it.
    """

    def __init__(self, ctx: FileContext, *, nested: bool) -> None:
        self._ctx = ctx
        self._nested = nested
        self._nodes: dict[int, list[cst.CSTNode]] = {}
        # The functions kept, in the order the walk reached their `def`.
        self.functions: list[cst.FunctionDef] = []

    def enter(self, function: cst.FunctionDef) -> None:
        """Called from ``visit_FunctionDef``: before the walk enters the function."""
        if self._nested or not self._ctx.functions:
            self.functions.append(function)
            self._nodes[id(function)] = []

    def add(self, node: cst.CSTNode) -> None:
        """Called from the handlers of the node kinds the reader wants."""
        frames = self._ctx.functions
        if self._nested:
            for frame in frames:
                kept = self._nodes.get(id(frame.node))
                if kept is not None:
                    kept.append(node)
        elif len(frames) == 1:
            kept = self._nodes.get(id(frames[0].node))
            if kept is not None:
                kept.append(node)

    def nodes(self, function: cst.FunctionDef) -> list[cst.CSTNode]:
        """The nodes of a kept function; empty for any other."""
        return self._nodes.get(id(function), [])
