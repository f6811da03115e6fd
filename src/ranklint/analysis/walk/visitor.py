"""The node-visitor protocol of the one walk: handler tables built from method names.

A visitor defines ``visit_<Node>`` / ``leave_<Node>`` methods named after
libcst node classes; the walker calls them as it passes such nodes. Fact
recorders (:mod:`ranklint.analysis.walk.host_costs`, :mod:`ranklint.analysis.walk.mesh`)
and rules are visitors; they read the shared
:class:`~ranklint.analysis.walk.context.FileContext`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import libcst as cst

if TYPE_CHECKING:
    from ranklint.analysis.walk.context import FileContext


class NodeVisitor:
    """Base class of everything the walker dispatches to."""

    # Names the visitor in internal-error reports.
    where: ClassVar[str] = "visitor"
    # node class -> method name, filled per subclass from its visit_/leave_ methods.
    handlers_on_visit: ClassVar[dict[type[cst.CSTNode], str]] = {}
    handlers_on_leave: ClassVar[dict[type[cst.CSTNode], str]] = {}

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.handlers_on_visit = _handler_table(cls, "visit_")
        cls.handlers_on_leave = _handler_table(cls, "leave_")


def _handler_table(cls: type[NodeVisitor], prefix: str) -> dict[type[cst.CSTNode], str]:
    table: dict[type[cst.CSTNode], str] = {}
    for attr in dir(cls):
        if not attr.startswith(prefix):
            continue
        node_type = getattr(cst, attr[len(prefix) :], None)
        if not (isinstance(node_type, type) and issubclass(node_type, cst.CSTNode)):
            raise TypeError(f"{cls.__name__}.{attr}: {attr[len(prefix) :]} is not a libcst node")
        table[node_type] = attr
    return table
