"""Rank tests read through the names a function binds once, and groups a function
shows the make-up of (issue 36: the oracle's membership and unknown-group classes)."""

from __future__ import annotations

import re
import textwrap

import libcst as cst
import pytest

from ranklint.analysis.project.sequences import CollectiveLeaf
from ranklint.analysis.walk.arguments import group_arguments
from ranklint.analysis.walk.bodies import FunctionScan, TextGates
from ranklint.analysis.walk.definitions import attribute_definitions, single_definitions
from ranklint.analysis.walk.membership import (
    EVERY_RANK,
    MESH_GROUP,
    GroupTable,
    group_made,
    made_group,
    rank_test,
)
from ranklint.analysis.walk.names import NameTable
from ranklint.findings import Confidence
from ranklint.model.kinds import CallKind
from ranklint.model.taint import Taint
from tests.conftest import codes_by_line, findings_of

pytestmark = pytest.mark.timeout(30)
SELECT = ("RNK102",)
_GLOBAL = ("rank", "me")
_RANK = Taint(rank=True, axes=frozenset({"*"}))
_GLOBAL_READS = rf"\b(?:{'|'.join(_GLOBAL)})\b|get_rank\(\)|\[\"RANK\"\]"


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


class _Scan:
    def __init__(self, definitions: dict[str, cst.BaseExpression]) -> None:
        self.definitions = definitions

    def definition(self, node: cst.BaseExpression) -> cst.BaseExpression | None:
        return self.definitions.get(_code(node))

    def kept_parameter(self, name: str) -> bool:
        return name == "group"


class _Values:
    """Taints by the names a value reads: `rank`/`me`, `get_rank()` and
    `os.environ["RANK"]` the global rank, `tp_rank` the tensor-parallel one,
    `helper_rank()` a project call; anything else uniform."""

    def __init__(self, definitions: str = "", *, in_function: bool = True) -> None:
        module = cst.parse_module(textwrap.dedent(definitions))
        found: dict[str, cst.BaseExpression] = {}
        for statement in module.body:
            assert isinstance(statement, cst.SimpleStatementLine)
            small = statement.body[0]
            assert isinstance(small, cst.Assign)
            found[_code(small.targets[0].target)] = small.value
        self._scan = _Scan(found) if in_function else None

    def taint(self, node: cst.BaseExpression, depth: int = 0) -> Taint:
        text = _code(node)
        if re.search(_GLOBAL_READS, text):
            return _RANK
        if re.search(r"\btp_rank\b", text):
            return Taint(rank=True, axes=frozenset({"tp"}))
        if "helper_rank()" in text:
            return Taint(via=frozenset({"helpers.helper_rank"}))
        for name, value in (self._scan.definitions if self._scan else {}).items():
            if re.search(rf"\b{re.escape(name)}\b", text):
                return self.taint(value)
        return Taint()

    def scan(self) -> _Scan | None:
        return self._scan


def _test(text: str, definitions: str = "") -> tuple[str, int | str] | None:
    return rank_test(cst.parse_expression(text), _Values(definitions))


