"""Fast iteration over libcst nodes.

``CSTNode.children`` rebuilds the node through a visitor on every call; the
analyses that read a function's body ahead of the walk (``group_local``,
``dist_state``, ``reductions``) would pay that for every node. These helpers
read the dataclass fields instead, skipping whitespace and punctuation (the
engine's walker uses the same tables).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import libcst as cst

# Fields that only ever hold whitespace, comments or punctuation.
_TRIVIA_FIELDS = frozenset(
    {
        "lpar",
        "rpar",
        "leading_lines",
        "lines_after_decorators",
        "header",
        "footer",
        "comma",
        "semicolon",
        "trailing_whitespace",
        "equal",
        "colon",
        "dot",
        "newline",
    }
)
_CHILD_FIELDS: dict[type[cst.CSTNode], tuple[str, ...]] = {}

NODE, SEQUENCE, _OTHER = "node", "sequence", "other"
_VALUE_KINDS: dict[type, str] = {}


def value_kind(cls: type) -> str:
    """Whether a field value's type is a node, a sequence, or neither (cached per type).

    ``isinstance(x, cst.CSTNode)`` goes through ABC machinery on every call;
    the walk asks it for every field of every node.
    """
    kind = _VALUE_KINDS.get(cls)  # pragma: no mutate  (a cache: a miss costs only time)
    if kind is None:
        if issubclass(cls, cst.CSTNode):
            kind = NODE
        elif issubclass(cls, (tuple, list)):
            kind = SEQUENCE
        else:
            kind = _OTHER
        _VALUE_KINDS[cls] = kind  # pragma: no mutate  (a cache: a miss costs only time)
    return kind


def child_fields(cls: type[cst.CSTNode]) -> tuple[str, ...]:
    names = _CHILD_FIELDS.get(cls)  # pragma: no mutate  (a cache: a miss costs only time)
    if names is None:
        names = tuple(
            field.name
            for field in dataclasses.fields(cls)
            if field.name not in _TRIVIA_FIELDS and "whitespace" not in field.name
        )
        _CHILD_FIELDS[cls] = names  # pragma: no mutate  (a cache: a miss costs only time)
    return names


def child_nodes(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The nodes directly under ``node``, in source order, whitespace and punctuation left out.

    (The walker inlines this loop: it runs for every node of every file.)
    """
    children: list[cst.CSTNode] = []
    for name in child_fields(type(node)):
        value = getattr(node, name)
        kind = value_kind(type(value))
        if kind is NODE:
            children.append(value)
        elif kind is SEQUENCE:
            children.extend(item for item in value if value_kind(type(item)) is NODE)
    return children


def source_text(node: cst.CSTNode) -> str:
    """``node`` as written (its own code, without the module's formatting context)."""
    return cst.Module([]).code_for_node(node)  # pragma: no mutate  (the body is never read)


def reads_name(node: cst.CSTNode, name: str, *, budget: int | None = None) -> bool:
    """Whether ``node`` reads the variable ``name``.

    A read is a ``Name`` node: not the attribute of ``x.name``, not the keyword
    of ``f(name=...)``, not inside a function or lambda that ``node`` defines.
    With ``budget``, at most that many nodes are looked at (a bound on the
    cost of a question asked at many places); past it, the answer is False.
    """
    stack: list[cst.CSTNode] = [node]
    seen = 0
    while stack and (budget is None or seen < budget):
        current = stack.pop()
        seen += 1
        if isinstance(current, cst.Name):
            if current.value == name:
                return True
        elif isinstance(current, (cst.Attribute, cst.Arg)):
            stack.append(current.value)  # `x.name`, `f(name=x)`: only `x` is read
        elif current is node or not isinstance(current, (cst.FunctionDef, cst.Lambda)):
            stack.extend(child_nodes(current))
    return False


def iter_nodes(node: cst.CSTNode, *, into_functions: bool = True) -> Iterator[cst.CSTNode]:
    """``node`` and every node under it, in source order.

    With ``into_functions=False``, the bodies of nested functions and lambdas
    (code that does not run with ``node``) are not entered.
    """
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        yield current
        if not into_functions and isinstance(current, (cst.FunctionDef, cst.Lambda)):
            continue
        children = child_nodes(current)
        stack.extend(reversed(children))


def placement(
    module: cst.Module, target: cst.CSTNode
) -> tuple[cst.CSTNode | None, cst.CSTNode | None]:
    """(innermost simple statement line, module-level statement) holding ``target``.

    What the walker's context holds while it visits ``target``: for rules that
    decide after the walk and report then.
    """
    for top in module.body:
        stack: list[tuple[cst.CSTNode, cst.CSTNode | None]] = [(top, None)]
        while stack:
            current, line = stack.pop()
            if isinstance(current, cst.SimpleStatementLine):
                line = current
            if current is target:
                return line, top
            stack.extend((child, line) for child in child_nodes(current))
    return None, None


def boolean_operands(
    node: cst.BaseExpression, operator: type[cst.BaseBooleanOp]
) -> list[cst.BaseExpression]:
    """Operands of a left-nested chain of one boolean operator, in order, iteratively."""
    operands: list[cst.BaseExpression] = []
    pending: list[cst.BaseExpression] = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, cst.BooleanOperation) and isinstance(current.operator, operator):
            pending.append(current.right)
            pending.append(current.left)
        else:
            operands.append(current)
    return operands


def awaited(node: cst.BaseExpression) -> cst.BaseExpression:
    """The awaited expression of ``await x``; ``node`` itself otherwise."""
    return node.expression if isinstance(node, cst.Await) else node


def target_name(node: cst.BaseExpression) -> str:
    """``rank`` of ``rank`` and of ``self.rank``; empty for other targets."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return ""


def suite_statements(block: cst.BaseSuite) -> list[cst.BaseStatement]:
    """The statements of a block; a one-line block (`if x: y = 1`) as one line."""
    if isinstance(block, cst.IndentedBlock):
        return list(block.body)
    assert isinstance(block, cst.SimpleStatementSuite)
    return [cst.SimpleStatementLine(body=block.body)]


def block_statements(statement: cst.BaseCompoundStatement) -> list[cst.BaseStatement]:
    """The statements of every block under a compound statement: its body, a
    ``try``'s handlers, its ``else`` and ``finally``, an ``elif`` as one statement,
    and a ``match``'s cases (which it has instead of a body)."""
    if isinstance(statement, cst.Match):
        return [line for case in statement.cases for line in suite_statements(case.body)]
    out: list[cst.BaseStatement] = []
    for block in (
        statement.body,
        *(handler.body for handler in getattr(statement, "handlers", ())),
        getattr(getattr(statement, "orelse", None), "body", None),
        getattr(getattr(statement, "finalbody", None), "body", None),
    ):
        if block is not None:
            out += suite_statements(block)
    orelse = getattr(statement, "orelse", None)
    if isinstance(orelse, cst.If):
        out.append(orelse)
    return out


def parameter_names(function: cst.FunctionDef) -> list[str]:
    """The names of ``function``'s parameters in order, ``*args`` and ``**kwargs`` included."""
    params = function.params
    found = [p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)]
    stars = (params.star_arg, params.star_kwarg)
    return found + [star.name.value for star in stars if isinstance(star, cst.Param)]
