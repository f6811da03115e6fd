"""A per-file result cache keyed by content hash, ranklint version and configuration.

Each entry holds one file's findings, its facts for the project phase (the
per-function summaries, pickled apart so that they are unpickled only when
needed) and the positions of call sites located so far, so a warm run re-reads
and hashes every file but parses none that did not change. A second kind of
entry, under ``project/``, holds the project phase's findings, keyed by the
keys of all the files of the run in order: when no file changed, a warm run
takes them from there, builds no call graph and never imports libcst or the
rules; when one did, the call graph is rebuilt from the cached summaries.

Layout: ``<dir>/<format>-<fingerprint>/<key[:2]>/<key>``, where the
fingerprint covers everything besides the file that decides its results
(ranklint's version and the hash of its own source, Python and libcst
versions, enabled rules, per-file ignores, analysis settings) and the key the
file's path and bytes. ``<dir>`` (by
default ``.ranklint_cache`` in the project root) holds a ``.gitignore`` and
a ``CACHEDIR.TAG``. Entries are written to a temporary file and renamed, so
concurrent runs never see half an entry; an entry that cannot be read back
exactly (corrupt, truncated, another format, another key) is ignored and
rebuilt, never trusted. Entries are pickles: the cache directory must not be
writable by anyone who may not run code as the user (the same trust as the
project's own source).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import logging
import os
import pickle
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from ranklint._version import __version__
from ranklint.config import Config
from ranklint.findings import Finding
from ranklint.results import FileResult

logger = logging.getLogger(__name__)

CACHE_DIR_NAME = ".ranklint_cache"
CACHE_DIR_ENV = "RANKLINT_CACHE_DIR"
_FORMAT = 5
_MAGIC = b"ranklint-cache\n"
_GITIGNORE = "# Created by ranklint: the cache is never committed.\n*\n"
_CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by ranklint.\n"
)


def config_fingerprint(config: Config) -> str:
    """Everything besides a file's path and bytes that decides its results."""
    # Equivalent mutants below: each part only has to differ when its input does.
    try:
        libcst_version = version("libcst")  # pragma: no mutate
    except PackageNotFoundError:  # pragma: no cover - libcst is a dependency
        libcst_version = "?"  # pragma: no mutate
    parts = [
        f"format={_FORMAT}",
        f"ranklint={__version__}",
        f"source={_source_hash()}",
        f"python={sys.version_info[0]}.{sys.version_info[1]}",  # pragma: no mutate
        f"libcst={libcst_version}",
        "rules=" + ",".join(config.enabled_codes()),  # pragma: no mutate
        # Every option (declared once, in Config) and the root.
        *config.fingerprint_parts(),
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:20]  # pragma: no mutate


@functools.lru_cache(maxsize=1)
def _source_hash() -> str:
    """Hash of ranklint's own modules: an edited checkout never reuses stale entries."""
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent
    for file in sorted(package.rglob("*.py")):
        digest.update(file.relative_to(package).as_posix().encode())
        try:
            digest.update(file.read_bytes())
        except OSError:
            digest.update(b"?")
    return digest.hexdigest()[:16]


#: A settings folder not used for this long is removed when another one is made.
STALE_AFTER_S = 7 * 24 * 3600


def is_ranklint_cache(directory: Path) -> bool:
    """Whether ``directory`` is a cache ranklint made (its CACHEDIR.TAG says so)."""
    try:
        return (directory / "CACHEDIR.TAG").read_text(encoding="utf-8") == _CACHEDIR_TAG
    except (OSError, UnicodeDecodeError):
        return False


def prune_settings_folders(root: Path, keep: Path, *, now: float | None = None) -> list[Path]:
    """Remove the settings folders of ``root`` other than ``keep`` that are of another
    format (never readable again) or unused for :data:`STALE_AFTER_S`; the removed ones."""
    if not is_ranklint_cache(root):
        return []
    now = time.time() if now is None else now
    removed = []
    for child in sorted(root.iterdir()):
        name = child.name
        if child == keep or not child.is_dir() or "-" not in name:
            continue
        prefix = name.partition("-")[0]
        if not prefix.isdigit():
            continue
        try:
            unused = now - child.stat().st_mtime > STALE_AFTER_S
        except OSError:
            continue
        if prefix != str(_FORMAT) or unused:
            shutil.rmtree(child, ignore_errors=True)
            removed.append(child)
    return removed