@pytest.mark.parametrize(
    ("text", "definitions", "expected"),
    [
        # The rank itself against a number, either side, negated.
        ("dist.get_rank() == 2", "", ("==", 2)),
        ("rank != 0", "", ("!=", 0)),
        ("rank < 2", "", ("<", 2)),
        ("rank <= 2", "", ("<=", 2)),
        ("rank > 2", "", (">", 2)),
        ("rank >= 2", "", (">=", 2)),
        ("2 > rank", "", ("<", 2)),
        ("2 <= rank", "", (">=", 2)),
        ("0 == rank", "", ("==", 0)),
        ("not rank == 0", "", ("!=", 0)),
        ("not rank < 2", "", (">=", 2)),
        ("not not rank > 1", "", (">", 1)),
        ("n == rank", "", ("==", "n")),
        # A name bound once to the rank, or to `int()` of it, is the rank.
        ("me2 == 1", "me2 = dist.get_rank()", ("==", 1)),
        ("who == 1", "who = int(rank)", ("==", 1)),
        ("who == 1", 'who = int(os.environ["RANK"])', ("==", 1)),
        ("who == 1", "who = max(rank, 0)", ("==", 1)),
        ("a == 1", "a = b\nb = rank", ("==", 1)),
        # A flag chosen by a rank test, as a truth test or against either arm.
        ("x", "x = 1 if rank == 2 else 0", ("==", 2)),
        ("not x", "x = 1 if rank == 2 else 0", ("!=", 2)),
        ("x", "x = 0 if rank == 2 else 1", ("!=", 2)),
        ("x == 1", "x = 1 if rank == 2 else 0", ("==", 2)),
        ("x == 0", "x = 1 if rank == 2 else 0", ("!=", 2)),
        ("x != 1", "x = 1 if rank == 2 else 0", ("!=", 2)),
        ("1 == x", "x = 1 if rank == 2 else 0", ("==", 2)),
        ("x == 'a'", "x = 'a' if rank < 2 else 'b'", ("<", 2)),
        ("x", "x = True if rank == 2 else False", ("==", 2)),
        # A flag bound to the test itself, and a dict's key bound to it.
        ("is_main", "is_main = rank == 0", ("==", 0)),
        ('flags["main"]', 'flags["main"] = rank == 3', ("==", 3)),
        # `and`/`or` where one operand alone depends on the rank.
        ("rank == 0 and world_size > 1", "", ("==", 0)),
        ("world_size > 1 and rank == 0", "", ("==", 0)),
        ("rank != 0 or debug", "", ("!=", 0)),
        ("not (rank == 0 and ready)", "", ("!=", 0)),
        # An offset on the rank moves the number; orderings that single out rank 0.
        ("rank + 1 < 2", "", ("==", 0)),
        ("rank - 1 == 1", "", ("==", 2)),
        ("rank < 1", "", ("==", 0)),
        ("rank <= 0", "", ("==", 0)),
        ("rank >= 1", "", ("!=", 0)),
        ("rank > 0", "", ("!=", 0)),
        ("rank < 3", "", ("<", 3)),
        # The rank modulo a number, in equalities.
        ("rank % 2 == 0", "", ("%2==", 0)),
        ("rank % 4 != 1", "", ("%4!=", 1)),
        ("not rank % 2 == 0", "", ("%2!=", 0)),
        ("x == 1", "x = 1 if rank % 2 == 1 else 0", ("%2==", 1)),
        ("x == 0", "x = 1 if rank % 2 == 1 else 0", ("%2!=", 1)),
        # A value every rank shares stands for a number in equalities only.
        ("rank == world_size - 1", "", ("==", "world_size - 1")),
        ("world_size - 1 != rank", "", ("!=", "world_size - 1")),
        ("rank < world_size - 1", "", None),
        # A project call that may return the rank is taken as the global rank.
        ("helper_rank() == 0", "", ("==", 0)),
    ],
)
def test_rank_test_reads_through_names_flags_and_operands_to_the_test_of_the_rank(
    text: str, definitions: str, expected: tuple[str, int | str] | None
) -> None:
    assert _test(text, definitions) == expected


@pytest.mark.parametrize(
    ("text", "definitions"),
    [
        # Both arms truthy, or falsy, or not literals: the flag says nothing.
        ("x", "x = 1 if rank == 2 else 2"),
        ("x", "x = 0 if rank == 2 else None"),
        ("x", "x = a if rank == 2 else 0"),
        ("x == 2", "x = 1 if rank == 2 else 0"),
        ("x == y", "x = 1 if rank == 2 else 0"),
        ("x < 1", "x = 1 if rank == 2 else 0"),
        # A flag derived from a test that is no comparison with a number.
        ("x == 1", "x = 1 if 0 <= rank <= 1 else 0"),
        ("x", "x = 1 if rank in (0, 1) else 0"),
        ("rank", ""),
        ("rank in (0, 3)", ""),
        ("0 <= rank < 2", ""),
        ("1 == x", ""),
        # A value derived from the rank is not the rank.
        ("x == 1", "x = int(rank < 2)"),
        ("x == 1", "x = round(rank / 2)"),
        ("x == 1", "x = 1 if rank == 2 else 1"),
        ("rank_count == 0", ""),
        ("x == 1", "x = rank % 2"),
        ("x == 0", "x = rank // 2"),
        ("x == 1", ""),
        # Two operands depend on the rank, or the compared value does.
        ("rank == 0 and tp_rank == 0", ""),
        ("rank == other_rank", "other_rank = rank"),
        ("rank == peer", "peer = rank + 1"),
        # Along one axis only.
        ("tp_rank == 0", ""),
        ("tp_rank + 1 < 2", ""),
        # A modulus in an ordering, of zero or no literal, or with an offset.
        ("rank % 2 < 1", ""),
        ("rank % 0 == 0", ""),
        ("rank % n == 0", ""),
        ("(rank + 1) % 2 == 0", ""),
        ("rank % 2 + 1 == 1", ""),
        ("rank % 2 == world_size", ""),
        # Offsets that are no literal, or another operator.
        ("rank * 2 == 2", ""),
        ("rank + n == 2", ""),
    ],
)
def test_rank_test_is_none_for_what_is_not_a_test_of_the_global_rank_itself(
    text: str, definitions: str
) -> None:
    assert _test(text, definitions) is None


