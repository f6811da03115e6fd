"""Per-statement positions equal libcst's whole-module PositionProvider, node for node."""

from __future__ import annotations

import libcst as cst
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from libcst.metadata import MetadataWrapper, PositionProvider

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


def assert_same_positions(source: str) -> None:
    module = cst.parse_module(source)
    reference = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    pairs = every_node_with_its_top_statement(module)

    fast = resolve_positions(module, pairs, whole_module_share=1.0)
    searched = resolve_positions(module, pairs, text=source, whole_module_share=1.0)

    assert len(fast) == len({id(node) for node, _ in pairs})
    for node, _ in pairs:
        assert fast[node] == reference[node], (type(node).__name__, fast[node], reference[node])
        assert searched[node] == reference[node], (type(node).__name__, searched[node])


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
    ],
    ids=[
        "header-and-leading-lines",
        "crlf",
        "cr-only",
        "no-final-newline",
        "strings",
        "decorators",
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
    module = cst.parse_module(_TWO_STATEMENTS)
    reference = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    target = module.body[1]

    found = resolve_positions(module, [(target, None)])

    assert found[target] == reference[target]


def test_findings_in_most_statements_resolve_every_node_like_the_whole_module() -> None:
    module = cst.parse_module(_TWO_STATEMENTS)
    reference = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
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
    module = cst.parse_module(_TWO_STATEMENTS)
    reference = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
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
    module = cst.parse_module(source)
    reference = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    target = module.body[index]

    found = resolve_positions(module, [(target, target)], text=source, whole_module_share=1.0)

    assert found[target] == reference[target]


def test_statements_after_a_repeated_one_are_placed_by_the_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = "x = 1\nx = 1\n\n\ndef g():\n    return 2\n"
    module = cst.parse_module(source)
    reference = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    target = module.body[2]
    generated: list[cst.CSTNode] = []
    real = cst.Module.code_for_node

    def spy(self: cst.Module, node: cst.CSTNode) -> str:
        generated.append(node)
        return real(self, node)

    monkeypatch.setattr(cst.Module, "code_for_node", spy)

    found = resolve_positions(module, [(target, target)], text=source, whole_module_share=1.0)

    assert found[target] == reference[target]
    assert generated == [target]  # no code generated for the statements before it
