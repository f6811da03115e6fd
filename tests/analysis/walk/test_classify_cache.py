"""CallClassifier: a call keeps the classification it had where the walk reached it;
a look-ahead (``peek``) reads that classification but never fixes one."""

from __future__ import annotations

import libcst as cst

from ranklint.analysis.walk.classify import CallClassifier
from ranklint.analysis.walk.names import NameTable

ALL_REDUCE = "torch.distributed.all_reduce"


def _classifier() -> tuple[NameTable, CallClassifier]:
    names = NameTable()
    names.bind_import("all_reduce", ALL_REDUCE)
    return names, CallClassifier(names, {}, {})


def test_classify_keeps_a_calls_first_classification_after_its_name_is_rebound() -> None:
    names, calls = _classifier()
    node = cst.parse_expression("all_reduce(t)")
    assert isinstance(node, cst.Call)

    first = calls.classify(node)
    names.bind_other("all_reduce")  # now a local name: a fresh classification finds no row

    assert first[1] == ALL_REDUCE
    assert calls.classify(node) == first
    assert calls.peek(node) == first


def test_peek_of_an_unreached_call_classifies_it_now_without_caching() -> None:
    names, calls = _classifier()
    node = cst.parse_expression("all_reduce(t)")
    assert isinstance(node, cst.Call)
    names.bind_other("all_reduce")

    assert calls.peek(node) == (None, "@local:all_reduce")
    names.bind_import("all_reduce", ALL_REDUCE)

    assert calls.classify(node)[1] == ALL_REDUCE


def test_two_calls_of_the_same_text_are_classified_apart() -> None:
    names, calls = _classifier()
    first, second = cst.parse_expression("all_reduce(t)"), cst.parse_expression("all_reduce(t)")
    assert isinstance(first, cst.Call)
    assert isinstance(second, cst.Call)

    calls.classify(first)
    names.bind_other("all_reduce")

    assert calls.classify(second) == (None, "@local:all_reduce")