def _chain(length: int, last: str) -> str:
    """`a1 = a2`, ..., `a<length> = last`: a test of `a1` reads through each name."""
    lines = [f"a{i} = a{i + 1}" for i in range(1, length)]
    return "\n".join([*lines, f"a{length} = {last}"])


@pytest.mark.parametrize(
    ("text", "last", "longest"),
    [
        # Each name read is one level; the test is read up to four levels down.
        ("a1", "rank == 2", 4),
        ("a1", "1 if rank == 2 else 0", 4),
        ("a1", "rank == 2 and ready", 3),
        ("a1 == 1", "1 if rank == 2 else 0", 1),
        # A name that is the rank itself: up to five names to the query.
        ("a1 == 2", "dist.get_rank()", 5),
    ],
)
def test_rank_test_reads_through_a_bounded_number_of_names(
    text: str, last: str, longest: int
) -> None:
    assert _test(text, _chain(longest, last)) == ("==", 2)
    assert _test(text, _chain(longest + 1, last)) is None


def test_rank_test_of_a_chosen_flag_reads_its_test_through_names_one_level_deeper() -> None:
    chosen = "\nx = 1 if a1 else 0"
    assert _test("x == 1", _chain(3, "rank == 2") + chosen) == ("==", 2)
    assert _test("x == 1", _chain(4, "rank == 2") + chosen) is None


def test_rank_test_at_module_level_reads_no_definition() -> None:
    values = _Values("x = 1 if rank == 2 else 0", in_function=False)
    assert rank_test(cst.parse_expression("x"), values) is None
    assert rank_test(cst.parse_expression("rank == 2"), values) == ("==", 2)


def test_rank_test_of_a_name_bound_to_itself_stops() -> None:
    assert _test("x == 1", "x = y\ny = x") is None


def _definitions(body: str) -> dict[str, str]:
    source = "def f(p, *args, q=1, **kw):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    function = cst.parse_module(source).body[0]
    assert isinstance(function, cst.FunctionDef)
    return {name: _code(value) for name, value in single_definitions(function, source).items()}


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("me = dist.get_rank()", {"me": "dist.get_rank()"}),
        ("print(a); me = dist.get_rank()", {"me": "dist.get_rank()"}),
        ("x = 1\nx = 2\nme = rank", {"me": "rank"}),
        ('d = {"a": 1}\nd["b"] = 2\nme = rank', {"me": "rank"}),
        ("if a:\n    global _ME\n    _ME = dist.get_rank()", {"_ME": "dist.get_rank()"}),
        ("r, w = get_rank(), get_world()", {"r": "get_rank()", "w": "get_world()"}),
        ("if a:\n    x = 1 if b else 0", {"x": "1 if b else 0"}),
        ("global _ME\n_ME = dist.get_rank()", {"_ME": "dist.get_rank()"}),
        ('flags = {"main": r == 0}', {"flags": '{"main": r == 0}'}),
        ('flags = {"main": r == 0}\nif flags["main"]:\n    pass', {"flags": '{"main": r == 0}'}),
        # Bound twice, or otherwise too: nothing.
        ("x = 1\nx = 2", {}),
        ("x = 1\nx += 1", {}),
        ("x = 1\nfor x in y:\n    pass", {}),
        ("x = 1\nwith a as x:\n    pass", {}),
        ("x = 1\nif (x := 2):\n    pass", {}),
        ("x = 1\ndef g():\n    x = 2", {}),
        ("p = 1", {}),
        ("args = 1", {}),
        ("kw = 1", {}),
        ("q = 1", {}),
        ("x = y = 1", {}),
        ("a, *b = 1, 2", {}),
        ("a, b = 1, *c", {}),
        ("a, b.c = 1, 2", {"a": "1"}),
        ("a, b = c", {}),
        ("a, b = 1, 2, 3", {}),
        ("a.b = 1", {}),
        # A dict whose keys change.
        ('flags = {"a": 1}\nflags["b"] = 2', {}),
        ('flags = {"a": 1}\nflags["a"] += 2', {}),
        ('flags = {"a": 1}\ndel flags["a"]', {}),
        ('flags = {"a": 1}\nflags.update(b=2)', {}),
        ('flags = {"a": 1}\nflags.pop("a")', {}),
        ('flags = {"a": 1}\nflags.setdefault("b", 2)', {}),
        # A nested function's binding is its own.
        ("def g():\n    y = 1", {}),
    ],
)
def test_single_definitions_keeps_names_bound_once_in_a_plain_assignment(
    body: str, expected: dict[str, str]
) -> None:
    assert _definitions(body) == expected


