"""Finding the user's line in a stack: the innermost frame outside the libraries.

Pure Python. A frame is ``(file, line, function)``; stacks are innermost first,
as Flight Recorder stores them and as :func:`frames_of` walks them. Library
frames are those under the given roots (torch's, ranklint's, the standard
library's) and those of any installed package (:func:`is_installed`): with
DeepSpeed, PEFT or Lightning between the user's line and torch, the site is
still the user's line.
"""

from __future__ import annotations

import functools
import os
import site
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


#: Folder names that hold installed packages, on any machine (a job's dumps included).
INSTALL_FOLDERS = frozenset({"site-packages", "dist-packages"})


@functools.cache
def install_roots() -> tuple[str, ...]:
    """The folders this interpreter installs packages into, each ending in a separator."""
    folders = {sysconfig.get_paths().get(key) for key in ("purelib", "platlib")}
    # An old virtualenv's site module lacks both.
    if hasattr(site, "getsitepackages"):
        folders.update(site.getsitepackages())
    if hasattr(site, "getusersitepackages"):
        folders.add(site.getusersitepackages())
    return tuple(sorted(os.path.abspath(folder) + os.sep for folder in folders if folder))


def is_installed(file: str) -> bool:
    """Whether ``file`` lies in an installed package (any third-party library).

    Installed means under one of :func:`install_roots` or under any folder named
    ``site-packages`` or ``dist-packages``. Under the working folder only what
    is installed inside it counts: a virtual environment there
    (``./.venv/lib/python3.11/site-packages``) is library, the project's own
    files (an editable checkout included) are not, even where the working
    folder itself lies inside an install folder.
    """
    path = os.path.abspath(file)
    here = os.path.join(os.path.abspath(os.getcwd()), "")
    base = here if path.startswith(here) else ""
    folders = path[len(base) :].split(os.sep)[:-1]
    if INSTALL_FOLDERS.intersection(folders):
        return True
    return any(
        path.startswith(root) and root.startswith(base) and len(root) > len(base)
        for root in install_roots()
    )


def is_library(file: str, roots: Iterable[str]) -> bool:
    """Whether ``file`` lies under one of ``roots`` or in an installed package
    (:func:`is_installed`), or is not a real file (``<string>``)."""
    if file.startswith("<"):
        return True
    path = os.path.abspath(file)
    return any(path.startswith(root) for root in roots) or is_installed(path)


def frames_of(frame: FrameType | None) -> list[Frame]:
    """A live frame and its callers, innermost first."""
    frames: list[Frame] = []
    while frame is not None:
        frames.append((frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name))
        frame = frame.f_back
    return frames


def locate(frames: Sequence[Frame], roots: Sequence[str]) -> tuple[Site | None, str | None]:
    """The user's site and the library function it called (``None`` where not found).

    The site is the innermost frame that is not a library's (:func:`is_library`);
    the API is the library frame just inside it whose name is public and not a
    wrapper: a third-party package's where the user called one (Lightning's
    ``all_gather``), else torch's.
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


#: The runtime companion's folder. Its frame that called the rank function (the
#: rank's thread, a forked gloo rank, the pytest plugin's body) ends the rank's
#: stack: the frames outside it are the launcher's (a forked rank still holds the
#: pytest run and the test that called run_ranks), never the rank's callers.
COMPANION = os.path.dirname(os.path.abspath(__file__)) + os.sep


def rank_frames(frames: Sequence[Frame], roots: Sequence[str]) -> Sequence[Frame]:
    """``frames`` (innermost first) up to the companion's frame outside the first user frame."""
    seen_user = False
    for index, (file, _line, _name) in enumerate(frames):
        if os.path.abspath(file).startswith(COMPANION):
            if seen_user:
                return frames[:index]
        elif not is_library(file, roots):
            seen_user = True
    return frames


def callers(frames: Sequence[Frame], roots: Sequence[str], limit: int = 8) -> tuple[Site, ...]:
    """The user frames outside the innermost one, innermost first, at most ``limit``."""
    mine = rank_frames(frames, roots)
    user = [Site(f, line, name) for f, line, name in mine if not is_library(f, roots)]
    return tuple(user[1 : limit + 1])


def user_stack(frames: Sequence[Frame], roots: Sequence[str]) -> tuple[Site, ...]:
    """The frames outside ``roots``, outermost first (innermost last)."""
    return tuple(
        Site(file, line, name)
        for file, line, name in reversed(rank_frames(frames, roots))
        if not is_library(file, roots)
    )
