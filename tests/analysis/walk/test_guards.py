"""Recognised guards: ``__name__ == "__main__"`` and ``TYPE_CHECKING`` tests."""

from __future__ import annotations

import libcst as cst
import pytest

from ranklint.analysis.walk.guards import guard_kind


@pytest.mark.parametrize(
    ("test", "kind"),
    [
        ('__name__ == "__main__"', "main"),
        ("'__main__' != __name__", "not-main"),
        ("TYPE_CHECKING", "type-checking"),
        ("typing.TYPE_CHECKING", "type-checking"),
        ("compat.typing.TYPE_CHECKING", "type-checking"),
        ("typing.TYPE_CHECKING.x", None),
        ("DEBUG", None),
    ],
)
def test_guard_kind_of_an_if_test_names_the_guard_it_recognises(
    test: str, kind: str | None
) -> None:
    assert guard_kind(cst.parse_expression(test)) == kind
