"""What decorators say about a function: run on one rank only, still a coroutine."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ranklint.analysis.walk.decorators import keeps_coroutine, rank_only_decorator


def _function(source: str) -> cst.FunctionDef:
    node = cst.parse_module(textwrap.dedent(source)).body[0]
    assert isinstance(node, cst.FunctionDef)
    return node


@pytest.mark.parametrize(
    ("decorators", "expected"),
    [
        ("@rank_zero_only", "@rank_zero_only"),
        ("@pl.utilities.rank_zero_only", "@pl.utilities.rank_zero_only"),
        ("@main_process_only()", "@main_process_only"),
        ("@on_local_main_process", "@on_local_main_process"),
        ("@master_only", "@master_only"),
        ("@torch.no_grad()\n@rank0_only", "@rank0_only"),
        ("@torch.no_grad()", None),
        ("@cache", None),
        ("", None),
    ],
)
def test_rank_only_decorator_names_the_decorator_as_written(
    decorators: str, expected: str | None
) -> None:
    node = _function(f"{decorators}\ndef save():\n    pass\n")

    assert rank_only_decorator(node) == expected


@pytest.mark.parametrize(
    ("decorators", "expected"),
    [
        ("", True),
        ("@staticmethod", True),
        ("@classmethod\n@abstractmethod", True),
        ("@functools.wraps(f)", True),
        ("@typing.override", True),
        ("@typing.extensions.override", True),
        ("@registry['x']", False),
        ("@auto_await", False),
        ("@staticmethod\n@sync", False),
    ],
)
def test_keeps_coroutine_only_under_decorators_that_return_the_function(
    decorators: str, expected: bool
) -> None:
    node = _function(f"{decorators}\nasync def fetch():\n    pass\n")

    assert keeps_coroutine(node) is expected
