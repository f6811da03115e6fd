"""The node helpers every analysis walks with, and the visitor protocol's handler tables."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst
import pytest

from ranklint import Config
from ranklint import syntax as nodes
from ranklint.analysis.walk.settings import AnalysisSettings
from ranklint.analysis.walk.visitor import NodeVisitor
from ranklint.engine import Linter
from ranklint.engine.spans import spans_of
from ranklint.engine.walker import Walker
from ranklint.syntax import (
    child_nodes,
    iter_nodes,
    placement,
    reads_name,
    source_text,
    value_kind,
)


@pytest.fixture
def cold_caches() -> Iterator[None]:
    """The per-type caches as a fresh process has them: empty."""
    saved = (dict(nodes._VALUE_KINDS), dict(nodes._CHILD_FIELDS))
    nodes._VALUE_KINDS.clear()
    nodes._CHILD_FIELDS.clear()
    yield
    nodes._VALUE_KINDS.update(saved[0])
    nodes._CHILD_FIELDS.update(saved[1])


@pytest.mark.usefixtures("cold_caches")
@pytest.mark.parametrize(
    ("value", "expected"),
    [(cst.Name("x"), "node"), ((), "sequence"), ([], "sequence"), ("x", "other"), (None, "other")],
)
def test_value_kind_tells_nodes_sequences_and_other_values_apart(
    value: object, expected: str
) -> None:
    first = value_kind(type(value))
    again = value_kind(type(value))

    assert (first, again) == (expected, expected)


@pytest.mark.usefixtures("cold_caches")
def test_child_nodes_are_the_non_whitespace_children_in_source_order() -> None:
    expression = cst.parse_expression("f(a, *b, key=(c + d))")

    first = child_nodes(expression)
    again = child_nodes(expression)

    assert [source_text(child) for child in first] == ["f", "a, ", "*b, ", "key=(c + d)"]
    assert again == first


@pytest.mark.usefixtures("cold_caches")
def test_child_nodes_of_an_operation_include_its_operator_but_not_its_whitespace() -> None:
    expression = cst.parse_expression("a  +  b")

    children = child_nodes(expression)

    assert [type(child).__name__ for child in children] == ["Name", "Add", "Name"]


def test_source_text_is_a_nodes_own_code() -> None:
    statement = cst.parse_statement("if x:\n    y = 1\n")

    assert source_text(statement) == "if x:\n    y = 1\n"


_NESTED = """
def outer():
    a = 1

    def inner():
        b = 2

    c = lambda: d
"""


def _names(node: cst.CSTNode, **kwargs: bool) -> list[str]:
    return [n.value for n in iter_nodes(node, **kwargs) if isinstance(n, cst.Name)]


def test_iter_nodes_enters_nested_functions_by_default_and_not_when_told() -> None:
    outer = cst.parse_module(_NESTED).body[0]
    assert isinstance(outer, cst.FunctionDef)

    assert _names(outer) == ["outer", "a", "inner", "b", "c", "d"]
    assert _names(outer.body, into_functions=False) == ["a", "c"]


def test_placement_gives_the_innermost_simple_statement_and_the_module_statement() -> None:
    module = cst.parse_module("x = 1\nif x:\n    y = f(x)\n")
    branch = module.body[1]
    assert isinstance(branch, cst.If)
    line = branch.body.body[0]
    assert isinstance(line, cst.SimpleStatementLine)
    call = line.body[0].value  # type: ignore[attr-defined]

    assert placement(module, call) == (line, branch)
    assert placement(module, branch) == (None, branch)
    assert placement(module, cst.Name("elsewhere")) == (None, None)


def test_a_missing_analysis_setting_is_named_in_the_error() -> None:
    settings = AnalysisSettings({"rank_names": ("rank",)})

    with pytest.raises(AttributeError, match="no analysis setting 'not_there'"):
        _ = settings.not_there


def test_spans_include_the_first_and_last_lines_of_the_statement_holding_the_node() -> None:
    module = cst.parse_module("value = compute(\n    size,\n)\n")
    line = module.body[0]
    assert isinstance(line, cst.SimpleStatementLine)
    size = line.body[0].value.args[0].value  # type: ignore[attr-defined]

    (span,) = spans_of(module, [(size, line, line)])

    assert (span.line, span.col, span.end_line, span.end_col) == (2, 5, 2, 9)
    assert span.lines == [1, 2, 3]


def _recorder_class() -> type[NodeVisitor]:
    """A visitor class made while the test runs, so that its handler tables are too."""

    class Recorder(NodeVisitor):
        def __init__(self, ctx: object) -> None:
            self.seen: list[str] = []

        def visit_Call(self, node: cst.Call) -> None:
            self.seen.append(f"visit {source_text(node.func)}")

        def leave_Call(self, node: cst.Call) -> None:
            self.seen.append(f"leave {source_text(node.func)}")

        def leave_Module(self, node: cst.Module) -> None:
            self.seen.append("leave module")

    return Recorder


def test_a_visitor_s_handler_tables_map_node_classes_to_its_methods() -> None:
    recorder = _recorder_class()

    assert recorder.handlers_on_visit == {cst.Call: "visit_Call"}
    assert recorder.handlers_on_leave == {cst.Call: "leave_Call", cst.Module: "leave_Module"}


def test_the_walker_calls_a_visitor_s_visit_and_leave_methods_in_nesting_order() -> None:
    module = cst.parse_module("f(g())\n")
    linter = Linter(Config())
    recorder = _recorder_class()(None)

    Walker(linter.file_context("m.py", module, module.code), [recorder]).walk(module)

    assert recorder.seen == ["visit f", "visit g", "leave g", "leave f", "leave module"]  # type: ignore[attr-defined]


def test_a_handler_for_a_name_that_is_not_a_libcst_node_is_rejected() -> None:
    with pytest.raises(TypeError, match=r"Bad\.visit_Nothing: Nothing is not a libcst node"):

        class Bad(NodeVisitor):
            def visit_Nothing(self, node: cst.CSTNode) -> None:
                pass

    with pytest.raises(TypeError, match=r"Worse\.leave_parse_module: parse_module is not"):

        class Worse(NodeVisitor):
            def leave_parse_module(self, node: cst.CSTNode) -> None:
                pass


# -- reads_name ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "reads"),
    [
        ("loss", True),
        ("loss * world_size", True),
        ("f(1, loss)", True),
        ("f(x=loss)", True),
        ("{k: loss}", True),
        ("other.loss", False),  # an attribute named `loss` is not the variable
        ("loss.item()", True),
        ("f(loss=1)", False),  # a keyword named `loss` is not the variable
        ("f(lambda: loss)", False),  # runs later, if at all
        ("losses", False),
    ],
)
def test_reads_name_finds_a_read_of_the_variable_only(expression: str, reads: bool) -> None:
    assert reads_name(cst.parse_expression(expression), "loss") is reads


@pytest.mark.parametrize(("budget", "reads"), [(None, True), (10, True), (9, False), (1, False)])
def test_reads_name_stops_after_its_budget_of_nodes(budget: int | None, reads: bool) -> None:
    # `((loss + c) + b) + a`: the read is the 10th node looked at.
    expression = cst.parse_expression("((loss + c) + b) + a")

    assert reads_name(expression, "loss", budget=budget) is reads


def test_reads_name_enters_the_function_it_is_asked_about_but_none_inside() -> None:
    function = cst.parse_statement("def f():\n    g(loss)\n    def h():\n        return y\n")

    assert reads_name(function, "loss") is True
    assert reads_name(function, "y") is False
