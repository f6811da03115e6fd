"""``ranklint trace``: diff the Flight Recorder dumps a hung job left, one per rank.

The command belongs to the linter: it never imports torch (the dumps are read
with a restricted unpickler, see :mod:`ranklint.runtime.flight_recorder`).
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from typing import Any, TextIO

from ranklint.faces.exits import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK

logger = logging.getLogger(__name__)

DESCRIPTION = """\
Read the Flight Recorder dumps of a distributed job, one file per rank, and
print the first collective where the ranks disagree on each process group:
each rank's collective and call site, the sequences up to it, the collective
each rank was still in when it dumped, and the static finding (RNK102-RNK110)
at the diverging line where the source is on this machine.

A job writes the dumps on a collective timeout with TORCH_NCCL_DUMP_ON_TIMEOUT=1
(and TORCH_FR_BUFFER_SIZE > 0) to ${TORCH_FR_DUMP_TEMP_FILE}<rank>, by default
/tmp/nccl_trace_rank_<rank>.

exit status: 0 the dumps agree, 1 a divergence or a rank without a dump,
2 bad input (no dumps, an unreadable file, a file that is not a dump)."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``trace`` on the CLI's sub-parsers."""
    trace = sub.add_parser(
        "trace",
        help="diff the per-rank Flight Recorder dumps of a hung job (no torch needed)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    trace.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="a folder holding one dump per rank (files whose names end in the rank), "
        "or the dump files themselves",
    )
    trace.add_argument(
        "--prefix",
        metavar="PREFIX",
        help="the dumps' file-name prefix, before the rank (default: inferred; "
        "nccl_trace_rank_ when several); with a folder part and no PATH, that folder "
        "(e.g. --prefix /tmp/nccl_trace_rank_)",
    )
    trace.add_argument(
        "--world-size",
        type=int,
        metavar="N",
        help="the job's number of ranks, so that the highest ranks without a dump are "
        "named too (default: from the dumps)",
    )
    trace.add_argument(
        "--output-format",
        choices=("text", "json"),
        default="text",
        help="text (default) or json (the divergence, missing ranks and in-flight collectives)",
    )
    trace.add_argument(
        "--no-static",
        action="store_true",
        help="do not lint the diverging lines' source files for a static finding",
    )
    trace.add_argument("--verbose", "-v", action="store_true", help="debug logs")
    return trace


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run ``ranklint trace``; the exit code."""
    from ranklint.runtime.trace import (
        TraceInputError,
        absent_sources,
        analyse,
        find_dumps,
        load_dumps,
        render_trace,
        trace_json,
    )

    if args.world_size is not None and args.world_size < 1:
        err.write("ranklint: error: --world-size must be at least 1\n")
        return EXIT_ERROR
    started = time.perf_counter()
    try:
        dumps = load_dumps(find_dumps(args.paths, args.prefix))
    except TraceInputError as error:
        err.write(f"ranklint: error: {error}\n")
        return EXIT_ERROR
    trace = analyse(dumps, args.world_size)
    notes: dict[tuple[str, int], str] = {}
    error = trace.error()
    if error is not None and not args.no_static:
        absent = absent_sources(trace)
        if absent:
            more = f" and {len(absent) - 1} more" if len(absent) > 1 else ""
            err.write(
                f"ranklint: note: the source files the dumps name are not on this machine "
                f"({absent[0]}{more}): no static findings for their lines\n"
            )
        from ranklint.runtime.static import notes_for

        notes = notes_for(error)
    if args.output_format == "json":
        out.write(json.dumps(trace_json(trace, notes), indent=2) + "\n")
    else:
        out.write(render_trace(trace, notes))
    out.flush()
    logger.debug("trace of %d dumps in %.3f s", len(dumps), time.perf_counter() - started)
    return EXIT_FINDINGS if trace.divergence is not None or trace.missing else EXIT_OK
