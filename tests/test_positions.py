"""Per-statement positions equal libcst's whole-module PositionProvider, node for node."""

from __future__ import annotations

import libcst as cst
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from libcst.metadata import MetadataWrapper, PositionProvider

from ranklint import positions as positions_module
from ranklint.positions import resolve_positions
from tests.conftest import FIXTURES, FUZZ_TIMEOUT, REPO_ROOT

hypothesmith = pytest.importorskip("hypothesmith", reason="hypothesmith is a test extra")
pytestmark = pytest.mark.timeout(FUZZ_TIMEOUT)


def every_node_with_its_top_statement(module: cst.Module):
    pairs = []

    class Collector(cst.CSTVisitor):
        def __init__(self, top: cst.CSTNode) -> None:
            self.top = top

        def on_visit(self, node: cst.CSTNode) -> bool:
            pairs.append((node, self.top))
            return True

    for statement in module.body:
        statement.visit(Collector(statement))
    return pairs


def parsed(source: str):
    """The module of ``source``, and libcst's positions of all its nodes."""
    module = cst.parse_module(source)
    return module, MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)


def nodes_in_nested_statements(module: cst.Module):
    """(node, top-level statement) for the nodes inside statements nested in a
    top-level one (an ``elif`` counts as part of its ``if``): the ones placed
    through their innermost statement."""
    pairs = []

    class Collector(cst.CSTVisitor):
        def __init__(self, top: cst.CSTNode) -> None:
            self.top, self.depth, self.elifs = top, 0, set()

        def _nested(self, node: cst.CSTNode) -> bool:
            return (
                isinstance(node, cst.BaseStatement)
                and node is not self.top
                and id(node) not in self.elifs
            )

        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, cst.If) and isinstance(node.orelse, cst.If):
                self.elifs.add(id(node.orelse))
            self.depth += self._nested(node)
            if self.depth:
                pairs.append((node, self.top))
            return True

        def on_leave(self, original_node: cst.CSTNode) -> None:
            self.depth -= self._nested(original_node)

    for statement in module.body:
        statement.visit(Collector(statement))
    return pairs


def assert_same_positions(source: str) -> None:
    module, reference = parsed(source)
    pairs = every_node_with_its_top_statement(module)

    fast = resolve_positions(module, pairs, whole_module_share=1.0)
    searched = resolve_positions(module, pairs, text=source, whole_module_share=1.0)
    inner_pairs = nodes_in_nested_statements(module)
    nested = resolve_positions(
        module, inner_pairs, text=source, whole_module_share=1.0, inner_limit=len(pairs)
    )

    assert len(fast) == len({id(node) for node, _ in pairs})
    for node, _ in pairs:
        assert fast[node] == reference[node], (type(node).__name__, fast[node], reference[node])
        assert searched[node] == reference[node], (type(node).__name__, searched[node])
    for node, _ in inner_pairs:
        assert nested[node] == reference[node], (type(node).__name__, nested[node])


@pytest.mark.parametrize(
    "path",
    sorted((REPO_ROOT / "src").rglob("*.py")) + sorted(FIXTURES.rglob("*.py")),
    ids=lambda p: p.name,
)
def test_positions_per_statement_equal_whole_module_positions_on_repo_files(path) -> None:
    assert_same_positions(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "source",
    [
        "#!/usr/bin/env python\n# header comment\n\n\nimport os\n\n# lead\nx = os.sep\n",
        "import os\r\nif os:\r\n    y = (1,\r\n         2)\r\n",
        "import os\rif os:\r    y = 1\r",
        "x = 1  # no trailing newline",
        "def f():\n    '''doc\n    string'''\n    return f'{1}\\n{2}'\n\n\nclass C:\n    pass\n",
        "\n\n\n@decorator(\n    1,\n)\ndef g(): pass\ny = [\n  1,\n]; z = 2\n",
        "class C:\n\tdef f(self):\n\t\tif a:\n\t\t\tx = 1\n\t\telif b:\n"
        "\t\t\ty = (1,\n  2)\n# odd comment\n\t\telse:\n\t\t\tpass\n",
        "class C:\n    def f(self):\n        return x\n\n    def g(self):\n"
        "        return x\n    @property\n    def h(self):\n        return x\n",
        "if a:\n  try:\n      pass\n  except E:\n      for i in x:\n         y = i\n"
        "  finally:\n   with m:  # c\n    z = 1\n",
        "def f(x):\n    match x:\n      case [a, b]:\n         return (a,\n  b)\n"
        "      case _:\n         pass\n",
        "match ...:\n    case _:\n     pass\n",
    ],
    ids=[
        "header-and-leading-lines",
        "crlf",
        "cr-only",
        "no-final-newline",
        "strings",
        "decorators",
        "nested-tabs-elif-and-odd-comment",
        "repeated-nested-statements",
        "mixed-nested-indentation",
        "match-cases",
        "match-at-module-level",
    ],
)
def test_positions_per_statement_equal_whole_module_positions_on_edge_layouts(
    source: str,
) -> None:
    assert_same_positions(source)


