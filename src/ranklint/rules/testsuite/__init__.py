"""Test rules (RNK6xx): apply to files matching `test-patterns` only."""

from __future__ import annotations

from ranklint.rules.testsuite.mocked_sharding_internals import MockedShardingInternals
from ranklint.rules.testsuite.skip_without_reason import SkipWithoutReason
from ranklint.rules.testsuite.tensor_compare_without_tolerance import TensorCompareWithoutTolerance
from ranklint.rules.testsuite.unmarked_distributed_test import UnmarkedDistributedTest

__all__ = [
    "MockedShardingInternals",
    "SkipWithoutReason",
    "TensorCompareWithoutTolerance",
    "UnmarkedDistributedTest",
]
