"""RNK601 tensor-compare-without-tolerance."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ranklint.analysis.walk.context import FileContext
from ranklint.findings import Applicability, Severity
from ranklint.rules.base import PendingFinding, PendingFix
from ranklint.rules.codemods import keyword_argument, with_argument
from ranklint.rules.testsuite._exact_values import ExactValues
from ranklint.rules.testsuite._test_rule import _TestRule

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

# The fixed defaults of the comparisons that have them (`assert_close` and
# `assert_allclose` of torch pick them per dtype: no fix writes those out).
_DEFAULTS = {
    "torch.allclose": ("1e-05", "1e-08"),
    "torch.isclose": ("1e-05", "1e-08"),
    ".allclose": ("1e-05", "1e-08"),
    ".isclose": ("1e-05", "1e-08"),
    "numpy.allclose": ("1e-05", "1e-08"),
    "numpy.isclose": ("1e-05", "1e-08"),
    "numpy.testing.assert_allclose": ("1e-07", "0"),
}

# Assertions that pass when their argument is false: `assertFalse(torch.allclose(a, b))`
# checks that something changed, which any tolerance shows.
_NEGATING_ASSERTS = frozenset({"assertFalse", "assert_false"})


class TensorCompareWithoutTolerance(_TestRule):
    code = "RNK601"
    name = "tensor-compare-without-tolerance"
    severity = Severity.WARNING
    summary = "A tensor comparison in a test leaves rtol or atol implicit"
    default_enabled = False
    what = """\
Reports, in test files, `torch.allclose`, `torch.isclose`,
`torch.testing.assert_close`, `torch.testing.assert_allclose`,
`numpy.allclose`, `numpy.isclose`, `numpy.testing.assert_allclose` and the
`.allclose()` / `.isclose()` tensor methods called without both `rtol` and
`atol` (by keyword or position).

Not reported:
- integer and bool comparisons, where tolerances do not apply. A torch
  comparison is exact when either side is evidently integer or bool (torch
  requires both sides to have one dtype); a numpy one, or one with
  `check_dtype=False`, when both are. Evident means: an integer or bool
  `dtype=` or `.to(torch.long)`, `.long()` / `.int()` / `.bool()`, integer
  literals (`torch.tensor([0, 100])`), `torch.arange` without a float
  argument, comparison results, index-valued functions (`argmax`,
  `nonzero`, `randint`), `.shape` / `.size()`, jagged `lengths()` /
  `offsets()`, names ending in `ids`, `idx`, `indices`, `lengths`,
  `offsets` or `ranks`, and local names bound to any of these;
- negated comparisons (`assert not torch.allclose(a, b)`,
  `assertFalse(...)`): they only check that something changed.

