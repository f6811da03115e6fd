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
(``model.events.rank_break``); since, a rank value passed as an argument
(``exchange(t, r != 0)`` with ``if go: dist.barrier()`` inside) and reduce ops
that differ between the sides are followed too:

- ``name-only-source``: the ``rank`` parameter is a rank by its name only, so
  its findings are medium; the default run (high) does not show them, by design.
- ``first-mismatch``: the run names only the first mismatch it meets (rank 0's
  all_gather against rank 2's barrier); ranklint reports rank 1's all_gather,
  which diverges too: a limit of the matching, not of the analysis.

Since the second family of classes (``oracle.CLASSES_V2``, seeds from
``oracle.V2_OFFSET`` on) joined the slice, it holds 114 programs of the first
grammar (unchanged) and 96 of the second; their entries are keyed by the
class's idiom (``oracle.REASONS``): ``unknown-group`` (DTensor, a mesh's group,
a ``new_group`` made where the program does not show it, under a
single-rank test; a group of every rank or a mesh's group in a local name, in
an attribute the class assigns once, or passed to a helper is followed since,
``analysis/walk/definitions.py``; the slice has none left), ``per-rank-keys``,
``state-across-calls``, ``explicit-members`` (members are judged under a test
of the rank itself or of a name or flag bound once to one, ``me == 2``, ``me
% 2 == 0`` or ``x = 1 if me < 2 else 0; if x:``; the slice has none left),
``rank-local-exit``,
``dead-debug-flag`` (a debug flag read from the environment, off in the run:
``debug = os.environ.get(...) == "1"``), ``draw-source`` (a per-rank random
draw, medium only). The decorator class has no entry since its decorators are
judged by their wrapper (``analysis/project/wrappers.py``), and a module
constant ``DEBUG = False`` decides its tests (``analysis/walk/constants.py``).

The third family (``oracle.CLASSES_V3``, seeds from ``oracle.V3_OFFSET`` on)
joined the slice for issue 36's third session: it now holds 105 programs of the
first grammar, 90 of the second and 15 of ``wrapped-forward`` (a DDP model's
forward under a rank test, through helpers that are passed the model,
``analysis/walk/wrapped.py``). That moved one entry out of the slice (a
``mismatch`` program of the ``rank`` parameter, the 106th of the first grammar)
and one in: a ``wrapped-forward`` program of the ``rank`` parameter
(``name-only-source``).

A second class of the third family, ``nested-exit`` (a ``return`` or
``continue`` under a rank test that reaches past the test's own block), joined
for issue 36's fourth session: the slice holds 98 programs of the first
grammar, 84 of the second and 28 of the third (14 of each class). The one
entry that changed is at the same seed: the v3 program of seed 1800005 is now
a ``nested-exit`` program of the ``rank`` parameter (``name-only-source``).
"""

from __future__ import annotations

SLICE_SEED = 1
SLICE_COUNT = 210

KNOWN_LIMITS: dict[tuple[int, str], tuple[str, str, str]] = {
    (1000005, "high"): ("sanitised", "missed", "name-only-source"),
    (1500001, "high"): ("dict-order", "missed", "per-rank-keys"),
    (1500001, "medium"): ("dict-order", "missed", "per-rank-keys"),
    (1500005, "high"): ("local-exit", "missed", "draw-source"),
    (1000016, "high"): ("loop-trip", "missed", "name-only-source"),
    (1500012, "high"): ("unknown-group", "missed", "name-only-source"),
    (1800005, "high"): ("nested-exit", "missed", "name-only-source"),
    (1000027, "high"): ("branch", "missed", "name-only-source"),
    (1000028, "high"): ("mismatch", "missed", "name-only-source"),
    (1000032, "high"): ("helper", "missed", "name-only-source"),
    (1500029, "high"): ("local-exit", "missed", "rank-local-exit"),
    (1500029, "medium"): ("local-exit", "missed", "rank-local-exit"),
    (1000036, "high"): ("early-return", "missed", "name-only-source"),
    (1500030, "high"): ("unknown-group", "missed", "name-only-source"),
    (1500035, "high"): ("local-exit", "missed", "rank-local-exit"),
    (1500035, "medium"): ("local-exit", "missed", "rank-local-exit"),
    (1000042, "high"): ("mismatch", "missed", "name-only-source"),
    (1500038, "high"): ("state-later", "missed", "state-across-calls"),
    (1500038, "medium"): ("state-later", "missed", "state-across-calls"),
    (1500049, "high"): ("dict-order", "missed", "per-rank-keys"),
    (1500049, "medium"): ("dict-order", "missed", "per-rank-keys"),
    (1500053, "high"): ("local-exit", "missed", "draw-source"),
    (1500059, "high"): ("local-exit", "missed", "name-only-source"),
    (1500065, "high"): ("local-exit", "missed", "name-only-source"),
    (1000080, "high"): ("loop-exit", "missed", "name-only-source"),
    (1500079, "high"): ("dict-order", "missed", "per-rank-keys"),
    (1500079, "medium"): ("dict-order", "missed", "per-rank-keys"),
    (1500080, "high"): ("state-later", "missed", "state-across-calls"),
    (1500080, "medium"): ("state-later", "missed", "state-across-calls"),
}
