"""Module flags that never change (analysis/walk/constants.py), and what the collective
analysis makes of a rank test behind one (`if DEBUG and rank == 0: return`)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ranklint.analysis.walk.constants import module_flags
from tests.conftest import codes_by_line

_TESTED = ("A", "Z", "DEBUG", "QUIET", "VERBOSE")


def _flags(source: str) -> tuple[tuple[str, bool], ...]:
    """The flags of ``source`` followed by a function whose tests read every name."""
    tests = "".join(f"    if {name}:\n        pass\n" for name in _TESTED)
    text = textwrap.dedent(source) + "\ndef f():\n" + tests
    return module_flags(cst.parse_module(text), text)


@pytest.mark.parametrize(
    ("test", "expected"),
    [
        ("if DEBUG and rank == 0:", (("DEBUG", False),)),
        ("elif DEBUG:", (("DEBUG", False),)),
        ("x = DEBUG and 1", ()),
        ("# if DEBUG:", ()),
        ("if DEBUGGING:", ()),
    ],
)
def test_flag_counts_only_where_an_if_test_names_it(test: str, expected: tuple) -> None:
    source = f"DEBUG = False\nif rank:\n    pass\n{test}\n    pass\n"
    if test.startswith(("x", "#")):
        source = f"DEBUG = False\n{test}\n"

    assert module_flags(cst.parse_module(source), source) == expected


@pytest.mark.parametrize(
    ("value", "truth"),
    [("False", False), ("True", True), ("None", False), ("0", False), ("1", True), ("0x10", True)],
)
def test_flag_bound_once_to_a_literal_has_the_literals_truth(value: str, truth: bool) -> None:
    assert _flags(f"DEBUG = {value}\n") == (("DEBUG", truth),)


def test_annotated_flag_counts_and_flags_are_sorted_by_name() -> None:
    assert _flags("Z: bool = True\nA = False\n") == (("A", False), ("Z", True))


@pytest.mark.parametrize(
    "value", ["'yes'", "1.0", "os.environ.get('DEBUG') == '1'", "not True", "[]"]
)
def test_name_bound_to_anything_but_a_flag_literal_is_not_a_flag(value: str) -> None:
    assert _flags(f"DEBUG = {value}\n") == ()


@pytest.mark.parametrize(
    "rebinding",
    [
        "DEBUG = True",
        "DEBUG += 1",
        "DEBUG: bool = True",
        "for DEBUG in range(2):\n    pass",
        "def set_debug():\n    global DEBUG\n    DEBUG = True",
        "def f(DEBUG):\n    return DEBUG",
        "def f():\n    DEBUG = True\n    return DEBUG",
        "with open('f') as DEBUG:\n    pass",
        "from config import DEBUG",
        "import DEBUG",
        "import DEBUG.sub",
        "import os as DEBUG",
        "(DEBUG := 1)",
        "del DEBUG",
        "DEBUG, other = 1, 2",
        "[DEBUG, *rest] = [1, 2]",
        "first, *DEBUG = [1, 2]",
        "def DEBUG():\n    pass",
        "class DEBUG:\n    pass",
        "def f():\n    nonlocal DEBUG",
    ],
)
def test_flag_rebound_anywhere_in_the_module_is_not_a_flag(rebinding: str) -> None:
    assert _flags(f"DEBUG = False\n{rebinding}\n") == ()


def test_flag_inside_a_function_or_a_block_is_not_a_module_flag() -> None:
    source = """
        def f():
            DEBUG = False
            return DEBUG

        if True:
            VERBOSE = False
        a = b = False
        x = len([]); QUIET = False
    """
    assert _flags(source) == (("QUIET", False),)


@pytest.mark.parametrize(
    "rebinding",
    [
        "def f():\n    return [x for DEBUG in range(2)]",
        "def f(*DEBUG):\n    pass",
        "def f(**DEBUG):\n    pass",
        "def f(*, DEBUG):\n    pass",
        "def f(DEBUG, /):\n    pass",
        "try:\n    pass\nexcept ValueError as DEBUG:\n    pass",
        "with a as (DEBUG, b):\n    pass",
        "from config import x as DEBUG",
        "if x:\n    pass\nelse:\n    DEBUG = 1",
        "if x:\n    pass\nelif y:\n    DEBUG = 1",
        "if x:\n    pass\nelif y:\n    pass\nelse:\n    DEBUG = 1",
        "while x:\n    pass\nelse:\n    DEBUG = 1",
        "try:\n    pass\nfinally:\n    DEBUG = 1",
        "try:\n    pass\nexcept ValueError:\n    DEBUG = 1",
        "class C:\n    def f(self):\n        global DEBUG",
        "for x in y: DEBUG = 1",
        "try:\n    DEBUG = 1\nfinally:\n    pass",
        "for x in y:\n    DEBUG = 1\nelse:\n    pass",
        "match x:\n    case 1:\n        DEBUG = 1",
        "match x:\n    case [DEBUG]:\n        pass",
        "match x:\n    case {'a': 1, **DEBUG}:\n        pass",
        "match x:\n    case [1, *DEBUG]:\n        pass",
        "match x:\n    case int() as DEBUG:\n        pass",
    ],
)
def test_flag_rebound_by_any_statement_form_is_not_a_flag(rebinding: str) -> None:
    expected = () if "for DEBUG in" not in rebinding else (("DEBUG", False),)
    assert _flags(f"DEBUG = False\n{rebinding}\n") == expected


def test_other_names_bound_next_to_a_flag_leave_it_a_flag() -> None:
    source = """
        DEBUG = False
        import os.path
        for i in range(2):
            pass
        def f(x):
            return x
    """
    assert _flags(source) == (("DEBUG", False),)


_STEP = """
import torch.distributed as dist

DEBUG = {value}
{rebinding}

def step(t):
    if DEBUG and dist.get_rank() == 0:
        return
    dist.barrier()
"""


def test_rank_exit_behind_a_flag_that_is_off_is_not_reported() -> None:
    assert codes_by_line(_STEP.format(value="False", rebinding=""), only=("RNK102",)) == []


@pytest.mark.parametrize(
    ("value", "rebinding"),
    [("True", ""), ("False", "def turn_on():\n    global DEBUG\n    DEBUG = True\n")],
)
def test_rank_exit_behind_a_flag_that_is_on_or_changes_is_reported(
    value: str, rebinding: str
) -> None:
    source = _STEP.format(value=value, rebinding=rebinding)
    line = textwrap.dedent(source).lstrip("\n").splitlines().index("    dist.barrier()") + 1

    assert codes_by_line(source, only=("RNK102",)) == [(line, "RNK102")]


def test_collective_in_a_helper_behind_a_flag_that_is_off_is_not_reached() -> None:
    source = """
        import torch.distributed as dist

        DEBUG = False


        def check(t):
            if DEBUG:
                dist.barrier()


        def step(t):
            if dist.get_rank() == 0:
                check(t)
    """
    assert codes_by_line(source, only=("RNK102",)) == []


def test_collective_in_a_helper_behind_a_flag_that_is_on_is_reported_at_the_call() -> None:
    source = """
        import torch.distributed as dist

        DEBUG = 1


        def check(t):
            if DEBUG:
                dist.barrier()


        def step(t):
            if dist.get_rank() == 0:
                check(t)
    """
    assert codes_by_line(source, only=("RNK102",)) == [(13, "RNK102")]
