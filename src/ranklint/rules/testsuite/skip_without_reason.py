"""RNK602 skip-without-reason."""

from __future__ import annotations

import libcst as cst

from ranklint.findings import Severity
from ranklint.rules.testsuite._test_rule import _TestRule

_PYTEST_SKIPS = frozenset({"pytest.mark.skip", "pytest.mark.skipif"})


class SkipWithoutReason(_TestRule):
    code = "RNK602"
    name = "skip-without-reason"
    severity = Severity.WARNING
    summary = "A test is skipped without saying why"
    what = """\
Reports, in test files, `@pytest.mark.skip` / `@pytest.mark.skipif(...)`
without `reason=`, `pytest.skip()` without a message, and bare
`@unittest.skip` (without a reason).
"""
    why = """\
A skip without a reason reads as "broken, ignore": nobody knows whether the
test can run again, on which machine, or after which fix. Distributed tests
are skipped for concrete reasons (no GPU, fewer than 8 ranks, no NCCL): say
which, so that the CI report tells what was not tested.
"""
    limits = """\
Skips through helper decorators of the project are not recognised.
"""
    valid = (
        """
        import pytest
        import torch


        @pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
        def test_on_gpu():
            pytest.skip("NCCL is not built in")
        """,
    )
    invalid = (
        """
        import unittest

        import pytest


        @pytest.mark.skip  # expect: RNK602
        def test_later():
            pytest.skip()  # expect: RNK602


        @pytest.mark.skipif(True)  # expect: RNK602
        def test_flaky():
            pass


        class Test(unittest.TestCase):
            @unittest.skip  # expect: RNK602
            def test_old(self):
                pass
        """,
    )

    def visit_Decorator(self, node: cst.Decorator) -> None:
        if not self.active:
            return
        decorator = node.decorator
        call = decorator if isinstance(decorator, cst.Call) else None
        name = self.ctx.names.resolve(call.func if call is not None else decorator)
        if name in _PYTEST_SKIPS:
            reason = call is not None and any(
                arg.keyword is not None and arg.keyword.value == "reason" for arg in call.args
            )
            if name == "pytest.mark.skip" and call is not None:
                reason = reason or any(arg.keyword is None for arg in call.args)
            if not reason:
                self._report(node.decorator, f"`@{name}`")
        elif name == "unittest.skip" and call is None:
            self._report(node.decorator, "`@unittest.skip`")

    def visit_Call(self, node: cst.Call) -> None:
        if not self.active:
            return
        if self.ctx.names.resolve(node.func) == "pytest.skip" and not node.args:
            self._report(node, "`pytest.skip()`")

    def _report(self, node: cst.CSTNode, what: str) -> None:
        self.report(
            node,
            f"{what} without a reason: the report cannot say what was not tested or when it "
            f'can run again; give the reason (`reason="needs 8 GPUs"`)',
        )
