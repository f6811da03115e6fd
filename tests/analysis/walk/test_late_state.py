"""Object state set under a rank test and read earlier in the class's source order
(analysis/walk/late_state.py): `if step != self.last: all_reduce(...)` before
`if dist.get_rank() == 0: self.last = step`, in the same method or another."""

from __future__ import annotations

import textwrap

import pytest

from ranklint import Config, lint_source
from ranklint.findings import Confidence
from tests.conftest import codes_by_line

_CLASS = """
import torch.distributed as dist


class Tracker:
    # Class-level statements before the methods.
    limit = 2
    name: str = "tracker"

    def __init__(self):
        self.last = -1

    def push(self, step, t):
        if step != self.last:
            dist.all_reduce(t)  # the collective
{setter}
"""


def _line(source: str, text: str) -> int:
    lines = textwrap.dedent(source).lstrip("\n").splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def _found(setter: str) -> list[tuple[int, str]]:
    source = _CLASS.format(setter=textwrap.indent(textwrap.dedent(setter).strip("\n"), "    "))
    return codes_by_line(source, only=("RNK102",))


def _expected() -> list[tuple[int, str]]:
    return [(_line(_CLASS, "# the collective"), "RNK102")]


_RANK_SETTERS = {
    "same-method-after-the-read": """
            def push2(self, step, t):
                pass

            def mark(self, step):
                if dist.get_rank() == 0:
                    self.last = step
    """,
    "augmented": """
            def mark(self, step):
                if dist.get_rank() == 0:
                    self.last += 1
    """,
    "annotated": """
            def mark(self, step):
                if dist.get_rank() == 0:
                    self.last: int = step
    """,
    "in-a-loop-under-the-test": """
            def mark(self, steps):
                if dist.get_rank() == 0:
                    for step in steps:
                        self.last = step
    """,
    "test-inside-a-loop": """
            def mark(self, steps):
                for step in steps:
                    if dist.get_rank() == 0:
                        self.last = step
    """,
    "test-inside-a-with": """
            def mark(self, step, lock):
                with lock:
                    if dist.get_rank() == 0:
                        self.last = step
    """,
    "test-inside-a-handler": """
            def mark(self, step):
                try:
                    pass
                except ValueError:
                    if dist.get_rank() == 0:
                        self.last = step
    """,
    "test-inside-a-finally": """
            def mark(self, step):
                try:
                    pass
                finally:
                    if dist.get_rank() == 0:
                        self.last = step
    """,
    "test-inside-a-loops-else": """
            def mark(self, steps):
                for step in steps:
                    pass
                else:
                    if dist.get_rank() == 0:
                        self.last = 0
    """,
    "in-a-try-under-the-test": """
            def mark(self, step):
                if dist.get_rank() == 0:
                    try:
                        self.last = step
                    except ValueError:
                        pass
    """,
    "in-a-nested-if": """
            def mark(self, step, ok):
                if dist.get_rank() == 0:
                    if ok:
                        self.last = step
    """,
    "in-an-elif-arm": """
            def mark(self, step):
                if dist.get_rank() == 0:
                    self.last = step
                elif dist.get_rank() == 1:
                    self.last = step + 1
    """,
    "one-line-test": """
            def mark(self, step):
                if dist.get_rank() == 0: self.last = step
    """,
    "then-a-nested-if": """
            def mark(self, step, ok):
                if dist.get_rank() == 0:
                    self.last = step
                    if ok:
                        pass
    """,
    "then-a-loop": """
            def mark(self, step, steps):
                if dist.get_rank() == 0:
                    self.last = step
                    for _ in steps:
                        pass
    """,
    "in-a-try-with-a-finally": """
            def mark(self, step):
                if dist.get_rank() == 0:
                    try:
                        self.last = step
                    finally:
                        pass
    """,
    "in-a-loop-with-an-else": """
            def mark(self, steps):
                if dist.get_rank() == 0:
                    for step in steps:
                        self.last = step
                    else:
                        pass
    """,
    "one-of-two-targets": """
            def mark(self, step):
                if dist.get_rank() == 0:
                    self.other = self.last = step
    """,
}


