"""RNK601 tensor-compare-without-tolerance: which tolerances its fix writes out,
what it leaves alone, and the exact messages of its finding and fix."""

from __future__ import annotations

import pytest

from tests.fix_cases import dedented, rule_findings, rule_fixed

TEST_PATH = "tests/test_x.py"  # RNK601 looks at test files only


@pytest.mark.parametrize(
    ("call", "fixed_call"),
    [
        pytest.param(
            "torch.allclose(got, expected, 1e-3)",
            "torch.allclose(got, expected, 1e-3, atol=1e-08)",
            id="positional-rtol-adds-only-atol",
        ),
        pytest.param(
            "torch.allclose(got, expected, 0)",
            "torch.allclose(got, expected, 0, atol=1e-08)",
            id="integer-positional-rtol-is-no-integer-operand",
        ),
        pytest.param(
            "got.allclose(expected, 1e-3)",
            "got.allclose(expected, 1e-3, atol=1e-08)",
            id="method-with-positional-rtol-adds-only-atol",
        ),
        pytest.param(
            "got.allclose(expected, 0)",
            "got.allclose(expected, 0, atol=1e-08)",
            id="method-integer-positional-rtol-is-no-integer-operand",
        ),
        pytest.param(
            "torch.allclose(input=got, other=expected)",
            "torch.allclose(input=got, other=expected, rtol=1e-05, atol=1e-08)",
            id="operands-by-keyword",
        ),
        pytest.param(
            "self.assertTrue(torch.allclose(got, expected))",
            "self.assertTrue(torch.allclose(got, expected, rtol=1e-05, atol=1e-08))",
            id="inside-a-non-negating-assert",
        ),
        pytest.param(
            "(~torch.isclose(got, expected)).any()",
            "(~torch.isclose(got, expected, rtol=1e-05, atol=1e-08)).any()",
            id="bitwise-inverted-is-not-negated",
        ),
        pytest.param(
            "np.testing.assert_allclose(got, expected)",
            "np.testing.assert_allclose(got, expected, rtol=1e-07, atol=0)",
            id="numpy-assert-allclose-integer-atol",
        ),
    ],
)
def test_tolerance_fix_writes_out_only_the_missing_defaults(call: str, fixed_call: str) -> None:
    head = "import numpy as np\nimport torch\n\n\ndef test_x(self, got, expected):\n    "

    fixed = rule_fixed("RNK601", f"{head}{call}\n", TEST_PATH)

    assert fixed == f"{head}{fixed_call}\n"


def test_tolerance_fix_at_module_level_of_a_test_file_writes_out_both() -> None:
    source = "import torch\n\nSAME = torch.allclose(GOT, EXPECTED)\n"

    fixed = rule_fixed("RNK601", source, TEST_PATH)

    assert fixed == source.replace("EXPECTED)", "EXPECTED, rtol=1e-05, atol=1e-08)")


@pytest.mark.parametrize(
    "call",
    [
        pytest.param("torch.allclose(got, expected, **tolerances)", id="keyword-unpacking"),
        pytest.param("ids.allclose(got)", id="method-on-integer-ids"),
        pytest.param("got.allclose(ids)", id="method-with-integer-ids-argument"),
        pytest.param(
            "torch.testing.assert_close(got, torch.tensor([0, 1]), equal_nan=False)",
            id="integer-side-with-another-false-keyword",
        ),
    ],
)
def test_tolerance_rule_reports_nothing_with_unpacked_keywords_or_an_integer_side(
    call: str,
) -> None:
    source = f"import torch\n\n\ndef test_x(got, expected, ids, tolerances):\n    {call}\n"

    assert rule_findings("RNK601", source, TEST_PATH) == []


def test_tolerance_finding_and_fix_messages_list_both_missing_tolerances() -> None:
    source = "import torch\n\n\ndef test_x(got, expected):\n    torch.isclose(got, expected)\n"

    (finding,) = rule_findings("RNK601", source, TEST_PATH)

    assert finding.message == (
        "`torch.isclose()` without explicit `rtol` and `atol`: the defaults depend on the "
        "function and dtype, so the test's claim is unclear; pass both `rtol=` and `atol=`"
    )
    assert finding.fix is not None
    assert finding.fix.message == "Write out the default tolerances: `rtol=1e-05, atol=1e-08`"


def test_tolerance_rule_judges_a_name_by_the_binding_in_its_own_test_function() -> None:
    source = dedented(
        """
        import torch

        want = torch.ones(2)


        def test_local_integers(got):
            want = torch.arange(4)
            torch.testing.assert_close(got, want)


        def test_module_floats(got):
            torch.testing.assert_close(got, want)
        """
    )

    findings = rule_findings("RNK601", source, TEST_PATH)

    assert [finding.line for finding in findings] == [12]
