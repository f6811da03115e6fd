"""Equivalence across world sizes: the results at N ranks against those at M.

Most silent-corruption bugs of distributed training do not hang: a SUM where a
MEAN was meant, a metric reduced twice, a loss scaled by the world size,
metrics reduced in a rank-dependent order. They show as values that change
with the world size. :func:`check` compares what a function returned at world
size N with what it returned at M (the same function sharding the same data),
after checking that the ranks at each size agree with each other, and raises
:class:`NotEquivalentError` naming the first value that differs, on which rank,
and by what factor; a factor equal to the world size (or its inverse, or the
ratio of the two sizes) is named as such.

Results are nested dicts, lists and tuples of tensors, numpy arrays, numbers,
bools, strings and ``None``. This module imports no torch: a tensor can only
exist once torch is imported, so tensors are recognised through
``sys.modules``.
"""

from __future__ import annotations

import logging
import math
import numbers
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ranklint.runtime.report import RuntimeCompanionError

logger = logging.getLogger(__name__)

#: The name of the returned value in paths: ``result['grads']['w']``.
ROOT = "result"
#: How many further differing paths an error lists after the first.
OTHERS = 5
#: How close (relatively) a factor must come to a world-size ratio to be named after it.
NAME_TOLERANCE = 1e-3
#: How many elements of a tensor a summary shows.
ELEMENTS = 6

VALUE = "value"
STRUCTURE = "structure"


@dataclass(frozen=True)
class Difference:
    """One place where two results differ.

    ``kind`` is ``"value"`` (same structure, values outside the tolerance) or
    ``"structure"`` (types, keys, lengths, shapes or dtypes differ; ``detail``
    says which). For a value, ``max_abs_diff`` is the largest absolute
    difference, ``index`` where it lies in a tensor, and ``factor`` the
    least-squares scale with ``got ≈ factor * expected`` when such a scale
    explains ``got`` (``None`` otherwise).
    """

    path: str
    kind: str
    expected: str
    got: str
    detail: str = ""
    max_abs_diff: float | None = None
    index: tuple[int, ...] | None = None
    factor: float | None = None