def test_single_definitions_reads_a_one_line_body() -> None:
    source = "def f(): me = dist.get_rank(); x = 1; x = 2\n"
    function = cst.parse_module(source).body[0]
    assert isinstance(function, cst.FunctionDef)
    found = single_definitions(function, source)
    assert {name: _code(value) for name, value in found.items()} == {"me": "dist.get_rank()"}


def test_single_definitions_make_the_source_only_for_a_dict_bound_once() -> None:
    source = "def f():\n    me = dist.get_rank()\n    (n := 2)\n    n = 3\n"
    function = cst.parse_module(source).body[0]
    assert isinstance(function, cst.FunctionDef)
    made: list[str] = []

    def text() -> str:
        made.append(source)
        return source

    assert set(single_definitions(function, text)) == {"me"}  # `n` is bound by `:=` too
    assert made == []
    with_dict = cst.parse_module("def g():\n    d = {'a': 1}\n    d['b'] = 2\n").body[0]
    assert isinstance(with_dict, cst.FunctionDef)
    assert single_definitions(with_dict, lambda: "d['b'] = 2") == {}


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (None, TextGates(gathers=True, walrus=True)),  # unknown text: every scan runs
        ("x = 1\n", TextGates(gathers=False, walrus=False)),
        ("if (n := len(x)):\n    pass\n", TextGates(gathers=False, walrus=True)),
        ("dist.all_gather_object(out, x)\n", TextGates(gathers=True, walrus=False)),
        ("GATHER_OBJECT = 1\n", TextGates(gathers=False, walrus=False)),
    ],
)
def test_text_gates_open_only_for_the_text_a_scan_looks_for(
    source: str | None, expected: TextGates
) -> None:
    assert TextGates.of(source) == expected


def test_single_definitions_of_a_lambda_is_empty() -> None:
    node = cst.parse_expression("lambda x: x")
    assert isinstance(node, cst.Lambda)
    assert single_definitions(node, "lambda x: x") == {}


def _names() -> NameTable:
    table = NameTable()
    statement = cst.parse_statement("import torch.distributed as dist")
    assert isinstance(statement, cst.SimpleStatementLine)
    small = statement.body[0]
    assert isinstance(small, cst.Import)
    table.bind_import_statement(small)
    return table


@pytest.mark.parametrize(
    ("group", "definitions", "expected"),
    [
        ("dist.new_group()", "", EVERY_RANK),
        ("dist.new_group(list(range(world_size)))", "", EVERY_RANK),
        ("dist.new_group(range(self.world_size))", "", EVERY_RANK),
        ("dist.new_group(ranks=range(dist.get_world_size()))", "", EVERY_RANK),
        ("pg", "pg = dist.new_group(list(range(world_size)))", EVERY_RANK),
        ("mesh.get_group()", "", MESH_GROUP),
        ("g", "g = mesh.get_group()", MESH_GROUP),
        ('self.device_mesh["dp"].get_group()', "", MESH_GROUP),
        ("tp_mesh.get_group()", "", MESH_GROUP),
        ('registry.get_group("sync")', "", None),
        ("g", 'g = self.groups.get_group("weights")', None),
        # Not every rank, or not shown.
        ("dist.new_group(list(range(world_size - 1)))", "", None),
        ("dist.new_group(list(range(1, world_size)))", "", None),
        ("dist.new_group(list(range(world_size, 2 * world_size)))", "", None),
        ("dist.new_group(range(n))", "", None),
        ("dist.new_group(range(dist.get_world_size(group)))", "", None),
        ("dist.new_group(range(size()))", "", None),
        ("dist.new_group(ranks)", "", None),
        ("dist.new_group([0, 1])", "", None),
        ("make_group()", "", None),
        ("pg", "", None),
        ("self.pg", "", None),
        ("pg", "pg = other", None),
    ],
)
def test_made_group_reads_groups_of_every_rank_and_device_mesh_groups(
    group: str, definitions: str, expected: str | None
) -> None:
    scan = _Values(definitions).scan()
    assert made_group(cst.parse_expression(group), scan, _names()) == expected


