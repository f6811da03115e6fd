"""Shared by the RNK6xx rules: a base class that runs in test files only."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from ranklint.analysis.walk.context import FileContext
from ranklint.rules.base import PendingFinding, Rule


class _TestRule(Rule):
    example_path: ClassVar[str] = "tests/test_example.py"

    def __init__(self, ctx: FileContext, sink: Callable[[PendingFinding], None]) -> None:
        super().__init__(ctx, sink)
        self.active = ctx.is_test