def validate(world_size: int, equivalent_to: int, rtol: float, atol: float) -> None:
    """Refuse world sizes and tolerances an equivalence check cannot use (ValueError)."""
    if isinstance(equivalent_to, bool) or not isinstance(equivalent_to, int):
        raise ValueError(f"equivalent_to must be a world size (an int), got {equivalent_to!r}")
    if equivalent_to < 1:
        raise ValueError(f"equivalent_to must be at least 1, got {equivalent_to}")
    if equivalent_to >= world_size:
        raise ValueError(
            f"equivalent_to ({equivalent_to}) must be smaller than world_size ({world_size}): "
            "the reference run is the smaller one"
        )
    if world_size % equivalent_to:
        raise ValueError(
            f"world_size ({world_size}) must be a multiple of equivalent_to ({equivalent_to}), "
            "so that both sizes shard the data evenly"
        )
    for name, value in (("rtol", rtol), ("atol", atol)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
            raise ValueError(f"{name} must be a non-negative number, got {value!r}")


# Comparing two results.


def differences(
    expected: Any,
    got: Any,
    *,
    rtol: float,
    atol: float,
    labels: tuple[str, str] = ("expected", "got"),
    limit: int = OTHERS + 1,
) -> list[Difference]:
    """The first ``limit`` places where ``got`` differs from ``expected``, in ``expected``'s order.

    A value differs where ``|got - expected| > atol + rtol * |expected|`` (NaN
    equals NaN; infinities equal themselves). ``labels`` name the two sides in
    the details of structure differences (``"world size 1"``, ``"rank 0"``).
    """
    found: list[Difference] = []
    for difference in _walk(expected, got, ROOT, rtol, atol, labels):
        found.append(difference)
        if len(found) >= limit:
            break
    return found


def _kind(value: Any) -> str:
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        return "tensor"
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(value, numpy.ndarray):
        return "array"
    if value is None:
        return "None"
    if isinstance(value, bool) or (numpy is not None and isinstance(value, numpy.bool_)):
        return "bool"
    if isinstance(value, numbers.Real):
        return "number"
    if isinstance(value, str):
        return "str"
    if isinstance(value, Mapping):
        return "dict"
    if isinstance(value, list):
        return "list"
    if isinstance(value, tuple):
        return "tuple"
    return type(value).__name__


def _walk(
    expected: Any, got: Any, path: str, rtol: float, atol: float, labels: tuple[str, str]
) -> Iterator[Difference]:
    kinds = (_kind(expected), _kind(got))
    if "array" in kinds and set(kinds) <= {"array", "tensor"}:
        torch = sys.modules.get("torch")
        if torch is not None:  # compare arrays as tensors
            expected, got = torch.as_tensor(expected), torch.as_tensor(got)
            kinds = ("tensor", "tensor")
    if kinds[0] != kinds[1]:
        detail = f"{_article(kinds[0])} at {labels[0]}, {_article(kinds[1])} at {labels[1]}"
        yield _structure(path, expected, got, detail)
        return
    kind = kinds[0]  # pragma: no mutate (kinds[1] is the same here)
    if kind == "dict":
        yield from _walk_dict(expected, got, path, rtol, atol, labels)
    elif kind in ("list", "tuple"):
        if len(expected) != len(got):
            detail = f"length {len(expected)} at {labels[0]}, {len(got)} at {labels[1]}"
            yield _structure(path, expected, got, detail)
            return
        pairs = zip(expected, got, strict=True)  # pragma: no mutate (lengths are equal here)
        for index, (left, right) in enumerate(pairs):
            yield from _walk(left, right, f"{path}[{index}]", rtol, atol, labels)
    elif kind == "tensor":
        found = _compare_tensors(expected, got, path, rtol, atol, labels)
        if found is not None:
            yield found
    elif kind == "number":
        found = _compare_numbers(expected, got, path, rtol, atol)
        if found is not None:
            yield found
    elif kind == "bool":  # numpy's bools compare to a numpy bool, not a bool
        if expected != got:
            yield Difference(path, VALUE, _summary(expected), _summary(got))
    else:
        yield from _compare_other(expected, got, path)


def _walk_dict(
    expected: Mapping[Any, Any],
    got: Mapping[Any, Any],
    path: str,
    rtol: float,
    atol: float,
    labels: tuple[str, str],
) -> Iterator[Difference]:
    only_expected = [key for key in expected if key not in got]
    only_got = [key for key in got if key not in expected]
    if only_expected or only_got:
        parts = []
        if only_expected:
            parts.append(f"keys {_keys(only_expected)} only at {labels[0]}")
        if only_got:
            parts.append(f"keys {_keys(only_got)} only at {labels[1]}")
        yield _structure(path, expected, got, "; ".join(parts))
        return
    for key in expected:
        yield from _walk(expected[key], got[key], f"{path}[{key!r}]", rtol, atol, labels)


def _compare_other(expected: Any, got: Any, path: str) -> Iterator[Difference]:
    try:
        equal = expected == got
        same = equal if isinstance(equal, bool) else None
    except Exception:  # an object whose == raises: it cannot be compared
        logger.debug("comparing %s raised", path, exc_info=True)
        same = None
    if same is None:
        detail = (
            f"cannot compare values of type {type(expected).__name__}; return tensors, "
            "numbers, strings or dicts, lists and tuples of them"
        )
        yield _structure(path, expected, got, detail)
    elif not same:
        yield Difference(path, VALUE, _summary(expected), _summary(got))


def _structure(path: str, expected: Any, got: Any, detail: str) -> Difference:
    return Difference(path, STRUCTURE, _summary(expected), _summary(got), detail=detail)


def _compare_numbers(
    expected: float, got: float, path: str, rtol: float, atol: float
) -> Difference | None:
    left, right = float(expected), float(got)
    if _close(left, right, rtol, atol):
        return None
    gap = abs(right - left)
    factor = right / left if left != 0 and math.isfinite(left) and math.isfinite(right) else None
    return Difference(
        path,
        VALUE,
        _summary(expected),
        _summary(got),
        max_abs_diff=gap if not math.isnan(gap) else math.inf,
        factor=factor,
    )


def _close(left: float, right: float, rtol: float, atol: float) -> bool:
    if left == right or (math.isnan(left) and math.isnan(right)):
        return True
    return abs(right - left) <= atol + rtol * abs(left)


def _compare_tensors(
    expected: Any, got: Any, path: str, rtol: float, atol: float, labels: tuple[str, str]
) -> Difference | None:
    for value in (expected, got):
        if type(value).__name__ == "DTensor":
            raise TypeError(
                f"{path} is a DTensor: return dtensor.full_tensor() from the function (on every "
                "rank), or its local shard gathered, so that it can be compared after the run"
            )
    if tuple(expected.shape) != tuple(got.shape):
        detail = (
            f"shape {_shape(expected.shape)} at {labels[0]}, {_shape(got.shape)} at {labels[1]}"
        )
        return _structure(path, expected, got, detail)
    if expected.dtype != got.dtype:
        detail = f"dtype {_dtype(expected)} at {labels[0]}, {_dtype(got)} at {labels[1]}"
        return _structure(path, expected, got, detail)
    left, right = _float64(expected), _float64(got)
    if left.numel() == 0:
        return None
    gap = (right - left).abs()
    same = (left == right) | (left.isnan() & right.isnan()) | (gap <= atol + rtol * left.abs())
    if bool(same.all()):
        return None
    outside = gap.nan_to_num(nan=math.inf).masked_fill(same, -math.inf)
    flat = int(outside.flatten().argmax())
    return Difference(
        path,
        VALUE,
        _summary(expected),
        _summary(got),
        max_abs_diff=float(outside.flatten()[flat]),
        index=_unravel(flat, tuple(left.shape)),
        factor=_fit(left, right, rtol, atol),
    )


def _float64(tensor: Any) -> Any:
    torch = sys.modules["torch"]
    plain = tensor.detach().cpu()
    if plain.is_complex():
        plain = torch.view_as_real(plain)
    return plain.to(torch.float64)


def _fit(left: Any, right: Any, rtol: float, atol: float) -> float | None:
    """The scale ``f`` with ``right ≈ f * left`` (least squares), when it explains ``right``."""
    # A shortcut: a value that is not finite leaves a residual below that is not finite.
    if not bool(left.isfinite().all() & right.isfinite().all()):  # pragma: no mutate (a shortcut)
        return None
    norm = float((left * left).sum())
    if norm == 0.0:
        return None
    factor = float((left * right).sum()) / norm
    # a looser bound than the comparison's: float32 rounding of a scaled value.
    bound = atol + max(10 * rtol, 1e-4) * right.abs()
    if not bool(((right - factor * left).abs() <= bound).all()):
        return None
    return factor


def _unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    index: list[int] = []
    for size in reversed(shape):
        flat, position = divmod(flat, size)
        index.append(position)
    return tuple(reversed(index))


# Summaries of values, for the message.


def _summary(value: Any) -> str:
    kind = _kind(value)
    if kind == "tensor":
        return _tensor_summary(value)
    if kind == "array":
        return f"array(shape={_shape(value.shape)}, dtype={value.dtype})"
    if kind == "number":
        return _number(value)
    if kind == "str":
        text = repr(value)
        return text if len(text) <= 60 else text[:57] + "...'"
    if kind == "dict":
        return f"dict with keys {_keys(list(value))}"
    if kind in ("list", "tuple"):
        return f"{kind} of {len(value)}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _tensor_summary(tensor: Any) -> str:
    dtype = _dtype(tensor)
    if type(tensor).__name__ == "DTensor":
        return f"DTensor(shape={_shape(tensor.shape)}, dtype={dtype})"
    values = tensor.detach().cpu().flatten()
    shown = ", ".join(_number(v) for v in values[:ELEMENTS].tolist())
    if tensor.dim() == 0:
        return f"tensor({shown}, dtype={dtype})"
    more = ", ..." if values.numel() > ELEMENTS else ""
    return f"tensor(shape={_shape(tensor.shape)}, dtype={dtype}) [{shown}{more}]"


def _number(value: Any) -> str:
    if isinstance(value, bool):
        return repr(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, complex):
        return f"{value:.6g}"
    return f"{float(value):.6g}"


def _dtype(tensor: Any) -> str:
    return str(tensor.dtype).removeprefix("torch.")


def _shape(shape: Sequence[int]) -> str:
    return "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


def _keys(keys: Sequence[Any]) -> str:
    return "[" + ", ".join(repr(key) for key in keys) + "]"


def _article(kind: str) -> str:
    if kind == "None":
        return "None"
    word = "string" if kind == "str" else kind
    return ("an " if word[0] in "aeiou" else "a ") + word


# Naming factors and rendering the error.


def name_factor(factor: float | None, world_size: int, reference_world_size: int) -> str | None:
    """``"the world size 4"`` when ``factor`` is one of the world-size ratios, else ``None``."""
    if factor is None:
        return None
    n, m = world_size, reference_world_size
    names: list[tuple[float, str]]
    if m == 1:
        names = [
            (n, f"the world size {n}"),
            (1 / n, f"1 / the world size {n}"),
            (n * n, f"the square of the world size {n}"),
            (1 / (n * n), f"1 / the square of the world size {n}"),
        ]
    else:
        names = [
            (n / m, f"the ratio of the world sizes {n}/{m}"),
            (m / n, f"the ratio of the world sizes {m}/{n}"),
            (n, f"the world size {n}"),
            (1 / n, f"1 / the world size {n}"),
            ((n / m) ** 2, f"the square of the ratio of the world sizes {n}/{m}"),
        ]
    for value, name in names:
        if abs(factor - value) <= NAME_TOLERANCE * abs(value):
            return name
    return None


_HINT_UP = (
    "a SUM where a MEAN was meant, a loss multiplied by the world size, or a value reduced "
    "(summed) once too often gives this factor"
)
_HINT_DOWN = (
    "a MEAN where a SUM was meant (a count or a total averaged), or a value divided by the "
    "world size once too often, gives this factor"
)
_HINT_SQUARE = (
    "two SUM reductions where one MEAN was meant (gradients summed twice, or a loss scaled "
    "by the world size whose gradients are summed) give this factor"
)
_HINT_OTHER = (
    "a value computed from the rank's own shard and never reduced, a reduction over the wrong "
    "group, or shards of unequal size averaged as equals differ like this"
)
_HINT_REPLICATED = (
    "values every rank should hold alike differ; a reduction whose inputs are ordered per rank "
    "(a dict whose key order depends on the rank, stacked before an all_reduce) puts values "
    "into the wrong slots. Return per-rank values only after gathering them"
)
_HINT_STRUCTURE = (
    "the function returned differently built results; a value gathered from every rank, or "
    "a rank's own shard returned unreduced, changes its shape with the world size"
)


def _hint(difference: Difference, factor_name: str | None, replicated_check: bool) -> str:
    if replicated_check:
        return _HINT_REPLICATED
    if difference.kind == STRUCTURE:
        return _HINT_STRUCTURE
    if factor_name is None:
        return _HINT_OTHER
    if "square" in factor_name:
        return _HINT_SQUARE
    # a named factor lies within NAME_TOLERANCE of a ratio >= 2 or <= 1/2: never near 1.
    if difference.factor is not None and (
        abs(difference.factor) < 1  # pragma: no mutate (<= 1 is the same for a named factor)
    ):
        return _HINT_DOWN
    return _HINT_UP


def _factor_text(factor: float, name: str | None) -> str:
    text = f"factor {factor:.6g}"
    return f"{text}, equal to {name}" if name else text


class NotEquivalentError(RuntimeCompanionError):
    """Results differ between world sizes, or between the ranks at one world size.

    ``path`` names the value (``result['grads']['w']``), ``rank`` the rank at
    ``world_size`` that holds it, ``reference_rank`` and ``reference_world_size``
    the value it was compared with: rank 0 at the reference size, or (when
    ``world_size == reference_world_size``) rank 0 of the same run, for results
    that are not replicated. ``expected``/``got`` summarise both values,
    ``max_abs_diff`` and ``factor`` measure a value difference (``None`` for a
    structure difference, ``factor`` also when no scale explains it), and
    ``factor_name`` says which world-size ratio the factor equals, if any.
    """

    def __init__(
        self,
        difference: Difference,
        *,
        rank: int,
        world_size: int,
        reference_world_size: int,
        reference_rank: int = 0,
        rtol: float,
        atol: float,
        others: Sequence[Difference] = (),
    ) -> None:
        self.difference = difference
        self.path = difference.path
        self.kind = difference.kind
        self.rank = rank
        self.world_size = world_size
        self.reference_world_size = reference_world_size
        self.reference_rank = reference_rank
        self.expected = difference.expected
        self.got = difference.got
        self.max_abs_diff = difference.max_abs_diff
        self.factor = difference.factor
        self.replicated_check = world_size == reference_world_size
        self.factor_name = (
            None
            if self.replicated_check
            else name_factor(difference.factor, world_size, reference_world_size)
        )
        self.rtol, self.atol = rtol, atol
        self.others = tuple(others)
        super().__init__(self._render())

    def _render(self) -> str:
        d, n, m = self.difference, self.world_size, self.reference_world_size
        if self.replicated_check:
            where = f"at world size {n}: {d.path} differs between rank {self.reference_rank} "
            head = f"not replicated {where}and rank {self.rank}"
            sides = (f"rank {self.reference_rank}", f"rank {self.rank}")
        else:
            where = f"{d.path} on rank {self.rank} at world size {n}"
            if d.kind == STRUCTURE:
                head = f"not equivalent: {where} is built differently than at world size {m}"
            elif d.factor is not None and d.factor != 1:
                named = f" ({_factor_text(d.factor, self.factor_name)})" if self.factor_name else ""
                head = (
                    f"not equivalent: {where} is {d.factor:.6g} times its value at world size {m}"
                )
                head += named
            else:
                head = f"not equivalent: {where} differs from its value at world size {m}"
            sides = (
                f"world size {m}, rank {self.reference_rank}",
                f"world size {n}, rank {self.rank}",
            )
        lines = [head, f"  {sides[0]}: {d.expected}", f"  {sides[1]}: {d.got}"]
        if d.kind == STRUCTURE:
            lines.append(f"  {d.detail}")
        else:
            lines.append("  " + self._largest(d))
        if self.others:
            lines.append("  also differ: " + ", ".join(self._other(o) for o in self.others))
        lines.append("  hint: " + _hint(d, self.factor_name, self.replicated_check))
        return "\n".join(lines)

    def _largest(self, d: Difference) -> str:
        tolerance = f"(rtol={self.rtol:g}, atol={self.atol:g})"
        if d.max_abs_diff is None:
            return f"the values are not equal {tolerance}"
        at = f" at index {list(d.index)}" if d.index else ""
        text = f"largest difference {d.max_abs_diff:.6g}{at} {tolerance}"
        if not self.replicated_check:
            text += f"; the ranks at world size {self.world_size} agree with each other"
        return text

    def _other(self, other: Difference) -> str:
        if other.kind == STRUCTURE:
            return f"{other.path} (structure)"
        if self.replicated_check or other.factor is None:
            return other.path
        name = name_factor(other.factor, self.world_size, self.reference_world_size)
        return f"{other.path} ({_factor_text(other.factor, name)})"


def _first(
    expected: Any, got: Any, rtol: float, atol: float, labels: tuple[str, str]
) -> tuple[Difference, list[Difference]] | None:
    found = differences(expected, got, rtol=rtol, atol=atol, labels=labels)
    return (found[0], found[1:]) if found else None


def check_replicated(results: Sequence[Any], world_size: int, *, rtol: float, atol: float) -> None:
    """Raise :class:`NotEquivalentError` when some rank's result differs from rank 0's."""
    for rank in range(1, len(results)):
        first = _first(results[0], results[rank], rtol, atol, ("rank 0", f"rank {rank}"))
        if first is not None:
            raise NotEquivalentError(
                first[0],
                rank=rank,
                world_size=world_size,
                reference_world_size=world_size,
                rtol=rtol,
                atol=atol,
                others=first[1],
            )


def check(
    reference: Sequence[Any],
    results: Sequence[Any],
    *,
    rtol: float,
    atol: float,
) -> None:
    """Raise :class:`NotEquivalentError` unless ``results`` (N ranks) match ``reference`` (M).

    The ranks of each run are first compared with each other (results meant
    to be replicated), then every rank's result at N with rank 0's at M.
    """
    m, n = len(reference), len(results)
    check_replicated(reference, m, rtol=rtol, atol=atol)
    check_replicated(results, n, rtol=rtol, atol=atol)
    labels = (f"world size {m}", f"world size {n}")
    for rank, result in enumerate(results):
        first = _first(reference[0], result, rtol, atol, labels)
        if first is not None:
            raise NotEquivalentError(
                first[0],
                rank=rank,
                world_size=n,
                reference_world_size=m,
                rtol=rtol,
                atol=atol,
                others=first[1],
            )
    logger.debug("results at world size %d match those at %d", n, m)