def test_made_group_outside_a_function_reads_the_argument_only() -> None:
    assert made_group(cst.parse_expression("dist.new_group()"), None, _names()) == EVERY_RANK
    assert made_group(cst.parse_expression("g"), None, _names()) is None


def test_group_made_keeps_axes_read_from_the_text_and_types_the_rest() -> None:
    scan = _Values("g = mesh.get_group()").scan()
    module = cst.parse_module(
        "class C:\n    def __init__(self):\n        self.pg = dist.new_group()\n"
    )
    table = GroupTable(module, _names(), module.code)
    axes = frozenset({"dp"})
    every = cst.parse_expression("dist.new_group()")
    assert group_made(every, axes, scan, table) == (axes, False, None)
    assert group_made(every, None, scan, table) == (frozenset(), False, None)
    assert group_made(cst.parse_expression("g"), None, scan, table) == (None, True, None)
    assert group_made(cst.parse_expression("h"), None, scan, table) == (None, False, None)
    self_pg = cst.parse_expression("self.pg")
    assert group_made(self_pg, None, scan, table) == (frozenset(), False, None)
    assert group_made(cst.parse_expression("other.pg"), None, scan, table) == (None, False, None)
    assert group_made(None, None, scan, table) == (None, False, None)
    # A parameter the function keeps: its callers say which group it is.
    assert group_made(cst.Name("group"), None, scan, table) == (None, False, "group")
    assert group_made(cst.Name("group"), None, None, table) == (None, False, None)
    assert group_made(cst.Name("group"), axes, scan, table) == (axes, False, None)


def test_group_arguments_names_the_arguments_that_are_groups_of_known_make_up() -> None:
    call = cst.parse_expression("f(t, pg, *rest, g2, group=mesh_group, other=x)")
    assert isinstance(call, cst.Call)
    made = {"pg": EVERY_RANK, "g2": EVERY_RANK, "mesh_group": MESH_GROUP}
    found = group_arguments(call, lambda value: made.get(_code(value)))
    assert found == ((1, None, EVERY_RANK), (2, None, EVERY_RANK), (None, "group", MESH_GROUP))
    assert group_arguments(call, None) == ()


def test_group_table_makes_no_maker_for_a_module_that_names_no_group_call() -> None:
    source = "class C:\n    def __init__(self):\n        self.pg = dist.new_group()\n"
    module = cst.parse_module(source)
    assert GroupTable(module, _names(), "").maker(None) is None
    maker = GroupTable(module, _names(), source).maker(None)
    assert maker is not None
    assert maker(cst.parse_expression("dist.new_group()")) == EVERY_RANK
    assert maker(cst.parse_expression("self.pg")) == EVERY_RANK