def default_cache_dir(root: Path) -> Path:
    override = os.environ.get(CACHE_DIR_ENV)
    return Path(override) if override else root / CACHE_DIR_NAME


class Cache:
    """File results by (path, content); safe for concurrent readers and writers."""

    def __init__(self, directory: Path, fingerprint: str) -> None:
        self.root = Path(directory)
        self.directory = self.root / f"{_FORMAT}-{fingerprint}"
        self._fingerprint = fingerprint
        self._writable = True

    @classmethod
    def for_config(cls, config: Config, directory: Path) -> Cache:
        return cls(directory, config_fingerprint(config))

    def key(self, path: str, data: bytes) -> str:
        # Separators and spelling of the key's parts are free (equivalent mutants);
        # undecodable path names must not fail (tested).
        digest = hashlib.sha256()
        digest.update(self._fingerprint.encode())
        digest.update(b"\0")  # pragma: no mutate
        # Any codec's name spelling works (equivalent mutants).
        digest.update(os.path.abspath(path).encode("utf-8", "surrogateescape"))  # pragma: no mutate
        digest.update(b"\0")  # pragma: no mutate
        digest.update(data)
        return digest.hexdigest()

    def _entry(self, key: str) -> Path:
        return self.directory / key[:2] / key[2:]  # pragma: no mutate (any split works)

    def lookup(self, paths: Sequence[str]) -> list[FileResult | None]:
        """The stored result of each file as it is on disk now; ``None`` for misses
        (and for files that cannot be read: linting reports why)."""
        # Mark this settings folder as used (stale ones are pruned by age).
        with contextlib.suppress(OSError):
            os.utime(self.directory)
        found: list[FileResult | None] = []
        for path in paths:
            try:
                with open(path, "rb") as handle:
                    data = handle.read()
            except OSError:
                found.append(None)
                continue
            found.append(self.get(path, data))
        return found

    def get(self, path: str, data: bytes) -> FileResult | None:
        """The stored result of ``path`` with these bytes; its summary stays packed."""
        key = self.key(path, data)
        stored = self._read(self._entry(key), key)
        if stored is None:
            return None
        try:
            result, packed = stored
            if not isinstance(result, FileResult) or result.path != path:
                raise ValueError("entry for another file")  # pragma: no mutate (caught)
            if packed is not None and not isinstance(packed, bytes):
                raise ValueError("not a packed summary")  # pragma: no mutate (caught)
        except Exception:  # another shape: from another version, rebuild
            logger.debug("ignoring unreadable cache entry for %s", path, exc_info=True)
            return None
        result.packed_summary = packed
        result.cache_key = key
        return result

    def put(self, path: str, data: bytes, result: FileResult) -> None:
        """Store ``result``; results with internal errors are not cached (retried)."""
        if not self._writable or result.errors:
            return
        key = self.key(path, data)
        try:
            # Any protocol round-trips (equivalent mutants).
            protocol = pickle.HIGHEST_PROTOCOL  # pragma: no mutate
            # The summary is pickled on its own, so that a warm run unpickles it
            # only when its project phase runs; one still packed (a cache hit
            # stored again with new call-site positions) is stored as it is.
            packed = result.packed_summary
            if result.summary is not None:
                packed = pickle.dumps(result.summary, protocol=protocol)  # pragma: no mutate
            # `get` sets the packed summary from the entry's own field: keeping it
            # in `bare` too would only store it twice.
            bare = dataclasses.replace(
                result,
                summary=None,
                packed_summary=None,  # pragma: no mutate
            )
            blob = pickle.dumps((key, (bare, packed)), protocol=protocol)  # pragma: no mutate
        except Exception as exc:  # e.g. unpicklable: skip this entry only
            logger.debug("cache entry for %s not stored: %s", path, exc)
            return
        result.cache_key = key
        self._write(self._entry(key), blob)

    # -- the project phase's findings ---------------------------------------------
    def project_key(
        self, results: Sequence[FileResult], *, judged: bool = False, complete: bool = True
    ) -> str | None:
        """The key of a project phase over ``results``, in their order.

        The phase's findings depend only on the files' paths and bytes (their
        keys), on the configuration (the fingerprint, part of every key), on
        whether it judged suppressions of project-phase codes (``judged``) and
        on whether the results are the whole project (``complete``).
        ``None`` when a result did not go through this cache.
        """
        digest = hashlib.sha256()
        digest.update(b"judged" if judged else b"unjudged")
        digest.update(b"complete" if complete else b"part")
        for result in results:
            if result.cache_key is None:
                return None
            digest.update(result.cache_key.encode())
        return digest.hexdigest()

    def get_project(self, key: str) -> dict[str, list[Finding]] | None:
        """The project phase's findings by path, stored under ``key``."""
        stored = self._read(self._project_entry(key), key)
        if not isinstance(stored, dict):
            return None
        return stored

    def put_project(self, key: str, findings: dict[str, list[Finding]]) -> None:
        if not self._writable:
            return
        try:
            protocol = pickle.HIGHEST_PROTOCOL  # pragma: no mutate
            blob = pickle.dumps((key, findings), protocol=protocol)  # pragma: no mutate
        except Exception as exc:  # pragma: no cover - findings are plain data
            logger.debug("project entry not stored: %s", exc)
            return
        self._write(self._project_entry(key), blob)

    def _project_entry(self, key: str) -> Path:
        return self.directory / "project" / key

    # -- entries on disk ---------------------------------------------------------
    def _read(self, entry: Path, key: str) -> Any:
        """What is stored under ``key`` at ``entry``; ``None`` if missing or not trusted."""
        try:
            with open(entry, "rb") as handle:
                blob = handle.read()
        except OSError:
            return None
        try:
            if not blob.startswith(_MAGIC):
                raise ValueError("not a ranklint cache entry")  # pragma: no mutate (caught)
            stored_key, value = pickle.loads(blob[len(_MAGIC) :])
            if stored_key != key:
                raise ValueError("entry for another key")  # pragma: no mutate (caught)
        except Exception:  # corrupt, truncated, from another version: rebuild
            logger.debug("ignoring unreadable cache entry %s", entry, exc_info=True)
            return None
        return value

    def _write(self, entry: Path, blob: bytes) -> None:
        """Write ``blob`` at ``entry`` atomically (a failure only costs the entry)."""
        try:
            self._prepare(entry.parent)
            # Where and how the temporary file is named changes nothing observable
            # (atomicity: test_entries_written_concurrently_by_threads_stay_readable).
            with tempfile.NamedTemporaryFile(  # pragma: no mutate
                dir=entry.parent,
                prefix=".tmp-",  # pragma: no mutate
                delete=False,  # pragma: no mutate
            ) as handle:
                handle.write(_MAGIC + blob)
                temporary = handle.name
            os.replace(temporary, entry)
        except OSError as exc:
            logger.debug("cache write failed for %s: %s", entry, exc)
            # A read-only location: stop trying for this run (saves time only).
            self._writable = False  # pragma: no mutate

    def _prepare(self, directory: Path) -> None:
        if directory.is_dir():
            return
        new_settings = not self.directory.is_dir()
        self.root.mkdir(parents=True, exist_ok=True)
        for name, content in ((".gitignore", _GITIGNORE), ("CACHEDIR.TAG", _CACHEDIR_TAG)):
            marker = self.root / name
            if not marker.exists():
                # The markers are courtesy: failing to write one is ignored.
                with contextlib.suppress(OSError):  # pragma: no mutate
                    marker.write_text(content, encoding="utf-8")  # pragma: no mutate
        # exist_ok matters only when a concurrent run made it first.
        directory.mkdir(parents=True, exist_ok=True)  # pragma: no mutate
        if new_settings:
            # A new settings folder: the time to drop the ones nobody uses any more.
            for removed in prune_settings_folders(self.root, self.directory):
                logger.debug("removed the stale cache folder %s", removed)
