"""The process pool: files linted, and call sites placed, in worker processes,
with results in the order of a serial run."""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor

from ranklint._process import claim_process
from ranklint.cache import Cache
from ranklint.config import Config
from ranklint.engine.linter import FileLinter
from ranklint.engine.locate import Located
from ranklint.model.events import Site
from ranklint.results import FileResult

# Below this many files a process pool costs more than it saves.
MIN_FILES_FOR_POOL = 8
# Walks that place call sites parse a file each, as linting does.
MIN_WALKS_FOR_POOL = 8

_worker_linter: FileLinter | None = None
_worker_cache: Cache | None = None


def _init_worker(config: Config, cache: Cache | None) -> None:
    global _worker_linter, _worker_cache
    claim_process()
    _worker_linter = FileLinter(config)
    _worker_cache = cache


def _lint_in_worker(path: str) -> FileResult:
    assert _worker_linter is not None, "worker not initialised"
    return _worker_linter.lint_file_cached(path, _worker_cache)


def _locate_in_worker(walk: tuple[str, set[Site], str | bytes]) -> Located:
    assert _worker_linter is not None, "worker not initialised"
    return _worker_linter.locate(*walk)


def workers(jobs: int | None) -> int:
    """Processes for ``jobs`` (``None`` or 0: one per CPU)."""
    return jobs if jobs and jobs > 0 else (os.cpu_count() or 1)


def pool_context() -> multiprocessing.context.BaseContext:
    """``fork`` (fastest) only where it is safe: Linux, and no other thread alive."""
    methods = multiprocessing.get_all_start_methods()
    if sys.platform == "linux" and "fork" in methods and os_thread_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def os_thread_count() -> int:
    # Threads started outside the threading module (e.g. by C extensions) count
    # for fork safety too; Linux lists every thread of the process here.
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def lint_files(
    files: Sequence[str],
    config: Config,
    *,
    jobs: int | None = None,
    cache: Cache | None = None,
    known: Sequence[FileResult | None] | None = None,
) -> list[FileResult]:
    """Lint ``files``; results come back in the order of ``files`` whatever ``jobs`` is.

    With ``cache``, files whose entry is valid are not parsed; only the others
    go to the workers (which store their results). ``known``: the cache's
    answer for each file, when the caller has already asked it.
    """
    linter = FileLinter(config)
    if known is None:
        known = cache.lookup(files) if cache is not None else [None] * len(files)
    results = list(known)
    misses = [index for index, result in enumerate(results) if result is None]
    count = min(workers(jobs), len(misses))
    if count <= 1 or len(misses) < MIN_FILES_FOR_POOL:
        for index in misses:
            results[index] = linter.lint_file_cached(files[index], cache)
    else:
        chunksize = max(1, len(misses) // (count * 4))  # pragma: no mutate (any size >= 1 works)
        with ProcessPoolExecutor(
            max_workers=count,
            mp_context=pool_context(),
            initializer=_init_worker,
            initargs=(config, cache),
        ) as pool:
            done = pool.map(_lint_in_worker, [files[i] for i in misses], chunksize=chunksize)
            for index, result in zip(misses, done, strict=True):
                results[index] = result
    return [result for result in results if result is not None]


def locate_files(
    linter: FileLinter, walks: Sequence[tuple[str, set[Site], str | bytes]], jobs: int | None
) -> list[Located]:
    """:meth:`FileLinter.locate` for each of ``walks``, in worker processes when several."""
    count = min(workers(jobs), len(walks))
    if count <= 1 or len(walks) < MIN_WALKS_FOR_POOL:
        return [linter.locate(path, sites, source) for path, sites, source in walks]
    with ProcessPoolExecutor(
        max_workers=count,
        mp_context=pool_context(),
        initializer=_init_worker,
        initargs=(linter.config, None),
    ) as pool:
        return list(pool.map(_locate_in_worker, walks))
