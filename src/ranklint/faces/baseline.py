"""Baselines: adopt ranklint on an existing codebase without touching its code.

``ranklint check --baseline FILE --write-baseline`` records every current
finding; later runs with ``--baseline FILE`` report only findings that are not
in it, and say how many recorded ones no longer match (``--baseline-prune``
drops those from the file).

A finding is keyed by its code, its path (relative to the baseline file's
folder, in POSIX form) and a fingerprint of the normalised text of the lines
it spans (whitespace collapsed), not by its line number: an edit above a
finding does not make it new, and an edit of the flagged statement does.
Findings with the same key are counted, so a second copy of a baselined bug
is new. A file moved without changes keeps its records: a finding that
matches no record exactly matches one of the same code and fingerprint whose
path no longer exists, when that match is unique (one such missing path for
the code and fingerprint, and the findings of that key in one new path);
``--baseline-prune`` then records the new path.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ranklint.findings import Finding

logger = logging.getLogger(__name__)

VERSION = 1


class BaselineError(Exception):
    """The baseline file cannot be read or is not a baseline."""


Key = tuple[str, str, str]


@dataclass(frozen=True)
class Comparison:
    """Current findings against a baseline."""

    new: list[Finding]
    known: int
    #: recorded keys no current finding matches, with how many of each.
    stale: Counter[Key]
    #: records matched at a new path (their file moved): old key -> new key, with counts.
    moved: Counter[tuple[Key, Key]] = field(default_factory=Counter)


def _normalised(text: str) -> str:
    return " ".join(text.split())


def _lines(path: str, cache: dict[str, list[str]]) -> list[str]:
    if path not in cache:
        try:
            # Equivalent mutant: "UTF-8" is the same codec (codec names ignore case).
            with open(path, encoding="utf-8", errors="replace") as handle:  # pragma: no mutate
                cache[path] = handle.read().splitlines()
        except OSError:
            cache[path] = []
    return cache[path]


def key_of(finding: Finding, folder: Path, cache: dict[str, list[str]]) -> Key:
    """The finding's (code, path, fingerprint)."""
    lines = _lines(finding.path, cache)
    text = "\n".join(_normalised(line) for line in lines[finding.line - 1 : finding.end_line])
    digest = hashlib.sha256(f"{finding.code}\0{text}".encode()).hexdigest()[:16]
    try:
        relative = os.path.relpath(os.path.abspath(finding.path), folder.absolute())
    except ValueError:  # another drive
        relative = os.path.abspath(finding.path)
    return finding.code, Path(relative).as_posix(), digest


def _counts(findings: Sequence[Finding], folder: Path) -> tuple[list[Key], Counter[Key]]:
    cache: dict[str, list[str]] = {}
    keys = [key_of(finding, folder, cache) for finding in findings]
    return keys, Counter(keys)


def render(findings: Sequence[Finding], folder: Path) -> str:
    """The baseline file's text for ``findings``."""
    _, counts = _counts(findings, folder)
    return _render(counts)


def _render(counts: Counter[Key]) -> str:
    entries = [
        {"code": code, "path": path, "fingerprint": digest, "count": count}
        for (code, path, digest), count in sorted(counts.items())
    ]
    return json.dumps({"ranklint-baseline": VERSION, "findings": entries}, indent=2) + "\n"


def load(file: Path) -> Counter[Key]:
    """The recorded keys of a baseline file, with their counts."""
    try:
        data = json.loads(file.read_text(encoding="utf-8"))  # pragma: no mutate (UTF-8 is utf-8)
    except FileNotFoundError:
        raise BaselineError(
            f"{file}: baseline not found (create it with --write-baseline)"
        ) from None
    except OSError as exc:
        raise BaselineError(f"{file}: cannot read baseline: {exc.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BaselineError(f"{file}: not a ranklint baseline (invalid JSON: {exc})") from None
    if not isinstance(data, dict) or data.get("ranklint-baseline") != VERSION:
        raise BaselineError(
            f"{file}: not a ranklint baseline of version {VERSION} "
            "(expected a 'ranklint-baseline' key)"
        )
    counts: Counter[Key] = Counter()
    entries = data.get("findings")
    if not isinstance(entries, list):
        raise BaselineError(f"{file}: 'findings' must be a list")
    for index, entry in enumerate(entries):
        try:
            key = (str(entry["code"]), str(entry["path"]), str(entry["fingerprint"]))
            count = int(entry.get("count", 1))
        except (TypeError, KeyError, ValueError):
            raise BaselineError(f"{file}: entry {index} needs code, path and fingerprint") from None
        counts[key] += count
    return counts


def compare(findings: Sequence[Finding], recorded: Counter[Key], folder: Path) -> Comparison:
    """Which findings are new, how many are recorded, and which records are stale."""
    keys, _ = _counts(findings, folder)
    left = Counter(recorded)
    new = []
    known = 0
    # Equivalent mutants: ``keys`` has one key per finding, so strict= never fires.
    unmatched: list[tuple[Finding, Key]] = []
    for finding, key in zip(findings, keys, strict=True):  # pragma: no mutate (a key per finding)
        if left[key] > 0:
            left[key] -= 1
            known += 1
        else:
            unmatched.append((finding, key))
    moved_to = _moves([key for _, key in unmatched], left, folder)
    moved: Counter[tuple[Key, Key]] = Counter()
    for finding, key in unmatched:
        old = moved_to.get(key)
        if old is not None and left[old] > 0:
            left[old] -= 1
            known += 1
            moved[(old, key)] += 1
        else:
            new.append(finding)
    stale = Counter({key: count for key, count in left.items() if count > 0})
    return Comparison(new, known, stale, moved)


def _moves(unmatched: Sequence[Key], left: Counter[Key], folder: Path) -> dict[Key, Key]:
    """For the keys of unmatched findings, the record of a moved file each may match:
    same code and fingerprint, a recorded path that no longer exists, and for that
    code and fingerprint one such path and one new path."""
    gone: dict[tuple[str, str], set[Key]] = {}
    for key in +left:
        if not (folder / key[1]).exists():
            gone.setdefault((key[0], key[2]), set()).add(key)
    arrived: dict[tuple[str, str], set[Key]] = {}
    for key in unmatched:
        arrived.setdefault((key[0], key[2]), set()).add(key)
    moves = {}
    for code_print, new_keys in arrived.items():
        old_keys = gone.get(code_print, set())
        if len(old_keys) == 1 and len(new_keys) == 1:
            moves[next(iter(new_keys))] = next(iter(old_keys))
    return moves


def pruned(
    recorded: Counter[Key],
    stale: Counter[Key],
    moved: Counter[tuple[Key, Key]] | None = None,
) -> str:
    """The baseline's text without its stale records, and with the records of moved
    files at their new paths."""
    kept = recorded - stale
    for (old, new), count in (moved or Counter()).items():
        kept[old] -= count
        kept[new] += count
    return _render(+kept)