A convention, off by default: opt in with `extend-select = ["RNK601"]` in
`[tool.ranklint]`.
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
Calls through aliases of these functions are not recognised. Integer tensors
are recognised only from what the test function shows (module-level constants
and helpers' return values are not followed), so an integer comparison of
values made elsewhere is still reported: compare them with `torch.equal`.
Float comparisons that are exact by construction (a copy compared with its
source) are reported: `torch.equal` says so. Calls that pass `*args` or
`**kwargs` are not reported: the tolerances may be among them.
"""
    valid = (
        """
        import torch


        def test_sharded_matches_reference(got, expected):
            torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6)
            assert torch.allclose(got, expected, 1e-5, 1e-6)
        """,
        """
        import torch


        # torchrec tests: ids, lengths and offsets are integer tensors.
        def test_ids_are_offset(dist_ids, sharded_jt, unsharded_jt):
            torch.testing.assert_close(dist_ids[1], torch.tensor([0, 100]))
            torch.testing.assert_close(unsharded_jt.lengths(), sharded_jt.lengths())
            want = torch.tensor([[0, 0], [0, 0]], dtype=torch.int64)
            torch.testing.assert_close(dist_ids[0], want)


        # pytorch-lightning tests_pytorch/models/test_hooks.py: a long tensor.
        def test_targets_moved(batch):
            assert torch.allclose(batch.targets.cpu(), torch.ones(5, 1, dtype=torch.long) * 2)


        # nemo test_evo2_dataset.py: an int32 mask stacked from int32 rows.
        def test_mask(mask):
            row = torch.tensor([1, 0, 1], dtype=torch.int32)
            expected_mask = torch.stack([row, row])
            torch.testing.assert_close(mask, expected_mask)
            torch.testing.assert_close(torch.arange(4), mask.argmax(dim=0))
        """,
        """
        import torch


        # torchtune test_transformer_decoder.py: the cache was reset, so it changed.
        def test_kv_cache_reset(before, after):
            assert not torch.allclose(before, after)
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
        """
        import numpy as np
        import torch


        def test_float_against_ints(got):
            torch.testing.assert_close(got, torch.tensor([0.0, 1.0]))  # expect: RNK601
            assert np.allclose(got.numpy(), np.array([0, 1]))  # expect: RNK601
        """,
    )

    fix_applicability = frozenset({Applicability.SAFE})
    fix_safety = """\
Where the function's defaults are fixed numbers, the fix writes out the
missing ones: `rtol=1e-05, atol=1e-08` for `torch.allclose`, `torch.isclose`,
the tensor methods, `numpy.allclose` and `numpy.isclose`, `rtol=1e-07,
atol=0` for `numpy.testing.assert_allclose`. It is safe: the comparison is
the one it was, and the tolerances it relies on are now in the test for a
reviewer to tighten or loosen. `torch.testing.assert_close` and
`assert_allclose` choose their defaults by dtype, so they get no fix.
"""
    fixes = (
        (
            """
            import numpy as np
            import torch


            def test_allreduce_average(got, expected):
                assert torch.allclose(got, expected)
                np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-5)
            """,
            """
            import numpy as np
            import torch


            def test_allreduce_average(got, expected):
                assert torch.allclose(got, expected, rtol=1e-05, atol=1e-08)
                np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-5, atol=0)
            """,
        ),
    )

    def __init__(self, ctx: FileContext, sink: Callable[[PendingFinding], None]) -> None:
        super().__init__(ctx, sink)
        self._negated: set[int] = set()
        self._exact: dict[int, ExactValues] = {}

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        if self.active and isinstance(node.operator, cst.Not):
            self._negated.add(id(node.expression))

    def visit_Call(self, node: cst.Call) -> None:
        if not self.active:
            return
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _NEGATING_ASSERTS and node.args:
            self._negated.add(id(node.args[0].value))
        name = self.ctx.names.resolve(func)
        if name is not None and name in _TOLERANT:
            before = _TOLERANT[name]
            label = name
            operands = [arg.value for arg in node.args if arg.keyword is None][:2]
        elif (
            name is None
            and isinstance(func, cst.Attribute)
            and func.attr.value in ("allclose", "isclose")
        ):
            before, label = 1, f".{func.attr.value}"
            operands = [func.value, *(arg.value for arg in node.args if arg.keyword is None)][:2]
        else:
            return
        keywords = {arg.keyword.value for arg in node.args if arg.keyword is not None}
        positional = sum(1 for arg in node.args if arg.keyword is None and not arg.star)
        if any(arg.star for arg in node.args):
            return  # `*args` or `**kwargs` may carry the tolerances
        have = set(keywords)
        if before is not None:
            if positional > before:
                have.add("rtol")
            if positional > before + 1:
                have.add("atol")
        missing = [word for word in ("rtol", "atol") if word not in have]
        if not missing or id(node) in self._negated:
            return
        if self._exact_comparison(node, label, operands):
            return
        self.report(
            node,
            f"`{label}()` without explicit {' and '.join(f'`{m}`' for m in missing)}: the "
            f"defaults depend on the function and dtype, so the test's claim is unclear; "
            f"pass both `rtol=` and `atol=`",
            fix=_defaults_written_out(node, label, missing),
        )

    def _exact_comparison(
        self, node: cst.Call, label: str, operands: list[cst.BaseExpression]
    ) -> bool:
        """Both sides (or, where torch demands one dtype, either side) are integer or bool."""
        if not operands:
            return False
        scope: cst.CSTNode = self.ctx.function.node if self.ctx.function else self.ctx.module
        values = self._exact.get(id(scope))
        if values is None:
            values = self._exact[id(scope)] = ExactValues(self.ctx.names, scope)
        exact = [values.exact_at(operand, node) for operand in operands]
        same_dtype = not label.startswith("numpy.") and not any(
            arg.keyword is not None
            and arg.keyword.value == "check_dtype"
            and isinstance(arg.value, cst.Name)
            and arg.value.value == "False"
            for arg in node.args
        )
        return any(exact) if same_dtype else len(exact) == 2 and all(exact)


def _defaults_written_out(node: cst.Call, label: str, missing: list[str]) -> PendingFix | None:
    """The call with its ``missing`` tolerances written out as the defaults they are."""
    defaults = _DEFAULTS.get(label)
    if defaults is None:
        return None
    # (`strict=` is not mutated: every entry of _DEFAULTS is a pair.)
    values = dict(zip(("rtol", "atol"), defaults, strict=True))  # pragma: no mutate
    fixed = node
    for word in missing:
        number = values[word]
        value = cst.Integer(number) if number.isdigit() else cst.Float(number)
        fixed = with_argument(fixed, keyword_argument(word, value))
    listed = ", ".join(f"{word}={values[word]}" for word in missing)
    return PendingFix(f"Write out the default tolerances: `{listed}`", node, fixed)
