"""The names a module's wildcard imports may give it (analysis/walk/wildcards.py): what the
module reads unbound, and where a reader of the module alone cannot tell."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ranklint.analysis.walk.wildcards import WildcardNames, wildcard_names


def _names(source: str) -> WildcardNames:
    return wildcard_names(cst.parse_module(textwrap.dedent(source).lstrip("\n")))


def test_names_read_where_no_scope_binds_them_are_read_from_the_wildcards() -> None:
    names = _names(
        """
        from a import *
        from b import *
        import os, numpy as np
        import os.path as osp
        from x import y, z as w
        value: int = 1
        bare: int


        def f(p):
            return p, os, np, osp, y, w, value, bare, missing, print, __name__, __class__


        x.y.z()
        print(__file__, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, trailing__, __a__, ____)
        """
    )

    assert names.stars == 2
    assert names.read == {"missing", "x", "trailing__", "____"} | {f"a{i}" for i in range(10)}
    assert names.strings == set()
    assert names.conditional == {"bare"}  # an annotation alone binds nothing
    assert not names.has_all


@pytest.mark.parametrize(
    ("source", "certain"),
    [
        ("x = 1", True),
        ("x, (y, *z) = 1, (2, 3)", True),
        ("[x] = [1]", True),
        ("import x", True),
        ("import x.sub", True),
        ("from m import x", True),
        ("from m import a as x", True),
        ("def x(): pass", True),
        ("class x: pass", True),
        ("if c:\n    x = 1\nelse:\n    x = 2", True),
        ("if c:\n    x = 1\nelif d:\n    x = 2\nelse:\n    x = 3", True),
        ("if c:\n    x = 1\nelif d:\n    x = 2", False),
        ("if c:\n    x = 1", False),
        ("if c:\n    x = 1\nelse:\n    pass", False),
        ("if c: x = 1\nelse: x = 2", True),
        ("try:\n    x = 1\nexcept E:\n    x = 2", True),
        ("try:\n    x = 1\nexcept E:\n    pass", False),
        ("try:\n    pass\nexcept E:\n    x = 2", False),
        ("try:\n    pass\nexcept E:\n    x = 1\nelse:\n    x = 2", True),
        ("try:\n    pass\nfinally:\n    x = 1", True),
        ("try:\n    x = 1\nexcept E:\n    x = 2\nelse:\n    pass", True),
        ("try:\n    x = 1\nexcept E:\n    x = 2\nfinally:\n    pass", True),
        ("with m() as h:\n    x = 1", True),
        ("for i in r:\n    x = 1", False),
        ("while c:\n    x = 1", False),
        ("(x := 1)", True),
        ("[x for x in r]", False),
        ("f = lambda x: x", False),
        ("y = [x := 1 for _ in r]", False),
        ("x += 1", False),
    ],
)
def test_a_module_level_name_bound_only_under_a_condition_is_conditional(
    source: str, certain: bool
) -> None:
    names = _names(f"from m import *\nc = d = E = r = 0\n{source}\nprint(x)\n")

    # Not certain: bound under a condition, or only in a scope of its own.
    assert ("x" in names.unclear) is not certain
    assert ("x" in names.conditional or "x" in names.bound_elsewhere) is not certain


def test_name_bound_by_global_in_a_function_is_conditional_at_module_level() -> None:
    names = _names("from m import *\n\n\ndef f():\n    global g\n    g = 1\n\n\nprint(g)\n")

    assert names.conditional == {"g"}
    assert names.read == set()


def test_name_read_from_the_wildcard_and_bound_in_another_scope_is_bound_elsewhere() -> None:
    names = _names(
        """
        from m import *


        def f():
            import math
            return math.pi


        SCALE = math.e + tau
        """
    )

    assert names.read == {"math", "tau"}
    assert names.bound_elsewhere == {"math"}
    assert names.unclear == {"math"}


def test_name_read_only_in_annotations_and_string_annotations_are_unclear() -> None:
    names = _names(
        """
        from m import *


        def f(x: Engine, y: "Other") -> Engine:
            return launch(x, y)


        def g(x: Model):
            return Model(x)
        """
    )

    assert names.read == {"Engine", "launch", "Model"}
    assert names.annotations_only == {"Engine"}
    assert names.strings == {'"Other"'}
    assert names.unclear == {"Engine", '"Other"'}


def test_private_names_and_match_captures_are_unclear() -> None:
    names = _names(
        """
        from m import *

        match point:
            case [first, *rest]:
                print(first, rest, _private)
        """
    )

    assert names.read == {"point", "_private"}
    assert names.conditional == {"first", "rest"}
    assert names.unclear == {"first", "rest", "_private"}


def test_relative_wildcard_binds_its_submodule_and_all_is_seen() -> None:
    names = _names("from .layers.linear import *\nfrom . import *\n__all__ = layers.__all__\n")

    assert names.stars == 2
    assert names.read == set()
    assert names.has_all


def test_module_without_anything_unclear_says_so() -> None:
    names = _names("from m import *\n\n\ndef f(t):\n    return all_reduce(t)\n")

    assert names.read == {"all_reduce"}
    assert names.unclear == set()


def test_string_annotation_of_a_bound_name_is_clear_and_other_reads_are_still_seen() -> None:
    names = _names(
        """
        from m import *


        class Foo:
            pass


        def f(x: "Foo", y: "Bar"):
            return b0, b1, b2, b3, b4, b5, b6, b7, b8, b9
        """
    )

    assert names.strings == {'"Bar"'}
    assert names.read == {f"b{i}" for i in range(10)}
