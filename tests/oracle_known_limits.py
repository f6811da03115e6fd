"""Known disagreements of the differential oracle with ranklint on the test slice.

``tests/test_oracle.py`` judges the programs of ``bench/recall/oracle.py`` for
seed ``SLICE_SEED`` (``SLICE_COUNT`` programs) and compares its disagreements
with this list: a new one (a regression, or a new limit to list here) or a
listed one that now agrees (progress: remove it) fails the test.

Each entry is ``(program seed, tier): (class, verdict, reason)``. The verdict is
``missed`` (no finding on a line the run named), ``elsewhere`` (findings on
other lines only) or ``false-alarm``; the reason is a key of
``oracle.REASONS``, first guessed from the program's features by
``oracle.likely_reason`` and checked by reading the programs. Show one with
``python bench/recall/oracle.py --program SEED``; regenerate the entries with
``python bench/recall/oracle.py --count 210 --seed 1 --known-limits`` (then
read the new ones).

The reasons, as the analysis stands when the list was written. The first
list had 56 entries; 36 of them are followed since: a rank test read back
from a dict (``analysis/walk/containers.py``), tensor flags copied or read
before the collective that makes them equal (``TENSOR_OF_VALUE`` and
``SAME_VALUE_METHODS`` in the catalog), and a ``break`` only some ranks take
(``model.events.rank_break``):

- ``name-only-source``: the ``rank`` parameter is a rank by its name only, so
  its findings are medium; the default run (high) does not show them, by design.
- ``argument-flow``: a rank test passed as a helper's argument
  (``exchange(t, r != 0)`` with ``if go: dist.barrier()`` inside) is not followed.
- ``reduce-op``: both branches all-reduce, with SUM and MAX: ops are compared
  across branches, reduce ops are not.
- ``first-mismatch``: the run names only the first mismatch it meets (rank 0's
  all_gather against rank 2's barrier); ranklint reports rank 1's all_gather,
  which diverges too: a limit of the matching, not of the analysis.
"""

from __future__ import annotations

SLICE_SEED = 1
SLICE_COUNT = 210

KNOWN_LIMITS: dict[tuple[int, str], tuple[str, str, str]] = {
    (1000005, "high"): ("sanitised", "missed", "name-only-source"),
    (1000016, "high"): ("loop-trip", "missed", "name-only-source"),
    (1000018, "high"): ("helper", "missed", "argument-flow"),
    (1000018, "medium"): ("helper", "missed", "argument-flow"),
    (1000027, "high"): ("branch", "missed", "name-only-source"),
    (1000028, "high"): ("mismatch", "missed", "name-only-source"),
    (1000032, "high"): ("helper", "missed", "name-only-source"),
    (1000036, "high"): ("early-return", "missed", "name-only-source"),
    (1000042, "high"): ("mismatch", "missed", "name-only-source"),
    (1000080, "high"): ("loop-exit", "missed", "name-only-source"),
    (1000081, "high"): ("helper", "missed", "argument-flow"),
    (1000081, "medium"): ("helper", "missed", "argument-flow"),
    (1000105, "high"): ("mismatch", "missed", "name-only-source"),
    (1000137, "high"): ("helper", "missed", "argument-flow"),
    (1000137, "medium"): ("helper", "missed", "argument-flow"),
    (1000151, "high"): ("helper", "missed", "argument-flow"),
    (1000151, "medium"): ("helper", "missed", "argument-flow"),
    (1000181, "high"): ("branch", "elsewhere", "first-mismatch"),
    (1000181, "medium"): ("branch", "elsewhere", "first-mismatch"),
    (1000208, "high"): ("sanitised", "missed", "name-only-source"),
}
