"""Fixes as text: the smallest edit between two texts, and applying fixes to a source.

Pure functions over strings. Lines are counted as Python's tokenizer counts
them (``\\r\\n``, ``\\r`` or ``\\n`` end a line), columns in characters; both
are 1-based, as in findings.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence

from ranklint.findings import Edit, Fix
from ranklint.positions import NEWLINE


class Lines:
    """Converts between (line, column) positions and offsets into one text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0, *(match.end() for match in NEWLINE.finditer(text))]

    def offset(self, line: int, col: int) -> int:
        """The offset of the 1-based (``line``, ``col``); ``ValueError`` outside the text."""
        if not 1 <= line <= len(self.starts):
            raise ValueError(f"line {line} is not in the text")
        start = self.starts[line - 1]
        end = self.starts[line] if line < len(self.starts) else len(self.text)
        offset = start + col - 1
        if not start <= offset <= end:
            raise ValueError(f"column {col} is not in line {line}")
        return offset

    def position(self, offset: int) -> tuple[int, int]:
        """The 1-based (line, column) of ``offset``."""
        index = bisect.bisect_right(self.starts, offset) - 1
        return index + 1, offset - self.starts[index] + 1


def smallest_edit(lines: Lines, start: int, end: int, new: str) -> Edit | None:
    """The edit that turns ``lines.text[start:end]`` into ``new``, with the parts
    both share at the start and the end left out; ``None`` when nothing changes."""
    old = lines.text[start:end]
    if old == new:
        return None
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    line, col = lines.position(start + prefix)
    end_line, end_col = lines.position(end - suffix)
    return Edit(line, col, end_line, end_col, new[prefix : len(new) - suffix])


def apply_fixes(text: str, fixes: Iterable[Fix]) -> tuple[str, list[Fix]]:
    """``text`` with as many of ``fixes`` applied as do not overlap, and those applied.

    Fixes are taken in the order of their first edit; one that touches or
    overlaps an edit already taken is left for the next round (its finding is
    reported again on the fixed text, at its new place, if it still applies).
    Fixes whose edits are all the same are applied once.
    """
    lines = Lines(text)
    # Each fix: where its first edit starts and its last ends, its edits' offsets.
    placed: list[tuple[int, int, list[tuple[int, int]], Fix]] = []
    seen: set[tuple[Edit, ...]] = set()
    for fix in fixes:
        if not fix.edits or fix.edits in seen:
            continue
        try:
            offsets = [
                (lines.offset(e.line, e.col), lines.offset(e.end_line, e.end_col))
                for e in fix.edits
            ]
        except ValueError:
            continue  # made for another version of the text
        if any(start > end for start, end in offsets) or _overlapping(offsets):
            continue
        seen.add(fix.edits)  # pragma: no mutate (saves work: a repeat touches its original)
        placed.append((offsets[0][0], offsets[-1][1], offsets, fix))
    taken: list[tuple[int, int, list[tuple[int, int]], Fix]] = []
    for item in sorted(placed, key=lambda item: (item[0], item[1])):
        if taken and item[0] <= taken[-1][1]:
            continue
        taken.append(item)
    pieces: list[str] = []
    cursor = 0  # pragma: no mutate (text[None:start] is text[0:start])
    for _, _, offsets, fix in taken:
        # One offset pair per edit (equivalent mutants of `strict`).
        for (start, end), edit in zip(offsets, fix.edits, strict=True):  # pragma: no mutate
            pieces.append(text[cursor:start])
            pieces.append(edit.content)
            cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces), [fix for _, _, _, fix in taken]


def _overlapping(offsets: Sequence[tuple[int, int]]) -> bool:
    """The edits of one fix are out of order or overlap."""
    return any(offsets[i][1] > offsets[i + 1][0] for i in range(len(offsets) - 1))
