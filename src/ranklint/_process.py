"""What ranklint may do in a process of its own (the CLI, its worker processes).

A library must not change shared state of the process it is imported into:
:func:`ranklint.lint_source` and :func:`ranklint.lint_paths` (in-process) leave
it alone. In ranklint's own processes nothing else runs, so the parse may switch
off libcst's node validation while it builds a tree (``ranklint.source``), and
the cyclic garbage collector may wait until a file is done
(:func:`collector_paused`).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

_owned = False


def owned() -> bool:
    """Whether this process is ranklint's own (set by the CLI and the workers)."""
    return _owned


@contextlib.contextmanager
def own_process(owned: bool = True) -> Iterator[None]:
    """Within this block, the process is ranklint's own (the CLI's ``main``)."""
    global _owned
    before, _owned = _owned, owned
    try:
        yield
    finally:
        _owned = before


def claim_process() -> None:
    """For good: a worker process started by ranklint."""
    global _owned
    _owned = True


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """In ranklint's own process, the cyclic garbage collector waits while one file
    is linted, then collects the young generations: what that file left.

    A file's tree is hundreds of thousands of objects, all tracked by the collector,
    which otherwise traverses them again and again while they are built and read
    (about 6% of a cold run). The tree holds no reference cycles and is freed by
    reference counting when the file is done; the cycles the analysis makes are
    all young then, so collecting generations 0 and 1 frees them, and memory stays
    as it was. Elsewhere (a library call), and where the collector is off, nothing
    changes.
    """
    if not _owned or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect(1)
