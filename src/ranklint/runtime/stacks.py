"""Finding the user's line in a stack: the innermost frame outside the libraries.

Pure Python. A frame is ``(file, line, function)``; stacks are innermost first,
as Flight Recorder stores them and as :func:`frames_of` walks them.
"""

from __future__ import annotations

import os
import sysconfig
from collections.abc import Iterable, Sequence
from types import FrameType

from ranklint.runtime.report import Site

Frame = tuple[str, int, str]

#: Frame names of decorators and dispatch glue: never the API a user called.
WRAPPERS = frozenset(
    {
        "wrapper",
        "inner",
        "decorate_context",
        "__call__",
        "forward_no_grad",
        "autograd_impl",
        "redispatch",
        "backward_hook",
    }
)


def library_roots(*modules_files: str) -> tuple[str, ...]:
    """Folders whose frames are never the user's: the given packages' and the stdlib's."""
    roots = {os.path.dirname(os.path.abspath(path)) + os.sep for path in modules_files}
    # platstdlib equals stdlib outside a few distributions' layouts.
    for key in ("stdlib", "platstdlib"):  # pragma: no mutate  (equal paths here)
        folder = sysconfig.get_paths().get(key)
        if folder:
            roots.add(os.path.abspath(folder) + os.sep)
    return tuple(sorted(roots))


def is_library(file: str, roots: Iterable[str]) -> bool:
    """Whether ``file`` lies under one of ``roots`` or is not a real file (``<string>``)."""
    if file.startswith("<"):
        return True
    path = os.path.abspath(file)
    return any(path.startswith(root) for root in roots)


def frames_of(frame: FrameType | None) -> list[Frame]:
    """A live frame and its callers, innermost first."""
    frames: list[Frame] = []
    while frame is not None:
        frames.append((frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name))
        frame = frame.f_back
    return frames


def locate(frames: Sequence[Frame], roots: Sequence[str]) -> tuple[Site | None, str | None]:
    """The user's site and the library function it called (``None`` where not found).

    The site is the innermost frame outside ``roots``; the API is the library
    frame just inside it whose name is public and not a wrapper.
    """
    for index, (file, line, name) in enumerate(frames):
        if is_library(file, roots):
            continue
        api = None
        for _file, _line, inner in reversed(frames[:index]):
            if inner not in WRAPPERS and not inner.startswith("_"):
                api = inner
                break
        return Site(file, line, name), api
    return None, None


def callers(frames: Sequence[Frame], roots: Sequence[str], limit: int = 8) -> tuple[Site, ...]:
    """The user frames outside the innermost one, innermost first, at most ``limit``."""
    user = [Site(f, line, name) for f, line, name in frames if not is_library(f, roots)]
    return tuple(user[1 : limit + 1])


def user_stack(frames: Sequence[Frame], roots: Sequence[str]) -> tuple[Site, ...]:
    """The frames outside ``roots``, outermost first (innermost last)."""
    return tuple(
        Site(file, line, name)
        for file, line, name in reversed(frames)
        if not is_library(file, roots)
    )
