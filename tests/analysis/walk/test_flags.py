"""Flags that restate a rank test: `serve = True; if rank > 0: serve = False`."""

from __future__ import annotations

import libcst as cst
import pytest

from ranklint.analysis.walk.defaults import DEFAULT_RANK_NAMES
from ranklint.analysis.walk.flags import RestatedFlags
from ranklint.analysis.walk.names import NamePatterns, NameTable
from ranklint.analysis.walk.rank import RankTaint

_TEST = cst.parse_expression("rank > 0")
_OTHER = cst.parse_expression("rank == 1")
_TRUE = cst.Name("True")
_FALSE = cst.Name("False")


@pytest.mark.parametrize(
    ("default", "assigned", "arm", "negated"),
    [
        (_TRUE, _FALSE, 0, True),  # set False where the test holds: the flag is its negation
        (_FALSE, _TRUE, 0, False),  # set True where the test holds: the flag is the test
        (_TRUE, _FALSE, 1, False),  # set False in `else`: the flag holds where the test does
        (_FALSE, _TRUE, 1, True),
    ],
)
def test_flag_given_the_other_literal_under_one_rank_test_restates_it(
    default: cst.Name, assigned: cst.Name, arm: int, negated: bool
) -> None:
    flags = RestatedFlags()
    flags.assigned("serve", default, ())

    flags.assigned("serve", assigned, [(_TEST, arm)])

    assert flags.predicate("serve") == (_TEST, negated)


def test_flag_given_the_same_literal_again_restates_nothing() -> None:
    flags = RestatedFlags()
    flags.assigned("serve", _TRUE, ())

    flags.assigned("serve", _TRUE, [(_TEST, 0)])

    assert flags.predicate("serve") is None


def test_flag_without_a_literal_default_restates_nothing() -> None:
    flags = RestatedFlags()
    flags.assigned("serve", cst.parse_expression("args.serve"), ())

    flags.assigned("serve", _FALSE, [(_TEST, 0)])

    assert flags.predicate("serve") is None


def test_flag_set_under_two_rank_tests_restates_nothing() -> None:
    flags = RestatedFlags()
    flags.assigned("serve", _TRUE, ())

    flags.assigned("serve", _FALSE, [(_TEST, 0), (_OTHER, 0)])

    assert flags.predicate("serve") is None


def test_flag_assigned_again_after_the_rank_test_is_forgotten() -> None:
    flags = RestatedFlags()
    flags.assigned("serve", _TRUE, ())
    flags.assigned("serve", _FALSE, [(_TEST, 0)])

    flags.assigned("serve", cst.parse_expression("check()"), ())

    assert flags.predicate("serve") is None


def test_second_assignment_under_a_rank_test_does_not_restate_it_again() -> None:
    flags = RestatedFlags()
    flags.assigned("serve", _TRUE, ())
    flags.assigned("serve", _FALSE, [(_TEST, 0)])

    flags.assigned("serve", _FALSE, [(_OTHER, 0)])

    assert flags.predicate("serve") is None


def test_flag_with_a_test_that_cannot_be_read_restates_nothing() -> None:
    flags = RestatedFlags()
    flags.assigned("serve", _TRUE, ())

    flags.assigned("serve", _FALSE, [(None, 0)])

    assert flags.predicate("serve") is None


def test_unknown_flag_restates_nothing() -> None:
    assert RestatedFlags().predicate("serve") is None


def test_flag_given_an_unknown_value_before_the_rank_test_restates_nothing() -> None:
    flags = RestatedFlags()
    flags.assigned("serve", _TRUE, ())
    flags.assigned("serve", cst.parse_expression("args.serve"), ())

    flags.assigned("serve", _FALSE, [(_TEST, 0)])

    assert flags.predicate("serve") is None


def test_flag_set_in_the_else_arm_of_a_walked_rank_test_holds_where_the_test_does() -> None:
    # Through RankTaint: `serve = True; if rank > 0: ... else: serve = False`.
    rank = RankTaint(NameTable(), NamePatterns(DEFAULT_RANK_NAMES))
    serve = cst.Name("serve")
    rank.bind_assignment([serve], _TRUE)
    rank.begin_control(_TEST, branch=True)
    rank.switch_control_arm()
    rank.bind_assignment([serve], _FALSE)
    rank.end_control()

    assert rank.predicate("serve") == (_TEST, False)
