"""RNK601 tensor-compare-without-tolerance."""

from __future__ import annotations

import libcst as cst

from ranklint.findings import Severity
from ranklint.rules.testsuite.test_rules import _TestRule

# qualified name -> number of positional parameters before rtol, atol
_TOLERANT = {
    "torch.allclose": 2,
    "torch.isclose": 2,
    "torch.testing.assert_close": None,
    "torch.testing.assert_allclose": 2,
    "numpy.allclose": 2,
    "numpy.isclose": 2,
    "numpy.testing.assert_allclose": 2,
}


class TensorCompareWithoutTolerance(_TestRule):
    code = "RNK601"
    name = "tensor-compare-without-tolerance"
    severity = Severity.WARNING
    summary = "A tensor comparison in a test leaves rtol or atol implicit"
    what = """\
Reports, in test files, `torch.allclose`, `torch.isclose`,
`torch.testing.assert_close`, `torch.testing.assert_allclose`,
`numpy.allclose`, `numpy.isclose`, `numpy.testing.assert_allclose` and the
`.allclose()` / `.isclose()` tensor methods called without both `rtol` and
`atol` (by keyword or position).
"""
    why = """\
Default tolerances depend on the dtype and the function (`allclose` uses
`rtol=1e-5, atol=1e-8`, `assert_close` picks per dtype, numpy's
`assert_allclose` has `atol=0`): a sharded or reduced-precision result that
is fine fails, or one that is wrong passes, and nobody reading the test can
tell which tolerance was meant. Distributed results differ from single-process
ones by reduction order: the tolerance is part of what the test claims.
"""
    limits = """\
Calls through aliases of these functions are not recognised.
"""
    valid = (
        """
        import torch


        def test_sharded_matches_reference(got, expected):
            torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6)
            assert torch.allclose(got, expected, 1e-5, 1e-6)
        """,
    )
    invalid = (
        """
        import numpy as np
        import torch


        def test_sharded_matches_reference(got, expected):
            torch.testing.assert_close(got, expected)  # expect: RNK601
            assert torch.allclose(got, expected, atol=1e-6)  # expect: RNK601
            assert got.allclose(expected)  # expect: RNK601
            np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-5)  # expect: RNK601
        """,
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not self.active:
            return
        func = node.func
        name = self.ctx.names.resolve(func)
        if name is not None and name in _TOLERANT:
            before = _TOLERANT[name]
            label = name
        elif (
            name is None
            and isinstance(func, cst.Attribute)
            and func.attr.value in ("allclose", "isclose")
        ):
            before, label = 1, f".{func.attr.value}"
        else:
            return
        keywords = {arg.keyword.value for arg in node.args if arg.keyword is not None}
        positional = sum(1 for arg in node.args if arg.keyword is None and not arg.star)
        if any(arg.star == "**" for arg in node.args):
            return
        have = set(keywords)
        if before is not None:
            if positional > before:
                have.add("rtol")
            if positional > before + 1:
                have.add("atol")
        missing = [word for word in ("rtol", "atol") if word not in have]
        if missing:
            self.report(
                node,
                f"`{label}()` without explicit {' and '.join(f'`{m}`' for m in missing)}: the "
                f"defaults depend on the function and dtype, so the test's claim is unclear; "
                f"pass both `rtol=` and `atol=`",
            )
