"""Deep trees on a large stack: the parse and every walk run on a thread made for them."""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Iterator
from typing import TypeVar

# libcst's native parser recurses on the C stack of the calling thread: on the
# main thread's 8 MiB it segfaults (killing the whole run) on nesting such as
# 1500 brackets or a 20000-term `+` chain. On a thread with this much stack it
# parses them; the memory is virtual and only the pages used are committed.
_PARSE_STACK_BYTES = 512 * 1024 * 1024
_stack_size_lock = threading.Lock()

_T = TypeVar("_T")

# The walk and libcst's position computation recurse in Python, a few frames per
# tree level: valid code at CPython's own limits (200 nested brackets, 2000-term
# operator chains) needs far more than the default 1000 frames.
_RECURSION_LIMIT = 60_000
_recursion_lock = threading.Lock()
_recursion_users = 0
_saved_recursion_limit = 0


@contextlib.contextmanager
def deep_recursion() -> Iterator[None]:
    """Raise the interpreter's recursion limit while any file is being walked."""
    global _recursion_users, _saved_recursion_limit
    with _recursion_lock:
        if _recursion_users == 0:
            _saved_recursion_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_saved_recursion_limit, _RECURSION_LIMIT))
        _recursion_users += 1
    try:
        yield
    finally:
        with _recursion_lock:
            _recursion_users -= 1
            if _recursion_users == 0:
                sys.setrecursionlimit(_saved_recursion_limit)


def run_with_large_stack(function: Callable[..., _T], *args: object) -> _T:
    """Run ``function(*args)`` on a fresh thread with a large stack and return its result."""
    outcome: list[_T] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            outcome.append(function(*args))
        except BaseException as exc:  # re-raised in the caller's thread
            failure.append(exc)

    with _stack_size_lock:
        previous = threading.stack_size(_PARSE_STACK_BYTES)
        try:
            thread = threading.Thread(target=target, name="ranklint-parse")
            thread.start()
        finally:
            threading.stack_size(previous)
    thread.join()
    if failure:
        raise failure[0]
    return outcome[0]