def _attributes(source: str) -> dict[str, str]:
    module = cst.parse_module(textwrap.dedent(source))
    return {name: _code(value) for name, value in attribute_definitions(module).items()}


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            """
            class C:
                def __init__(self):
                    self.pg = dist.new_group()
                    if ready:
                        self.mesh_group = mesh.get_group()
            """,
            {"pg": "dist.new_group()", "mesh_group": "mesh.get_group()"},
        ),
        (
            """
            if TYPE_CHECKING:
                pass
            else:
                class C:
                    class Inner:
                        def f(self):
                            self.pg = make()
            """,
            {"pg": "make()"},
        ),
        # Assigned twice (two methods, two classes), or bound otherwise too: nothing.
        (
            """
            class C:
                def a(self):
                    self.pg = one()
                def b(self):
                    self.pg = two()
            """,
            {},
        ),
        (
            """
            class C:
                def a(self):
                    self.pg = one()
            class D:
                def a(self):
                    self.pg = two()
            """,
            {},
        ),
        ("class C:\n    def a(self):\n        self.pg = one()\n        self.pg += 1", {}),
        ("class C:\n    def a(self):\n        self.pg: G = one()\n        self.n = 1", {"n": "1"}),
        ("class C:\n    def a(self):\n        self.pg, self.n = one()", {}),
        ("class C:\n    def a(self):\n        self.pg = one()\n        self.pg, n = two()", {}),
        ("class C:\n    def a(self):\n        self.pg = self.n = one()", {}),
        ("class C:\n    def a(self):\n        self.pg = one()\n        del self.pg", {}),
        # Not a method's own statement, or not `self`.
        ("class C:\n    def a(self):\n        def b():\n            self.pg = one()", {}),
        ("def f(self):\n    self.pg = one()", {}),
        ("class C:\n    def a(this):\n        this.pg = one()", {}),
        ("class C:\n    pg = one()", {}),
    ],
)
def test_attribute_definitions_keeps_self_attributes_assigned_once_in_the_module(
    source: str, expected: dict[str, str]
) -> None:
    assert _attributes(source) == expected


# -- end to end --------------------------------------------------------------------

_MEMBERS = """
import torch.distributed as dist

def sync(t):
    me = dist.get_rank()
    ranks = [1, 2]
    g = dist.new_group(ranks)
    FLAG
    if TEST:
        dist.all_reduce(t, group=g)
"""


@pytest.mark.parametrize(
    ("flag", "test", "reported"),
    [
        ("x = 1 if me == 1 else 0", "x == 1", True),
        ("x = 1 if me == 1 else 0", "x", True),
        ('flags = {"main": me == 2}', 'flags["main"]', True),
        ("is_first = me == 1", "is_first", True),
        ("pass", "me % 2 == 1 and me == 1", False),
        ("pass", "me % 2 == 0", True),
        ("x = 1 if me % 2 == 1 else 0", "x == 1", True),
        ("pass", "me % 3 != 0", False),
        # Tests that keep the members together.
        ("x = 1 if 1 <= me <= 2 else 0", "x == 1", False),
        ("x = 1 if me in ranks else 0", "x", False),
        ("x = 1 if me > 0 else 0", "x", False),
        ("pass", "me >= 1", False),
    ],
)
def test_rnk102_on_explicit_members_reads_the_test_through_flags_and_names(
    flag: str, test: str, reported: bool
) -> None:
    source = _MEMBERS.replace("FLAG", flag).replace("TEST", test)
    expected = [(9, "RNK102")] if reported else []
    assert codes_by_line(source, select=SELECT) == expected


_WORLD = """
import torch
import torch.distributed as dist

def main(world_size):
    me = dist.get_rank()
    t = torch.ones(2)
    GROUP
    if TEST:
        dist.all_reduce(t, group=pg)
"""


@pytest.mark.parametrize(
    ("group", "test", "confidence"),
    [
        ("pg = dist.new_group(list(range(world_size)))", "me == world_size - 1", "high"),
        ("pg = dist.new_group(list(range(world_size)))", "me == 0 and world_size > 1", "high"),
        ("pg = dist.new_group()", "me + 1 < 2", "high"),
        ("pg = dist.new_group(list(range(world_size)))", "me % 2 == 0", "high"),
        ("pg = mesh.get_group()", "me == 0", "high"),
        ("pg = mesh.get_group()", "me < 1", "high"),
    ],
)
def test_rnk102_on_a_group_of_every_rank_or_a_mesh_s_reports_a_test_of_one_rank(
    group: str, test: str, confidence: str
) -> None:
    source = _WORLD.replace("GROUP", group).replace("TEST", test)
    found = [(f.line, f.code, f.confidence) for f in findings_of(source, select=SELECT)]
    assert found == [(10, "RNK102", Confidence(confidence))]