@pytest.mark.parametrize("setter", sorted(_RANK_SETTERS))
def test_attribute_set_under_a_rank_test_later_in_the_class_makes_an_earlier_read_rank_dependent(
    setter: str,
) -> None:
    assert _found(_RANK_SETTERS[setter]) == _expected()


def test_attribute_set_in_the_same_method_after_the_read_is_found() -> None:
    source = """
        import torch.distributed as dist


        class Tracker:
            def __init__(self):
                self.last = -1

            def push(self, step, t):
                if step != self.last:
                    dist.all_reduce(t)
                if dist.get_rank() == 0:
                    self.last = step
    """
    assert codes_by_line(source, only=("RNK102",)) == [(10, "RNK102")]


_UNIFORM_SETTERS = {
    "both-arms": """
            def mark(self, step):
                if dist.get_rank() == 0:
                    self.last = step
                else:
                    self.last = step
    """,
    "uniform-test": """
            def mark(self, step):
                if dist.get_world_size() > 1:
                    self.last = step
    """,
    "every-rank": """
            def mark(self, step):
                self.last = step
    """,
    "a-local-not-the-attribute": """
            def mark(self, step):
                if dist.get_rank() == 0:
                    last = step
                    other.last = step
    """,
    "a-nested-function": """
            def mark(self, step):
                def later():
                    if dist.get_rank() == 0:
                        self.last = step
                return later
    """,
    "a-nested-class": """
            class Inner:
                def mark(self, step):
                    if dist.get_rank() == 0:
                        self.last = step
    """,
    "a-rank-test-that-assigns-nothing": """
            def mark(self, step):
                if dist.get_rank() == 0:
                    print(step)
                    self.last.append(step)
    """,
}


@pytest.mark.parametrize("setter", sorted(_UNIFORM_SETTERS))
def test_attribute_set_alike_on_every_rank_leaves_the_read_uniform(setter: str) -> None:
    assert _found(_UNIFORM_SETTERS[setter]) == []


def test_rank_set_attribute_of_one_class_leaves_another_classs_attribute_uniform() -> None:
    source = """
        import torch.distributed as dist


        class Setter:
            def mark(self, step):
                if dist.get_rank() == 0:
                    self.last = step


        class Reader:
            def __init__(self):
                self.last = -1

            def push(self, step, t):
                if step != self.last:
                    dist.all_reduce(t)
    """
    assert codes_by_line(source, only=("RNK102",)) == []


def test_late_attribute_is_rank_dependent_again_in_each_method_until_it_assigns_it() -> None:
    source = """
        import torch.distributed as dist


        class Tracker:
            def __init__(self):
                self.last = -1

            def reset(self):
                self.last = -1
                if self.last < 0:
                    dist.barrier()

            def check(self):
                if self.last < 0:
                    dist.barrier()

            def mark(self, step):
                if dist.get_rank() == 0:
                    self.last = step
    """
    assert codes_by_line(source, only=("RNK102",)) == [(15, "RNK102")]


def test_attribute_set_under_two_rank_tests_keeps_the_surest_source() -> None:
    source = """
        import torch.distributed as dist


        class Tracker:
            def push(self, step, t):
                if step != self.last:
                    dist.all_reduce(t)

            def mark(self, step):
                if dist.get_rank() == 0:
                    self.last = step

            def mark_again(self, step, rank):
                if rank == 0:
                    self.last = step
    """
    config = Config(select=("RNK102",), confidence="low")

    (finding,) = lint_source(textwrap.dedent(source), "tracker.py", config).findings

    assert (finding.line, finding.confidence.value) == (8, "high")


# -- module globals ------------------------------------------------------------------

_GLOBAL = """
import torch.distributed as dist

_LAST = -1


def push(step, t):
    global _LAST
    if step != _LAST:
        dist.broadcast(t, src=0)  # the collective
{setter}
"""


