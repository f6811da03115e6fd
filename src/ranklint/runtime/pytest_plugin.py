"""pytest plugin of the runtime companion (entry point ``pytest11``: ``ranklint``).

- ``@pytest.mark.ranks(4)`` runs the test body on 4 ranks (threads mode);
  ``@pytest.mark.ranks(2, mode="gloo", timeout=30)`` picks the mode and the
  deadline. The test may take ``rank`` and ``world_size`` arguments; other
  fixtures are set up once and shared by the ranks. A failure on any rank
  fails the test, and says which rank.
- ``@pytest.mark.ranks(2, equivalent_to=1, rtol=1e-5, atol=1e-6)`` runs the
  body at world size 1 and at 2 and compares what it returns (parameters
  after a step, the loss, metrics): the body shards its data with the
  ``rank`` and ``world_size`` fixtures (``batch.chunk(world_size)[rank]``), and
  a value that changes with the world size fails the test with
  :class:`ranklint.runtime.NotEquivalentError`, naming it and the factor.
- The ``ranks`` fixture runs functions on ranks inside a test, for finer
  control: ``results = ranks(fn, 4, rank_inputs=...)``.

A marked test that fails shows the report first and none of this plugin's
frames: a divergence or a timeout prints its text alone, a rank's exception
(threads mode) is re-raised with its own traceback, and a gloo rank's
traceback is printed without the companion's frames.

This module imports no torch: a test without the marker never pays for it.
"""

from __future__ import annotations

import functools
import logging
import os
import re
from collections.abc import Callable
from typing import Any

import pytest

logger = logging.getLogger(__name__)

MARKER = "ranks"
#: The marker's options of the equivalence check.
_EQUIVALENCE = ("equivalent_to", "rtol", "atol")
#: The runtime companion's folder: its frames are never the user's.
_OWN = os.path.dirname(os.path.abspath(__file__)) + os.sep
#: A frame's first line in a formatted traceback.
_FRAME = re.compile(r'\s*File "(?P<file>[^"]+)", line \d+')


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(world_size, mode='threads', timeout=60.0): run the test body on world_size "
        "simulated ranks with ranklint's runtime companion (ranklint.runtime.run_ranks); "
        "equivalent_to=M (with rtol=, atol=) also runs it on M ranks and compares what the "
        "body returns at both world sizes",
    )


def _options(marker: pytest.Mark) -> tuple[int, dict[str, Any]]:
    if len(marker.args) != 1 or not isinstance(marker.args[0], int):
        raise pytest.UsageError(
            f"@pytest.mark.{MARKER} takes the world size as its one positional argument, "
            f"e.g. @pytest.mark.{MARKER}(4); got {marker.args!r}"
        )
    allowed = {"mode", "timeout", "seed", "same_seed", "explain", *_EQUIVALENCE}
    unknown = sorted(set(marker.kwargs) - allowed)
    if unknown:
        raise pytest.UsageError(
            f"@pytest.mark.{MARKER} got unknown options {', '.join(unknown)}; "
            f"it takes {', '.join(sorted(allowed))}"
        )
    size, options = marker.args[0], dict(marker.kwargs)
    tolerances = sorted({"rtol", "atol"} & set(options))
    if tolerances and options.get("equivalent_to") is None:
        raise pytest.UsageError(
            f"@pytest.mark.{MARKER} got {' and '.join(tolerances)} without equivalent_to: "
            f"tolerances apply to the comparison, e.g. "
            f"@pytest.mark.{MARKER}({size}, equivalent_to=1, rtol=1e-5, atol=1e-6)"
        )
    if options.get("equivalent_to") is not None:
        from ranklint.runtime.equivalence import validate

        try:
            validate(size, options["equivalent_to"], options.get("rtol", 0), options.get("atol", 0))
        except ValueError as error:
            raise pytest.UsageError(f"@pytest.mark.{MARKER}: {error}") from None
    return size, options


@pytest.fixture
def rank() -> int:
    """The rank running the test body (0 outside ``@pytest.mark.ranks``)."""
    return 0


@pytest.fixture
def world_size(request: pytest.FixtureRequest) -> int:
    """The number of ranks of ``@pytest.mark.ranks`` (1 without it)."""
    marker = request.node.get_closest_marker(MARKER)
    return _options(marker)[0] if marker is not None else 1


@pytest.fixture
def ranks() -> Callable[..., list[Any]]:
    """``ranks(fn, world_size, **options)``: :func:`ranklint.runtime.run_ranks`, in a test.

    A divergence or a timeout is raised as run_ranks raises it, without the
    companion's frames: the failure shows the test's line, then the report.
    """
    from ranklint.runtime import DivergenceError, RanksTimeout, run_ranks

    @functools.wraps(run_ranks)
    def run(*args: Any, **options: Any) -> list[Any]:
        __tracebackhide__ = True
        try:
            return run_ranks(*args, **options)
        except (DivergenceError, RanksTimeout) as error:
            raise error.with_traceback(None) from None

    return run


def without_own_frames(traceback_text: str) -> str:
    """A formatted traceback without the runtime companion's frames (this plugin's
    ``body``, a gloo rank's launcher): what is left is the user's code."""
    kept: list[str] = []
    skipping = False
    for line in traceback_text.splitlines():
        frame = _FRAME.match(line)
        if frame is not None:
            skipping = os.path.abspath(frame.group("file")).startswith(_OWN)
        elif not line.startswith("    "):
            skipping = False
        if not skipping:
            kept.append(line)
    return "\n".join(kept)


def _hidden(excinfo: pytest.ExceptionInfo[BaseException] | None) -> bool:
    """``__tracebackhide__`` of the hook: its frame is hidden from every failure but
    the report it raises with ``pytest.fail`` (a failure with no frame left at all
    reads "All traceback entries are hidden"; with this one, only the report shows)."""
    return excinfo is None or not isinstance(excinfo.value, pytest.fail.Exception)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    __tracebackhide__ = _hidden
    marker = pyfuncitem.get_closest_marker(MARKER)
    if marker is None:
        return None
    size, options = _options(marker)
    from ranklint.runtime import (
        DivergenceError,
        NotEquivalentError,
        RankFailure,
        RanksTimeout,
        run_ranks,
    )

    names = pyfuncitem._fixtureinfo.argnames
    shared = {name: pyfuncitem.funcargs[name] for name in names}
    test = pyfuncitem.obj

    def body(rank: int, world_size: int) -> Any:
        __tracebackhide__ = True
        arguments = dict(shared)
        if "rank" in arguments:
            arguments["rank"] = rank
        if "world_size" in arguments:
            arguments["world_size"] = world_size
        return test(**arguments)

    try:
        run_ranks(body, size, **options)
    except RankFailure as failure:
        error = failure.error
        # threads mode keeps the rank's own exception: re-raise it, with pytest's
        # assertion introspection, and say which rank raised it.
        if failure.traceback_text and error.__traceback__ is not None:
            if hasattr(error, "add_note"):
                error.add_note(f"(raised on rank {failure.rank} of {size})")
            raise error from None
        # gloo mode has the rank's traceback as text only: show it, not our frames.
        report = without_own_frames(str(failure))
    except (DivergenceError, RanksTimeout) as error:
        # the report says it all, and the frames here are the companion's.
        report = str(error)
    except NotEquivalentError as error:
        # the message says it all: show it without the comparison's frames.
        raise error.with_traceback(None) from None
    else:
        return True
    pytest.fail(report, pytrace=False)
