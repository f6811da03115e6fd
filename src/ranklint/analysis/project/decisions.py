"""Deciding branches: which arm a test takes given what is known at a call or a test.

Used by :mod:`ranklint.analysis.project.divergences` when it flattens a function's
events: parameter values fixed by a call site (``bindings``) and the truth of
canonical tests (``assume``: the operands a rank test implies where ranks can
differ, and the uniform tests enclosing the code).
"""

from __future__ import annotations

from ranklint.model.events import (
    FLAG_PREFIX,
    UNKNOWN,
    CallEvent,
    Cond,
    FunctionSummary,
    Literal,
    canonical_holds,
)


def call_bindings(
    event: CallEvent,
    callee: FunctionSummary,
    assume: dict[str, bool],
    known: dict[str, Literal],
) -> dict[str, Literal]:
    """Parameter values a call fixes: literal arguments, flags the caller's test
    decides (`if flag or rank == 0: f(flag)` compares the arms assuming `flag` is
    false), the caller's own parameters passed on (`g(use_zero=use_zero)` inside
    `f(use_zero=False)`), and defaults it leaves alone."""
    if event.unpacking:
        return {}
    out: dict[str, Literal] = dict(callee.defaults)
    for position, keyword, value in event.args:
        name = parameter(callee, position, keyword)
        if name is None:
            continue
        if isinstance(value, str) and value.startswith(FLAG_PREFIX):
            passed = value[len(FLAG_PREFIX) :]
            value = assume.get(value, known.get(passed, UNKNOWN))
        if value == UNKNOWN:
            out.pop(name, None)
        else:
            out[name] = value
    return out


def passed_parameters(event: CallEvent, callee: FunctionSummary) -> set[str]:
    """The parameters of ``callee`` a call passes an argument for (all of them
    where it unpacks ``*args`` or ``**kwargs``)."""
    if event.unpacking:
        return set(callee.params[_offset(callee) :])
    return {
        name
        for position, keyword, _ in event.args
        if (name := parameter(callee, position, keyword)) is not None
    }


def _offset(callee: FunctionSummary) -> int:
    """1 where the first parameter is the bound ``self`` or ``cls``."""
    params = callee.params
    return 1 if callee.class_name is not None and params[:1] in (("self",), ("cls",)) else 0


def parameter(callee: FunctionSummary, position: int | None, keyword: str | None) -> str | None:
    """The parameter an argument (at ``position`` as written, or by ``keyword``) binds."""
    if keyword is not None:
        return keyword
    index = None if position is None else position + _offset(callee)
    return callee.params[index] if index is not None and index < len(callee.params) else None


def plain_flag(cond: Cond | None) -> bool:
    """A test of one uniform name (`if self.pipe_parallel:`), whose arms fix its truth."""
    return cond is not None and not cond.parts and cond.check == "truthy" and not cond.taint.rank


def decide(cond: Cond | None, bindings: dict[str, Literal], assume: dict[str, bool]) -> bool | None:
    """Which arm a branch takes under ``bindings``/``assume``: True, False, or unknown."""
    if cond is None:
        return None
    if cond.parts:
        values = [decide_part(*part, bindings, assume) for part in cond.parts]
        stop = not cond.conjunction  # `and` stops at a false operand, `or` at a true one
        if stop in values:
            return stop
        return None if None in values else not stop
    decided = decide_part(cond.key, cond.check, cond.negated, bindings, assume)
    for key, truth in cond.assumptions if decided is None else ():
        # An operand known to go the other way decides the whole test: inside a
        # branch where `kind == "sharded"` is false, `kind == "sharded" and
        # rank_part` is false too (and `flag or rank_part` true when flag is).
        if key in assume and assume[key] != truth:
            return not cond.conjunction
    if decided is None and cond.rank_part is not None:
        # The other operands are assumed where ranks can differ: the rank
        # operand decides (`self.first and dist.is_initialized()`).
        return decide_part(*cond.rank_part, bindings, assume)
    return decided


def decide_part(
    key: str, check: str, negated: bool, bindings: dict[str, Literal], assume: dict[str, bool]
) -> bool | None:
    if key in assume:
        return assume[key] != negated
    if key in bindings:
        return canonical_holds(check, negated, bindings[key])
    return None