def _global_found(setter: str) -> list[tuple[int, str]]:
    """``setter`` in ``push`` after the read, or at module level where it defines
    a function or a class."""
    setter = textwrap.dedent(setter).strip("\n")
    if not setter.startswith(("def ", "class ", "# module level")):
        setter = textwrap.indent(setter, "    ")
    else:
        setter = "\n\n" + setter
    return codes_by_line(_GLOBAL.format(setter=setter), only=("RNK102",))


_GLOBAL_RANK_SETTERS = {
    "same-function-after-the-read": """
        if dist.get_rank() > 0:
            _LAST = step
    """,
    "nested-in-a-loop": """
        for _ in range(2):
            if dist.get_rank() == 0:
                _LAST += 1
    """,
    "another-function": """
    def mark(step):
        global _LAST
        if dist.get_rank() == 0:
            _LAST = step
    """,
    "a-function-defined-under-a-module-test": """
    # module level
    if dist.is_available():
        def mark(step):
            global _LAST
            if dist.get_rank() == 0:
                _LAST = step
    """,
    "a-function-defined-in-a-try": """
    # module level
    try:
        import numpy
    except ImportError:
        def mark(step):
            global _LAST
            if dist.get_rank() == 0:
                _LAST = step
    """,
    "a-method": """
    class Marker:
        def mark(self, step):
            global _LAST
            if dist.get_rank() == 0:
                _LAST = step
    """,
}


@pytest.mark.parametrize("setter", _GLOBAL_RANK_SETTERS.values(), ids=_GLOBAL_RANK_SETTERS.keys())
def test_module_global_set_under_a_rank_test_makes_its_reads_rank_dependent(setter: str) -> None:
    expected = [(_line(_GLOBAL, "# the collective"), "RNK102")]

    assert _global_found(setter) == expected


_GLOBAL_UNIFORM_SETTERS = {
    "every-rank": """
        _LAST = step
    """,
    "both-arms": """
        if dist.get_rank() == 0:
            _LAST = step
        else:
            _LAST = step
    """,
    "uniform-test": """
        if dist.get_world_size() > 1:
            _LAST = step
    """,
    "not-declared-global": """
    def mark(step):
        if dist.get_rank() == 0:
            _LAST = step
    """,
    "another-global": """
    def mark(step):
        global _OTHER
        if dist.get_rank() == 0:
            _OTHER = step
    """,
    "in-a-nested-function": """
    def outer():
        def mark(step):
            global _LAST
            if dist.get_rank() == 0:
                _LAST = step
    """,
}


@pytest.mark.parametrize(
    "setter", _GLOBAL_UNIFORM_SETTERS.values(), ids=_GLOBAL_UNIFORM_SETTERS.keys()
)
def test_module_global_set_alike_on_every_rank_or_not_global_leaves_reads_uniform(
    setter: str,
) -> None:
    assert _global_found(setter) == []


def test_late_global_keeps_the_rank_tests_source_and_reaches_a_function_defined_before() -> None:
    source = """
import torch.distributed as dist

_LAST = -1


def push(step, t):
    if step != _LAST:
        dist.all_reduce(t)


def mark(step):
    global _LAST
    if dist.get_rank() == 0:
        _LAST = step
"""
    result = lint_source(textwrap.dedent(source), "m.py", Config(select=("RNK102",)))

    (finding,) = result.findings
    assert finding.line == 9
    assert "`step != _LAST`" in finding.message
    assert finding.confidence is Confidence.HIGH


def test_global_set_under_two_rank_tests_keeps_the_surest_source() -> None:
    setter = """
        if dist.get_rank() == 0:
            _LAST = step
        if rank == 0:
            _LAST = step + 1
    """
    source = _GLOBAL.format(setter=textwrap.indent(textwrap.dedent(setter).strip("\n"), "    "))

    result = lint_source(source.lstrip("\n"), "m.py", Config(select=("RNK102",)))

    (finding,) = result.findings
    assert finding.line == _line(_GLOBAL, "# the collective")
    assert finding.confidence is Confidence.HIGH  # the query's, not the name's (medium)