@settings(max_examples=max(20, settings().max_examples // 3))
@given(st.one_of(hypothesmith.from_grammar(), hypothesmith.from_node()))
def test_positions_per_statement_equal_whole_module_positions_on_generated_programs(
    source: str,
) -> None:
    # Positions exist only for what libcst parses (the rest is RNK001, see test_fuzz).
    try:
        cst.parse_module(source)
    except cst.ParserSyntaxError:
        assume(False)
    assert_same_positions(source)


_TWO_STATEMENTS = "import os\nx = os.sep\n"


def test_node_without_known_top_statement_gets_whole_module_positions() -> None:
    module, reference = parsed(_TWO_STATEMENTS)
    target = module.body[1]

    found = resolve_positions(module, [(target, None)])

    assert found[target] == reference[target]


def test_findings_in_most_statements_resolve_every_node_like_the_whole_module() -> None:
    module, reference = parsed(_TWO_STATEMENTS)
    pairs = every_node_with_its_top_statement(module)

    found = resolve_positions(module, pairs)  # every statement: the whole-module path

    assert all(found[node] == reference[node] for node, _ in pairs)
    assert found[module.body[1]].start.line == 2


def test_positions_come_from_the_metadata_wrapper_when_the_provider_keeps_them_elsewhere(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A libcst whose PositionProvider does not fill a `_computed` dict of its own.
    class ElsewhereProvider(PositionProvider):
        def __init__(self, cache: object = None) -> None:
            super().__init__(cache)
            del self._computed

    monkeypatch.setattr("ranklint.positions.PositionProvider", ElsewhereProvider)
    module, reference = parsed(_TWO_STATEMENTS)
    pairs = every_node_with_its_top_statement(module)

    found = resolve_positions(module, pairs)

    assert all(found[node] == reference[node] for node, _ in pairs)


@pytest.mark.parametrize(
    ("source", "index"),
    [
        ("x = 1\ny = 2\nx = 1\n", 2),  # the code of the third is also the first's
        ("x = 1\ny = 2\nx = 1\n", 0),  # and the first's code comes again later
        ("def f():\n    pass\n\n\ndef f():\n    pass\n", 1),
    ],
    ids=["repeated-before", "repeated-after", "repeated-function"],
)
def test_statement_whose_code_is_repeated_is_placed_right_with_the_text(
    source: str, index: int
) -> None:
    module, reference = parsed(source)
    target = module.body[index]

    found = resolve_positions(module, [(target, target)], text=source, whole_module_share=1.0)

    assert found[target] == reference[target]


def test_statements_after_a_repeated_one_are_placed_by_the_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = "x = 1\nx = 1\n\n\ndef g():\n    return 2\n"
    module, reference = parsed(source)
    target = module.body[2]
    generated = spy_on_generated_code(monkeypatch)

    found = resolve_positions(module, [(target, target)], text=source, whole_module_share=1.0)

    assert found[target] == reference[target]
    assert generated == [target]  # no code generated for the statements before it


_CLASS = (
    "import os\n\n\n"
    "class Trainer:\n"
    "    def setup(self):\n"
    "        self.path = os.sep\n\n"
    "    def step(self):\n"
    "        if self.path:\n"
    "            return 1\n"
    "        elif os.sep:\n"
    "            y = (1,\n"
    "                 2)\n"
    "        return 0\n\n"
    "    def last(self):\n"
    "        return 0\n"
)


def spy_on_whole_statements(monkeypatch: pytest.MonkeyPatch) -> list[cst.CSTNode]:
    """The module-level statements positioned whole from now on."""
    placed: list[cst.CSTNode] = []
    real = positions_module._place

    def spy(module, statement, nodes, line, positions) -> None:
        placed.append(statement)
        real(module, statement, nodes, line, positions)

    monkeypatch.setattr(positions_module, "_place", spy)
    return placed


def class_nodes(module: cst.Module) -> tuple[cst.ClassDef, dict[str, cst.CSTNode]]:
    trainer = module.body[1]
    step = trainer.body.body[1]
    branch = step.body.body[0]
    elif_ = branch.orelse
    return trainer, {
        "self.path = os.sep": trainer.body.body[0].body.body[0],
        "return 1": branch.body.body[0],
        "elif test": elif_.test,
        "y = (1, 2)": elif_.body.body[0],
        "tuple": elif_.body.body[0].body[0].value,
        "return 0 of step": step.body.body[1],
        "return 0 of last": trainer.body.body[2].body.body[0],
    }


@pytest.mark.parametrize("name", ["self.path = os.sep", "return 1", "y = (1, 2)", "tuple"])
def test_node_in_a_nested_statement_is_placed_without_positions_of_its_class(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    module, reference = parsed(_CLASS)
    trainer, nodes = class_nodes(module)
    placed = spy_on_whole_statements(monkeypatch)

    found = resolve_positions(module, [(nodes[name], trainer)], text=_CLASS)

    assert found[nodes[name]] == reference[nodes[name]]
    assert placed == []


def spy_on_statements_placed_alone(monkeypatch: pytest.MonkeyPatch) -> list[cst.CSTNode]:
    """The nested statements whose code and positions are generated alone from now on."""
    rendered: list[cst.CSTNode] = []
    real = positions_module._positions_alone

    def spy(module, statement, indents):
        rendered.append(statement)
        return real(module, statement, indents)

    monkeypatch.setattr(positions_module, "_positions_alone", spy)
    return rendered


def test_node_in_an_elif_test_is_placed_through_the_if_before_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module, reference = parsed(_CLASS)
    trainer, nodes = class_nodes(module)
    placed = spy_on_whole_statements(monkeypatch)
    rendered = spy_on_statements_placed_alone(monkeypatch)

    found = resolve_positions(module, [(nodes["elif test"], trainer)], text=_CLASS)

    assert found[nodes["elif test"]] == reference[nodes["elif test"]]
    assert found[nodes["elif test"]].start.line == 11
    assert placed == []
    step = trainer.body.body[1]
    assert rendered == [step.body.body[0]]  # the `if`, never the `elif` alone


@pytest.mark.parametrize(
    ("name", "through"), [("return 0 of step", "def step"), ("return 0 of last", "def last")]
)
def test_nested_statement_whose_code_recurs_is_placed_through_the_statement_holding_it(
    monkeypatch: pytest.MonkeyPatch, name: str, through: str
) -> None:
    module, reference = parsed(_CLASS)
    trainer, nodes = class_nodes(module)
    rendered = spy_on_statements_placed_alone(monkeypatch)
    placed = spy_on_whole_statements(monkeypatch)

    found = resolve_positions(module, [(nodes[name], trainer)], text=_CLASS)

    assert found[nodes[name]] == reference[nodes[name]]
    assert placed == []
    assert [type(s).__name__ for s in rendered] == ["SimpleStatementLine", "FunctionDef"]
    assert module.code_for_node(rendered[1]).lstrip().startswith(through)


def test_nested_statement_whose_enclosing_statements_all_recur_is_placed_with_its_class(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = "class C:\n    def f(self):\n        return 0\n\n    def f(self):\n        return 0\n"
    module, reference = parsed(source)
    klass = module.body[0]
    first = klass.body.body[0].body.body[0]
    placed = spy_on_whole_statements(monkeypatch)

    found = resolve_positions(module, [(first, klass)], text=source, whole_module_share=1.0)

    assert found[first] == reference[first]
    assert placed == [klass]


def test_nested_statements_past_the_limit_are_placed_with_their_whole_class(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module, reference = parsed(_CLASS)
    trainer, nodes = class_nodes(module)
    wanted = [nodes["self.path = os.sep"], nodes["return 1"], nodes["y = (1, 2)"]]
    placed = spy_on_whole_statements(monkeypatch)

    at_limit = resolve_positions(
        module, [(node, trainer) for node in wanted], text=_CLASS, inner_limit=3
    )
    assert placed == []
    past_limit = resolve_positions(
        module, [(node, trainer) for node in wanted], text=_CLASS, inner_limit=2
    )

    assert placed == [trainer]
    assert all(at_limit[node] == past_limit[node] == reference[node] for node in wanted)


def test_statement_after_a_class_placed_through_its_nested_statements_is_placed_right() -> None:
    source = _CLASS + "\n\nx = os.sep\n"
    module, reference = parsed(source)
    trainer, nodes = class_nodes(module)
    after = module.body[2]

    found = resolve_positions(module, [(nodes["return 1"], trainer), (after, after)], text=source)

    assert found[nodes["return 1"]] == reference[nodes["return 1"]]
    assert found[after] == reference[after]
    assert found[after].start.line == 20


def test_nested_statement_is_placed_with_its_class_by_a_libcst_without_the_position_state(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module, reference = parsed(_CLASS)
    trainer, nodes = class_nodes(module)
    monkeypatch.setattr(positions_module, "PositionProvidingCodegenState", None)
    placed = spy_on_whole_statements(monkeypatch)

    found = resolve_positions(module, [(nodes["return 1"], trainer)], text=_CLASS)

    assert found[nodes["return 1"]] == reference[nodes["return 1"]]
    assert placed == [trainer]


def spy_on_generated_code(monkeypatch: pytest.MonkeyPatch) -> list[cst.CSTNode]:
    """The nodes whose plain code is generated from now on."""
    generated: list[cst.CSTNode] = []
    real = cst.Module.code_for_node

    def spy(self: cst.Module, node: cst.CSTNode) -> str:
        generated.append(node)
        return real(self, node)

    monkeypatch.setattr(cst.Module, "code_for_node", spy)
    return generated


def test_statement_whose_code_ends_the_statement_placed_before_it_is_searched_past_that(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = "def f():\n    x = 1\nx = 1\n"
    module, reference = parsed(source)
    first, second = module.body
    generated = spy_on_generated_code(monkeypatch)

    found = resolve_positions(
        module, [(first.name, first), (second, second)], text=source, whole_module_share=1.0
    )

    assert found[first.name] == reference[first.name]
    assert found[second] == reference[second]
    assert generated == [first, second]  # both found by the search, in one pass


def test_statement_whose_code_ends_a_nested_statement_placed_before_it_is_searched_past_that(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = "class C:\n    def f(self):\n        z = 1; y = 2\ny = 2\n"
    module, reference = parsed(source)
    klass, after = module.body
    nested = klass.body.body[0].body.body[0]
    generated = spy_on_generated_code(monkeypatch)

    found = resolve_positions(
        module, [(nested, klass), (after, after)], text=source, whole_module_share=1.0
    )

    assert found[nested] == reference[nested]
    assert found[after] == reference[after]
    assert generated == [after]  # the class is placed through its nested statement


def test_nested_statement_whose_code_came_in_an_earlier_placed_statement_is_placed_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    method = "    def f(self):\n        return 1\n"
    source = f"class B:\n{method}\n\nclass C:\n{method}"
    module, reference = parsed(source)
    first, second = module.body
    in_first = first.body.body[0].body.body[0]
    in_second = second.body.body[0].body.body[0]
    placed = spy_on_whole_statements(monkeypatch)

    found = resolve_positions(
        module, [(in_first, first), (in_second, second)], text=source, whole_module_share=1.0
    )

    assert found[in_first] == reference[in_first]
    assert found[in_second] == reference[in_second]
    assert placed == [first]  # its code comes again later; the second's does not


def test_nodes_in_two_nested_statements_are_both_placed_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module, reference = parsed(_CLASS)
    trainer, nodes = class_nodes(module)
    wanted = [nodes["self.path = os.sep"], nodes["tuple"]]
    placed = spy_on_whole_statements(monkeypatch)

    found = resolve_positions(module, [(node, trainer) for node in wanted], text=_CLASS)

    assert placed == []
    assert all(found[node] == reference[node] for node in wanted)


def test_node_of_the_module_level_statement_itself_places_the_whole_statement(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module, reference = parsed(_CLASS)
    trainer, nodes = class_nodes(module)
    wanted = [trainer.name, nodes["return 1"]]
    placed = spy_on_whole_statements(monkeypatch)

    found = resolve_positions(module, [(node, trainer) for node in wanted], text=_CLASS)

    assert placed == [trainer]
    assert all(found[node] == reference[node] for node in wanted)


def test_node_in_a_block_indented_unlike_the_module_is_placed_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = "def f():\n    if x:\n      y = 1\n    match y:\n      case 1:\n          z = 2\n"
    module, reference = parsed(source)
    function = module.body[0]
    branch, match = function.body.body
    wanted = [branch.body.body[0], match.cases[0].body.body[0]]
    placed = spy_on_whole_statements(monkeypatch)

    found = resolve_positions(
        module, [(node, function) for node in wanted], text=source, whole_module_share=1.0
    )

    assert placed == []
    assert [found[node] for node in wanted] == [reference[node] for node in wanted]
    assert [found[node].start.column for node in wanted] == [6, 10]