@pytest.mark.parametrize(
    ("group", "test"),
    [
        # A mesh's group under a test that more than one rank passes: it may hold them all.
        ("pg = mesh.get_group()", "me % 2 == 0"),
        ("pg = mesh.get_group()", "me < 2"),
        # A group nothing shows the make-up of (an RL trainer's weight-sync group).
        ("pg = make_weight_sync_group()", "me == 0"),
        ("pg = dist.new_group(list(range(1, world_size)))", "me == 0"),
        # Every rank passes the test alike.
        ("pg = dist.new_group(list(range(world_size)))", "world_size > 1"),
    ],
)
def test_rnk102_on_a_group_that_may_hold_just_the_ranks_that_reach_it_stays_silent(
    group: str, test: str
) -> None:
    source = _WORLD.replace("GROUP", group).replace("TEST", test)
    assert codes_by_line(source, select=SELECT) == []


_STORED = """
import torch.distributed as dist

class Comm:
    def __init__(self, world_size):
        self.pg = GROUP

    def sync(self, t):
        if dist.get_rank() == 0:
            dist.all_reduce(t, group=self.pg)
"""


@pytest.mark.parametrize(
    ("group", "reported"),
    [
        ("dist.new_group(list(range(world_size)))", True),
        ("mesh.get_group()", True),
        ("dist.new_group(list(range(1, world_size)))", False),
        ("init_weight_sync_group()", False),
    ],
)
def test_rnk102_on_a_group_kept_in_an_attribute_reads_how_the_class_made_it(
    group: str, reported: bool
) -> None:
    source = _STORED.replace("GROUP", group)
    assert codes_by_line(source, select=SELECT) == ([(9, "RNK102")] if reported else [])


_PASSED = """
import torch.distributed as dist

def reduce_on(t, group=None):
    dist.all_reduce(t, group=group)

def main(world_size, t):
    me = dist.get_rank()
    pg = GROUP
    if me == 0:
        CALL
"""


@pytest.mark.parametrize(
    ("group", "call", "reported"),
    [
        ("dist.new_group(list(range(world_size)))", "reduce_on(t, pg)", True),
        ("dist.new_group(list(range(world_size)))", "reduce_on(t, group=pg)", True),
        ("mesh.get_group()", "reduce_on(t, pg)", True),
        ("make_weight_sync_group()", "reduce_on(t, pg)", False),
        ("dist.new_group(list(range(1, world_size)))", "reduce_on(t, pg)", False),
    ],
)
def test_rnk102_on_a_group_passed_to_a_helper_reads_how_the_caller_made_it(
    group: str, call: str, reported: bool
) -> None:
    source = _PASSED.replace("GROUP", group).replace("CALL", call)
    assert codes_by_line(source, select=SELECT) == ([(10, "RNK102")] if reported else [])


_DEFAULTED = """
import torch.distributed as dist

def reduce_mean(t, group=None):
    REBIND
    dist.all_reduce(t, group=group)
    return t

def main(t, pg):
    if dist.get_rank() == 0:
        CALL
"""


@pytest.mark.parametrize(
    ("rebind", "call", "reported"),
    [
        # Left to its default of None, or passed None: the default group.
        ("pass", "reduce_mean(t)", True),
        ("pass", "reduce_mean(t, None)", True),
        ("pass", "reduce_mean(t, group=None)", True),
        # A group the caller does not show, or a parameter bound again inside.
        ("pass", "reduce_mean(t, pg)", False),
        ("group = group or make_sync_group()", "reduce_mean(t)", False),
        ("if group is None:\n        group = make_sync_group()", "reduce_mean(t)", False),
    ],
)
def test_rnk102_on_a_group_parameter_left_to_none_is_the_default_group(
    rebind: str, call: str, reported: bool
) -> None:
    source = _DEFAULTED.replace("REBIND", rebind).replace("CALL", call)
    found = codes_by_line(source, select=SELECT)
    assert found == ([(10, "RNK102")] if reported else [])


def test_rnk102_on_a_group_parameter_follows_a_none_passed_on_through_a_second_helper() -> None:
    source = """
        import torch.distributed as dist

        def inner(t, group=None):
            dist.all_reduce(t, group=group)

        def outer(t, group=None):
            inner(t, group)

        def main(t):
            if dist.get_rank() == 0:
                outer(t)
    """
    assert codes_by_line(source, select=SELECT) == [(11, "RNK102")]


def test_rnk102_on_a_mesh_group_names_it_in_the_evidence() -> None:
    source = _WORLD.replace("GROUP", "pg = mesh.get_group()").replace("TEST", "me == 0")
    (finding,) = findings_of(source, select=SELECT)
    assert "`pg`, a device mesh's group, which global rank 0 would reach alone" in str(
        finding.evidence
    )


