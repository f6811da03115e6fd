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

This module imports no torch: a test without the marker never pays for it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest

logger = logging.getLogger(__name__)

MARKER = "ranks"
#: The marker's options of the equivalence check.
_EQUIVALENCE = ("equivalent_to", "rtol", "atol")


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
    """``ranks(fn, world_size, **options)``: :func:`ranklint.runtime.run_ranks`, in a test."""
    from ranklint.runtime import run_ranks

    return run_ranks


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    marker = pyfuncitem.get_closest_marker(MARKER)
    if marker is None:
        return None
    size, options = _options(marker)
    from ranklint.runtime import NotEquivalentError, RankFailure, run_ranks

    names = pyfuncitem._fixtureinfo.argnames
    shared = {name: pyfuncitem.funcargs[name] for name in names}
    test = pyfuncitem.obj

    def body(rank: int, world_size: int) -> Any:
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
        raise
    except NotEquivalentError as error:
        # the message says it all: show it without the comparison's frames.
        __tracebackhide__ = True
        raise error.with_traceback(None) from None
    return True
