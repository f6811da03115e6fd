"""FunctionNodes: the nodes the one walk passes in each function's body, kept for later."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ranklint import Config
from ranklint.analysis.walk.context import FileContext
from ranklint.analysis.walk.function_nodes import FunctionNodes
from ranklint.analysis.walk.visitor import NodeVisitor
from ranklint.engine.walker import Walker
from ranklint.syntax import source_text


class _Calls(NodeVisitor):
    """Keeps every call, by function, as a rule reading whole functions would."""

    def __init__(self, ctx: FileContext, *, nested: bool) -> None:
        super().__init__(ctx)
        self.log = FunctionNodes(ctx, nested=nested)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.log.enter(node)

    def visit_Call(self, node: cst.Call) -> None:
        self.log.add(node)


def _kept(source: str, *, nested: bool) -> dict[str, list[str]]:
    """Function name -> the calls kept for it, as written, in walk order."""
    module = cst.parse_module(textwrap.dedent(source))
    visitor = _Calls(FileContext("m.py", module, Config().analysis_settings()), nested=nested)
    Walker(visitor.ctx, [visitor]).walk(module)
    return {
        function.name.value: [source_text(node) for node in visitor.log.nodes(function)]
        for function in visitor.log.functions
    }


_SOURCE = """
    @decorate()
    def outer(x=default()):
        first()
        def inner(y=inner_default()):
            second()
        apply(lambda: third())
        fourth()

    class Model:
        def forward(self):
            fifth()

    module_level()
"""


def test_function_nodes_without_nested_keeps_outermost_functions_with_their_own_calls() -> None:
    kept = _kept(_SOURCE, nested=False)

    assert kept == {
        "outer": ["first()", "inner_default()", "apply(lambda: third())", "fourth()"],
        "forward": ["fifth()"],
    }


def test_function_nodes_with_nested_gives_each_function_every_call_inside_it() -> None:
    kept = _kept(_SOURCE, nested=True)

    assert kept == {
        "outer": [
            "first()",
            "inner_default()",
            "second()",
            "apply(lambda: third())",
            "third()",
            "fourth()",
        ],
        "inner": ["second()"],
        "forward": ["fifth()"],
    }


@pytest.mark.parametrize("nested", [False, True])
def test_function_nodes_of_a_function_not_kept_is_empty(nested: bool) -> None:
    module = cst.parse_module("def f():\n    g()\n")
    ctx = FileContext("m.py", module, Config().analysis_settings())
    log = FunctionNodes(ctx, nested=nested)
    other = cst.parse_statement("def h():\n    pass\n")

    assert isinstance(other, cst.FunctionDef)
    assert log.nodes(other) == []
    assert log.functions == []