def _scan(body: str) -> FunctionScan:
    source = "def f():\n" + textwrap.indent(textwrap.dedent(body), "    ")
    function = cst.parse_module(source).body[0]
    assert isinstance(function, cst.FunctionDef)
    return FunctionScan(function, NameTable(), TextGates(gathers=False))


@pytest.mark.parametrize(
    ("body", "read", "expected"),
    [
        ("me = get_rank()", "me", "get_rank()"),
        ('flags = {"main": r == 0, "last": r == 3}', 'flags["main"]', "r == 0"),
        ('flags = {"main": r == 0, "last": r == 3}', 'flags["last"]', "r == 3"),
        ("flags = {'main': r == 0}", 'flags["main"]', "r == 0"),
        # A key not written, written twice, beside a spread, or not a string.
        ('flags = {"main": r == 0}', 'flags["other"]', None),
        ('flags = {"main": r == 0, "main": r == 1}', 'flags["main"]', None),
        ('flags = {**base, "main": r == 0}', 'flags["main"]', None),
        ("flags = {**base}", 'flags["main"]', None),
        ('flags = {"main": r == 0}', "flags[key]", None),
        ('flags = {"main": r == 0}', "flags[0]", None),
        ('flags = {"main": r == 0}', 'flags["main", "x"]', None),
        ('flags = {"main": r == 0}', "flags[1:2]", None),
        # Not a dict, not a name, or nothing bound once.
        ("flags = make()", 'flags["main"]', None),
        ('flags = {"main": r == 0}', 'self.flags["main"]', None),
        ('flags = {"main": r == 0}', "flags.main", None),
        ("", "me", None),
    ],
)
def test_function_scan_definition_reads_a_name_or_a_constant_key_of_a_dict(
    body: str, read: str, expected: str | None
) -> None:
    found = _scan(body or "pass").definition(cst.parse_expression(read))
    assert (None if found is None else _code(found)) == expected


def test_function_scan_definition_outside_a_function_is_none() -> None:
    scan = FunctionScan(None, NameTable(), TextGates(gathers=False))
    assert scan.definition(cst.Name("me")) is None


def _leaf(group: str | None, axes: frozenset[str] | None) -> CollectiveLeaf:
    param = group if axes is None else None
    return CollectiveLeaf("all_reduce", group, axes, CallKind.COLLECTIVE, (), group_param=param)


@pytest.mark.parametrize(
    ("leaf", "made", "axes", "mesh"),
    [
        (_leaf("group", None), {"group": EVERY_RANK}, frozenset(), False),
        (_leaf("group", None), {"group": MESH_GROUP}, None, True),
        (_leaf("group", None), {"other": EVERY_RANK}, None, False),
        (_leaf("group", None), {}, None, False),
        # A group whose axes are known already, or the default group: as it was.
        (_leaf("group", frozenset({"dp"})), {"group": EVERY_RANK}, frozenset({"dp"}), False),
        (_leaf(None, frozenset()), {"group": MESH_GROUP}, frozenset(), False),
        (_leaf(None, None), {"None": MESH_GROUP}, None, False),
        # A group the function binds again is not the parameter any more.
        (
            CollectiveLeaf("all_reduce", "group", None, CallKind.COLLECTIVE, ()),
            {"group": EVERY_RANK},
            None,
            False,
        ),
    ],
)
def test_collective_leaf_on_passed_group_takes_the_make_up_of_the_group_passed(
    leaf: CollectiveLeaf, made: dict[str, str], axes: frozenset[str] | None, mesh: bool
) -> None:
    passed = leaf.on_passed_group(made)
    assert (passed.group_axes, passed.mesh_group) == (axes, mesh)


def test_rnk102_on_a_group_parameter_is_read_at_the_first_call_only() -> None:
    """`inner` gets a group `middle` does not show; `middle`'s own default of None
    says nothing of it."""
    source = """
        import torch.distributed as dist

        def inner(t, group=None):
            dist.all_reduce(t, group=group)

        def middle(t, group=None):
            inner(t, make_weight_sync_group())

        def main(t):
            if dist.get_rank() == 0:
                middle(t)
    """
    assert codes_by_line(source, select=SELECT) == []
