"""`ranklint trace`: the companion's diff on Flight Recorder dumps, without torch.

The fast tests pickle hand-built dumps shaped like torch's; the slow ones diff
real dumps that forked gloo ranks write here (a hang, a shape mismatch and a
clean run) and compare the verdicts with torch's own analyzer, fr_trace.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import pickle
import re
import shutil
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ranklint.runtime import flight_recorder
from ranklint.runtime.trace import (
    Trace,
    TraceInputError,
    analyse,
    find_dumps,
    library_roots,
    load_dumps,
    render_trace,
    trace_json,
)
from tests.conftest import REPO_ROOT, run_subprocess, write

PREFIX = "nccl_trace_rank_"


def _entry(
    seq: int,
    op: str = "all_reduce",
    shape: tuple[int, ...] = (4,),
    *,
    site: tuple[str, int, str] = ("/job/train.py", 10, "step"),
    group: tuple[str, str] = ("0", "default_pg"),
    state: str = "completed",
    retired: bool = True,
    **fields: Any,
) -> dict[str, Any]:
    """A Flight Recorder entry as torch writes it (the fields the trace reads); ``fields``
    override them."""
    file, line, name = site
    entry = {
        "record_id": seq - 1,
        "pg_id": int(group[0]),
        "process_group": group,
        "collective_seq_id": seq,
        "p2p_seq_id": 0,
        "profiling_name": f"nccl:{op}",
        "time_created_ns": 1000 + seq,
        "input_sizes": [list(shape)] if shape else [],
        "input_dtypes": ["Float"] if shape else [],
        "output_sizes": [list(shape)] if shape else [],
        "output_dtypes": ["Float"] if shape else [],
        "state": state,
        "retired": retired,
        "is_p2p": False,
        "frames": [
            {"filename": "/env/site-packages/torch/distributed/distributed_c10d.py", "line": 1,
             "name": op},
            {"filename": file, "line": line, "name": name},
            {"filename": "/env/lib/python3.11/runpy.py", "line": 88, "name": "_run_code"},
        ],
    }  # fmt: skip
    return {**entry, **fields}


def _dump(entries: list[dict[str, Any]], ranks: tuple[int, ...] = (0, 1)) -> dict[str, Any]:
    return {
        "version": "2.10",
        "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": str(list(ranks))}},
        "pg_status": {"0": {"last_enqueued_collective": len(entries)}},
        "entries": entries,
    }


def _write_dumps(folder: Path, dumps: dict[int, dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for rank, dump in dumps.items():
        (folder / f"{PREFIX}{rank}").write_bytes(pickle.dumps(dump))
    return folder


# --- the restricted unpickler -------------------------------------------------


class _OpensAFile:
    """Unpickled by plain pickle, this would create ``path``."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, tuple[str, str]]:
        return (open, (self.path, "w"))


def test_restricted_unpickler_refuses_a_global_and_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "created"
    data = pickle.dumps({"entries": [_OpensAFile(str(marker))]})

    with pytest.raises(flight_recorder.UnsafeDumpError, match=r"global (io|builtins)\.open"):
        flight_recorder.loads_restricted(data)
    assert not marker.exists()


@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
def test_restricted_unpickler_reads_builtin_containers_and_scalars(protocol: int) -> None:
    value = {"a": [1, 2.5, None, True], "b": ("x", -3), "c": {1, 2}, "d": frozenset({3})}

    assert flight_recorder.loads_restricted(pickle.dumps(value, protocol=protocol)) == value


def test_trace_of_a_dump_naming_a_global_exits_2_and_says_why(run_cli, tmp_path: Path) -> None:
    (tmp_path / f"{PREFIX}0").write_bytes(pickle.dumps({"entries": [Path("x")]}))

    run = run_cli("trace", str(tmp_path))

    assert run.code == 2
    assert "not a Flight Recorder dump: the pickle names the global pathlib" in run.err
    assert "Traceback" not in run.err


# --- finding the dumps -----------------------------------------------------------


def test_folder_dumps_get_their_ranks_from_the_names_and_other_files_are_ignored(
    tmp_path: Path,
) -> None:
    folder = _write_dumps(tmp_path, {0: _dump([]), 1: _dump([]), 10: _dump([])})
    (folder / "store").write_text("a FileStore's file")

    found = find_dumps([str(folder)])

    assert sorted(rank for rank, _ in found if rank is not None) == [0, 1, 10]


def test_folder_with_two_prefixes_asks_for_prefix_and_prefix_picks_one(tmp_path: Path) -> None:
    for name in ("other_0", "other_1", "trace_1"):
        (tmp_path / name).write_bytes(pickle.dumps(_dump([])))

    with pytest.raises(TraceInputError, match=r"several prefixes \('other_', 'trace_'\)"):
        find_dumps([str(tmp_path)])
    found = find_dumps([], prefix=str(tmp_path / "other_"))
    assert [(rank, path.name) for rank, path in found] == [(0, "other_0"), (1, "other_1")]


def test_listed_file_without_a_rank_in_its_name_takes_the_dumps_rank(tmp_path: Path) -> None:
    named = write(tmp_path / "x", "")
    named.write_bytes(pickle.dumps({**_dump([_entry(1)]), "rank": 3}))

    dumps = load_dumps(find_dumps([str(named)]))

    assert [dump.rank for dump in dumps] == [3]


def test_listed_file_with_no_rank_anywhere_exits_2(run_cli, tmp_path: Path) -> None:
    (tmp_path / "dump").write_bytes(pickle.dumps(_dump([_entry(1)])))

    run = run_cli("trace", str(tmp_path / "dump"))

    assert run.code == 2
    assert "no rank" in run.err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"not a pickle at all", "not a Flight Recorder dump: not a pickle"),
        (pickle.dumps({"version": "2.10"}), "no list of 'entries'"),
        (pickle.dumps({"entries": [{"process_group": ("0", "x")}]}), "collective_seq_id"),
        (pickle.dumps([1, 2]), "no list of 'entries'"),
    ],
)
def test_file_that_is_not_a_dump_exits_2_with_the_reason(
    run_cli, tmp_path: Path, content: bytes, message: str
) -> None:
    (tmp_path / f"{PREFIX}0").write_bytes(content)

    run = run_cli("trace", str(tmp_path))

    assert (run.code, run.out) == (2, "")
    assert message in run.err
    assert "Traceback" not in run.err


def test_empty_folder_missing_path_and_no_path_exit_2(run_cli, tmp_path: Path) -> None:
    empty = run_cli("trace", str(tmp_path))
    missing = run_cli("trace", str(tmp_path / "nope"))
    nothing = run_cli("trace")

    assert (empty.code, missing.code, nothing.code) == (2, 2, 2)
    assert "no Flight Recorder dumps" in empty.err
    assert "no such file or directory" in missing.err
    assert "name a folder of dumps" in nothing.err


# --- the diff --------------------------------------------------------------------


def test_dumps_that_agree_exit_0_with_one_line(run_cli, tmp_path: Path) -> None:
    entries = [_entry(1), _entry(2, "broadcast", (3,))]
    _write_dumps(tmp_path, {0: _dump(entries), 1: _dump(entries)})

    run = run_cli("trace", str(tmp_path))

    assert run.code == 0
    assert run.out == "no divergence across 2 ranks, 2 collectives compared\n"


def test_shape_mismatch_exits_1_naming_both_sites(run_cli, tmp_path: Path) -> None:
    zero = [_entry(1), _entry(2, "broadcast", (3,), site=("/job/train.py", 20, "step"))]
    one = [_entry(1), _entry(2, "broadcast", (4,), site=("/job/train.py", 22, "step"))]
    _write_dumps(tmp_path, {0: _dump(zero), 1: _dump(one)})

    run = run_cli("trace", "--no-static", str(tmp_path))

    lines = run.out.splitlines()
    assert run.code == 1
    assert lines[0] == (
        "ranks diverged at collective #1 on group [0, 1]: the ranks disagree on the shape"
    )
    assert lines[1] == "  rank 0: broadcast(group=[0, 1], shape=(3,)) at /job/train.py:20 in step()"
    assert lines[2] == "  rank 1: broadcast(group=[0, 1], shape=(4,)) at /job/train.py:22 in step()"


def test_rank_stuck_in_an_unfinished_collective_is_shown_with_its_state(
    run_cli, tmp_path: Path
) -> None:
    zero = [
        _entry(1),
        _entry(2, site=("/job/train.py", 30, "step"), state="started", retired=False),
    ]
    _write_dumps(tmp_path, {0: _dump(zero), 1: _dump([_entry(1)])})

    run = run_cli("trace", "--no-static", str(tmp_path))

    assert run.code == 1
    assert "ranks diverged at collective #1 on group [0, 1]: rank 1 never issued it" in run.out
    assert (
        "  rank 0: in all_reduce #1 on group [0, 1] (started, not completed) "
        "at /job/train.py:30 in step()"
    ) in run.out.splitlines()
    assert "  rank 1: every collective completed; last all_reduce #0 on group [0, 1] at" in run.out


def test_gloo_style_entry_counts_as_completed_from_pg_status(tmp_path: Path) -> None:
    entries = [_entry(1, state="scheduled", retired=False), _entry(2, state="scheduled")]
    dump = {**_dump(entries), "pg_status": {"0": {"last_completed_collective": 1}}}
    _write_dumps(tmp_path, {0: dump, 1: _dump([_entry(1), _entry(2)])})

    trace = analyse(load_dumps(find_dumps([str(tmp_path)])))

    assert trace.in_flight == {}
    assert trace.divergence is None


def test_rank_without_a_dump_is_named_first_and_the_others_are_compared(
    run_cli, tmp_path: Path
) -> None:
    entries = [_entry(1)]
    _write_dumps(tmp_path, {0: _dump(entries, (0, 1, 2)), 2: _dump(entries, (0, 1, 2))})

    run = run_cli("trace", str(tmp_path))

    assert run.code == 1
    assert run.out.startswith("no dump from rank 1 (of ranks 0-2): a rank without a dump may")
    assert "no divergence across 2 ranks, 1 collective compared" in run.out
    assert "  rank 1: no dump" in run.out.splitlines()


def test_world_size_names_the_highest_rank_without_a_dump(tmp_path: Path) -> None:
    gloo_like = {**_dump([_entry(1)]), "pg_config": {"": {"name": "", "ranks": "[]"}}}
    _write_dumps(tmp_path, {0: gloo_like, 1: gloo_like})

    trace = analyse(load_dumps(find_dumps([str(tmp_path)])), world_size=3)

    assert trace.missing == (2,)
    assert trace.views[0].log[0].group == (0, 1, 2)


def test_subgroup_without_pg_config_takes_the_ranks_whose_dumps_name_it(
    run_cli, tmp_path: Path
) -> None:
    sub = ("1", "undefined")
    gloo = {"": {"name": "", "desc": "", "ranks": "[]"}}
    dumps = {
        0: {**_dump([_entry(1), _entry(1, group=sub)]), "pg_config": gloo},
        1: {**_dump([_entry(1), _entry(1, "broadcast", group=sub)]), "pg_config": gloo},
        2: {**_dump([_entry(1)]), "pg_config": gloo},
    }
    _write_dumps(tmp_path, dumps)

    run = run_cli("trace", "--no-static", str(tmp_path))

    assert run.code == 1
    assert "ranks diverged at collective #0 on group [0, 1]: the ranks disagree on the op" in (
        run.out
    )
    assert "(members of group '1' inferred from the dumps that name them" in run.out


def test_ring_buffer_that_dropped_old_entries_is_compared_from_the_common_start(
    tmp_path: Path,
) -> None:
    wrapped = [_entry(seq) for seq in (3, 4)]
    whole = [_entry(seq) for seq in (1, 2, 3)] + [_entry(4, "broadcast")]
    _write_dumps(tmp_path, {0: _dump(wrapped), 1: _dump(whole)})

    trace = analyse(load_dumps(find_dumps([str(tmp_path)])))

    assert trace.divergence is not None
    assert trace.divergence.position == 1  # sequence number 4, the second both hold
    assert trace.divergence.reason == "the ranks disagree on the op"
    assert trace.starts == {"0": 3}


def test_static_finding_at_the_diverging_line_is_quoted_unless_no_static(
    run_cli, tmp_path: Path
) -> None:
    source = write(
        tmp_path / "train.py",
        """
        import torch
        import torch.distributed as dist


        def step(rank):
            tensor = torch.ones(4)
            dist.all_reduce(tensor)
            if rank == 0:
                dist.all_reduce(tensor)
        """,
    )
    site = (str(source), 9, "step")
    zero = [_entry(1, site=(str(source), 7, "step")), _entry(2, site=site, retired=False)]
    dumps = _write_dumps(tmp_path / "dumps", {0: _dump(zero), 1: _dump(zero[:1])})

    quoted = run_cli("trace", str(dumps), cwd=tmp_path)
    plain = run_cli("trace", "--no-static", str(dumps), cwd=tmp_path)

    assert "      ranklint: RNK102 rank-divergent-collective:" in quoted.out
    assert "ranklint:" not in plain.out
    assert plain.out.splitlines()[1:] == [
        line for line in quoted.out.splitlines()[1:] if "ranklint:" not in line
    ]


def test_sources_absent_from_this_machine_are_noted_once(run_cli, tmp_path: Path) -> None:
    zero = [_entry(1), _entry(2, "broadcast", site=("/nowhere/a.py", 5, "f"))]
    one = [_entry(1), _entry(2, site=("/nowhere/b.py", 6, "f"))]
    _write_dumps(tmp_path, {0: _dump(zero), 1: _dump(one)})

    run = run_cli("trace", str(tmp_path))

    assert run.code == 1
    assert run.err.count("ranklint: note: the source files the dumps name are not on") == 1
    assert "(/nowhere/a.py and 1 more)" in run.err


def test_json_output_carries_the_divergence_and_the_in_flight_ranks(
    run_cli, tmp_path: Path
) -> None:
    zero = [_entry(1), _entry(2, "broadcast", (3,), state="scheduled", retired=False)]
    one = [_entry(1), _entry(2, "broadcast", (4,))]
    _write_dumps(tmp_path, {0: _dump(zero), 1: _dump(one)})

    run = run_cli("trace", "--output-format", "json", "--no-static", str(tmp_path))

    record = json.loads(run.out)
    assert run.code == 1
    assert record["divergence"]["position"] == 1
    assert record["divergence"]["ranks"]["1"]["shapes"] == [[4]]
    assert record["divergence"]["ranks"]["0"]["site"] == {
        "file": "/job/train.py",
        "line": 10,
        "function": "step",
    }
    assert record["in_flight"]["0"]["state"] == "scheduled"
    assert record["missing_ranks"] == []


def test_trace_command_never_imports_torch(tmp_path: Path) -> None:
    zero = [_entry(1), _entry(2, "broadcast", (3,))]
    dumps = _write_dumps(tmp_path / "dumps", {0: _dump(zero), 1: _dump(zero[:1])})
    probe = (
        "import sys\n"
        "from ranklint.faces.cli import main\n"
        f"code = main(['trace', {str(dumps)!r}])\n"
        "torch = sorted(m for m in sys.modules if m.split('.')[0] == 'torch')\n"
        "print('exit', code, 'torch', torch)\n"
    )

    result = run_subprocess(sys.executable, "-c", probe, cwd=tmp_path)

    assert result.stdout.splitlines()[-1] == "exit 1 torch []"


def test_help_names_the_dump_variables_and_the_exit_codes(run_cli) -> None:
    run = run_cli("trace", "--help")

    assert run.code == 0
    assert "TORCH_NCCL_DUMP_ON_TIMEOUT=1" in run.out
    assert "TORCH_FR_DUMP_TEMP_FILE" in run.out
    assert "exit status: 0 the dumps agree, 1 a divergence" in run.out


# --- finding and loading the dumps: ranks, prefixes, errors ----------------------------


def test_folder_with_the_default_prefix_among_others_takes_the_default(tmp_path: Path) -> None:
    _write_dumps(tmp_path, {0: _dump([]), 1: _dump([])})
    (tmp_path / "other_5").write_bytes(pickle.dumps(_dump([])))

    found = find_dumps([str(tmp_path)])

    assert [(rank, path.name) for rank, path in found] == [(0, f"{PREFIX}0"), (1, f"{PREFIX}1")]


def test_prefix_that_names_no_file_in_the_folder_is_named_in_the_error(tmp_path: Path) -> None:
    _write_dumps(tmp_path, {0: _dump([])})

    with pytest.raises(TraceInputError) as caught:
        find_dumps([str(tmp_path)], prefix="other_")
    assert str(caught.value) == f"{tmp_path}: no Flight Recorder dumps (files named other_<rank>)"


def test_folder_without_ranked_files_says_which_names_it_looked_for(tmp_path: Path) -> None:
    (tmp_path / "store").write_text("a FileStore's file")

    with pytest.raises(TraceInputError) as caught:
        find_dumps([str(tmp_path)])
    assert str(caught.value) == (
        f"{tmp_path}: no Flight Recorder dumps (files named <prefix><rank>)"
    )


def test_no_path_and_a_prefix_without_a_folder_asks_for_one() -> None:
    with pytest.raises(TraceInputError) as caught:
        find_dumps([], prefix="nccl_trace_rank_")

    assert str(caught.value) == (
        "name a folder of dumps or the dump files (or --prefix /path/to/prefix_)"
    )


def test_listed_files_take_the_rank_after_a_prefix_that_ends_in_a_digit(tmp_path: Path) -> None:
    # TORCH_FR_DUMP_TEMP_FILE=/tmp/run7 writes /tmp/run70, /tmp/run71, ...
    files = [tmp_path / "run70", tmp_path / "run71"]
    for path in files:
        path.write_bytes(pickle.dumps(_dump([])))

    found = find_dumps([str(path) for path in files], prefix=str(tmp_path / "run7"))

    assert found == [(0, files[0]), (1, files[1])]


def test_listed_file_takes_the_rank_its_name_ends_in_over_the_dumps(tmp_path: Path) -> None:
    path = tmp_path / "dump_5"
    path.write_bytes(pickle.dumps({**_dump([_entry(1)]), "rank": 3}))

    found = find_dumps([str(path)])
    dumps = load_dumps(found)

    assert found == [(5, path)]
    assert [(dump.rank, dump.source) for dump in dumps] == [(5, str(path))]


def test_two_dumps_for_one_rank_are_refused_naming_both_files(tmp_path: Path) -> None:
    first, second = tmp_path / "a_0", tmp_path / "b_0"
    for path in (first, second):
        path.write_bytes(pickle.dumps(_dump([])))

    with pytest.raises(TraceInputError) as caught:
        load_dumps(find_dumps([str(first), str(second)]))
    assert str(caught.value) == f"two dumps for rank 0: {first} and {second}"


def test_dump_that_cannot_be_read_names_the_os_error(tmp_path: Path) -> None:
    with pytest.raises(TraceInputError) as caught:
        load_dumps([(0, tmp_path)])

    assert str(caught.value) == f"{tmp_path}: cannot read: Is a directory"


def test_loading_no_files_is_an_error() -> None:
    with pytest.raises(TraceInputError) as caught:
        load_dumps([])

    assert str(caught.value) == "no Flight Recorder dumps"


def test_library_roots_are_torch_and_the_stdlib_of_the_dumping_machine_not_site_packages() -> None:
    frames = [
        ("/src/pytorch/torch/distributed/distributed_c10d.py", 1, "all_reduce"),
        ("/opt/py/lib/python3.11/asyncio/events.py", 2, "_run"),
        ("/opt/py/lib/python3.11/runpy.py", 3, "_run_code"),
        ("/opt/py/lib/python3.11/site-packages/lightning/fabric.py", 4, "all_gather"),
        ("/opt/py/lib/python3.12/dist-packages/deepspeed/comm.py", 5, "all_reduce"),
        ("/job/train.py", 6, "step"),
    ]
    op = flight_recorder.RecordedOp("0", 1, "all_reduce", (), (), tuple(frames))
    dump = flight_recorder.RankDump(
        0, "x", "2.10", (flight_recorder.TracedOp(op, "default_pg", "completed", True),), {}
    )

    roots = set(library_roots([dump])) - set(library_roots([]))

    assert roots == {
        "/src/pytorch/torch/",
        "/opt/py/lib/python3.11/asyncio/",
        "/opt/py/lib/python3.11/runpy.py",
    }


# --- what the diff finds -------------------------------------------------------------


def _analysed(
    folder: Path, dumps: dict[int, dict[str, Any]], world_size: int | None = None
) -> Trace:
    return analyse(load_dumps(find_dumps([str(_write_dumps(folder, dumps))])), world_size)


_GLOO_CONFIG = {"": {"name": "", "desc": "", "ranks": "[]"}}
_LIBRARY_ONLY = [
    {"filename": "/env/site-packages/torch/distributed/distributed_c10d.py", "line": 1,
     "name": "all_reduce"},
]  # fmt: skip


def test_world_size_below_the_highest_dumped_rank_is_raised_to_cover_it(tmp_path: Path) -> None:
    gloo_like = {**_dump([_entry(1)]), "pg_config": _GLOO_CONFIG}

    trace = _analysed(tmp_path, {0: gloo_like, 1: gloo_like}, world_size=1)

    assert trace.missing == ()
    assert trace.views[0].log[0].group == (0, 1)


def test_subgroup_in_pg_config_takes_its_ranks_from_there_not_from_the_dumps(
    tmp_path: Path,
) -> None:
    config = {
        "0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1, 2]"},
        "5": {"name": "5", "desc": "sub", "ranks": "[0, 1]"},
    }
    zero = {**_dump([_entry(1), _entry(1, group=("5", "sub"))]), "pg_config": config}
    others = {**_dump([_entry(1)]), "pg_config": config}

    trace = _analysed(tmp_path, {0: zero, 1: others, 2: others})

    assert trace.inferred == ()
    assert trace.divergence is not None
    assert (trace.divergence.group, trace.divergence.reason) == ((0, 1), "rank 1 never issued it")


def test_ranks_agreeing_on_several_gloo_groups_count_every_groups_collectives(
    run_cli, tmp_path: Path
) -> None:
    entries = [
        _entry(1),
        _entry(1, group=("1", "undefined")),
        _entry(1, group=("2", "undefined")),
        _entry(2, group=("2", "undefined")),
    ]
    gloo = {**_dump(entries), "pg_config": _GLOO_CONFIG}
    _write_dumps(tmp_path, {0: gloo, 1: gloo})

    run = run_cli("trace", str(tmp_path))

    assert run.code == 0
    assert run.out == (
        "no divergence across 2 ranks, 4 collectives compared\n"
        "(members of groups '1', '2' inferred from the dumps that name them: the dumps carry "
        "no pg_config ranks, as gloo writes them)\n"
    )


def test_ring_buffer_that_dropped_the_first_entry_is_noted_with_the_shared_start(
    run_cli, tmp_path: Path
) -> None:
    _write_dumps(
        tmp_path, {0: _dump([_entry(2), _entry(3)]), 1: _dump([_entry(seq) for seq in (1, 2, 3)])}
    )

    run = run_cli("trace", str(tmp_path))

    assert run.code == 0
    assert run.out == (
        "no divergence across 2 ranks, 2 collectives compared\n"
        "(group '0': older entries left some ranks' ring buffers; #0 is the collective with "
        "sequence number 2, TORCH_FR_BUFFER_SIZE sets the buffer's length)\n"
    )


def test_two_ranks_without_dumps_are_named_first_and_last_and_exit_1(
    run_cli, tmp_path: Path
) -> None:
    entries = [_entry(1)]
    _write_dumps(tmp_path, {0: _dump(entries, (0, 1, 2, 3)), 3: _dump(entries, (0, 1, 2, 3))})

    run = run_cli("trace", str(tmp_path))

    last = "last all_reduce #0 on group [0, 1, 2, 3] at /job/train.py:10 in step()"
    assert run.code == 1
    assert run.out.splitlines() == [
        "no dump from ranks 1, 2 (of ranks 0-3): a rank without a dump may have died or never "
        "reached the collective the others wait in; the diff compares the others",
        "no divergence across 2 ranks, 1 collective compared",
        "where each rank stood when it dumped (Flight Recorder's entry state):",
        f"  rank 0: every collective completed; {last}",
        f"  rank 3: every collective completed; {last}",
        "  rank 1: no dump",
        "  rank 2: no dump",
    ]


def test_divergence_beside_a_rank_without_a_dump_is_shown_on_the_whole_group(
    run_cli, tmp_path: Path
) -> None:
    caller = {"filename": "/job/main.py", "line": 3, "name": "main"}
    broadcast = _entry(2, "broadcast", site=("/job/train.py", 20, "step"))
    broadcast["frames"] = [*broadcast["frames"][:2], caller]
    everyone = (0, 1, 2)
    _write_dumps(tmp_path, {0: _dump([_entry(1), broadcast], everyone), 2: _dump([_entry(1)])})

    run = run_cli("trace", "--no-static", str(tmp_path))

    first = "all_reduce(group=[0, 1, 2], shape=(4,)) at /job/train.py:10 in step()"
    second = "broadcast(group=[0, 1, 2], shape=(4,)) at /job/train.py:20 in step()"
    assert run.code == 1
    assert run.out.splitlines() == [
        "no dump from rank 1 (of ranks 0-2): a rank without a dump may have died or never "
        "reached the collective the others wait in; the diff compares the others",
        "ranks diverged at collective #1 on group [0, 1, 2]: rank 2 never issued it",
        f"  rank 0: {second}",
        "      called from /job/main.py:3 in main()",
        "  rank 1: (no record)",
        "  rank 2: no collective #1 on this group (issued 1); still running (no collective)",
        "sequences on group [0, 1, 2] up to the mismatch (>> marks it):",
        "  rank 0:",
        f"       #0 {first}",
        f"    >> #1 {second}",
        "  rank 1:",
        "    >> #1 (none)",
        "  rank 2:",
        f"       #0 {first}",
        "    >> #1 (none) still running (no collective)",
        "where each rank stood when it dumped (Flight Recorder's entry state):",
        "  rank 0: every collective completed; last broadcast #1 on group [0, 1, 2] at "
        "/job/train.py:20 in step()",
        "  rank 2: every collective completed; last all_reduce #0 on group [0, 1, 2] at "
        "/job/train.py:10 in step()",
        "  rank 1: no dump",
    ]


def test_rank_waiting_on_another_group_shows_it_and_an_entry_without_state_is_unknown(
    run_cli, tmp_path: Path
) -> None:
    zero = [_entry(1), _entry(2, "broadcast")]
    one = [_entry(1), _entry(1, group=("1", "undefined"), state=None, retired=False)]
    dumps = {
        rank: {**_dump(entries), "pg_config": _GLOO_CONFIG}
        for rank, entries in enumerate((zero, one))
    }
    _write_dumps(tmp_path, dumps)

    run = run_cli("trace", "--no-static", str(tmp_path))

    site = "at /job/train.py:10 in step()"
    waiting = f"waiting in all_reduce(group=[1], shape=(4,)) {site}"
    assert run.code == 1
    assert run.out.splitlines() == [
        "ranks diverged at collective #1 on group [0, 1]: rank 1 never issued it",
        f"  rank 0: broadcast(group=[0, 1], shape=(4,)) {site}",
        f"  rank 1: no collective #1 on this group (issued 1); {waiting}",
        "sequences on group [0, 1] up to the mismatch (>> marks it):",
        "  rank 0:",
        f"       #0 all_reduce(group=[0, 1], shape=(4,)) {site}",
        f"    >> #1 broadcast(group=[0, 1], shape=(4,)) {site}",
        "  rank 1:",
        f"       #0 all_reduce(group=[0, 1], shape=(4,)) {site}",
        f"    >> #1 (none) {waiting}",
        "where each rank stood when it dumped (Flight Recorder's entry state):",
        f"  rank 0: every collective completed; last broadcast #1 on group [0, 1] {site}",
        f"  rank 1: in all_reduce #0 on group [1] (unknown, not completed) {site}",
        "(members of group '1' inferred from the dumps that name them: the dumps carry no "
        "pg_config ranks, as gloo writes them)",
    ]


def test_rank_with_no_collective_and_a_collective_without_user_frames_are_described(
    run_cli, tmp_path: Path
) -> None:
    _write_dumps(tmp_path, {0: _dump([_entry(1, frames=_LIBRARY_ONLY)]), 1: _dump([])})

    run = run_cli("trace", "--no-static", str(tmp_path))

    assert run.code == 1
    assert run.out.splitlines()[-3:] == [
        "where each rank stood when it dumped (Flight Recorder's entry state):",
        "  rank 0: every collective completed; last all_reduce #0 on group [0, 1]",
        "  rank 1: no collective recorded",
    ]


# --- the JSON form ---------------------------------------------------------------------


def _json_collective(op: str, position: int, line: int, dtype: str, **extra: Any) -> dict[str, Any]:
    return {
        "op": op,
        "position": position,
        "group": [0, 1],
        "group_name": "0",
        "shapes": [[3]],
        "dtypes": [dtype],
        "api": op,
        "site": {"file": "/job/train.py", "line": line, "function": "step"},
        "static": None,
        **extra,
    }


def test_json_holds_the_divergence_in_flight_ranks_and_static_notes_under_fixed_keys(
    tmp_path: Path,
) -> None:
    zero = [_entry(1), _entry(2, "broadcast", (3,), site=("/job/train.py", 20, "step"))]
    one = [
        _entry(1),
        _entry(
            2, "broadcast", (3,), site=("/job/train.py", 22, "step"), state="started",
            retired=False, input_dtypes=["ComplexFloat"],
        ),
    ]  # fmt: skip
    trace = _analysed(tmp_path, {0: _dump(zero), 1: _dump(one)})
    note = "RNK102 rank-divergent-collective: only rank 0 broadcasts"

    record = trace_json(trace, {("/job/train.py", 20): note})

    text = record.pop("text")
    assert record == {
        "ranks": [0, 1],
        "missing_ranks": [],
        "collectives_compared": 2,
        "divergence": {
            "group": [0, 1],
            "group_name": "0",
            "position": 1,
            "reason": "the ranks disagree on the dtype",
            "ranks": {
                "0": _json_collective("broadcast", 1, 20, "float32", static=note),
                "1": _json_collective("broadcast", 1, 22, "complexfloat"),
            },
        },
        "in_flight": {"1": _json_collective("broadcast", 1, 22, "complexfloat", state="started")},
        "inferred_groups": [],
    }
    assert text == render_trace(trace, {("/job/train.py", 20): note})
    assert f"      ranklint: {note}\n" in text


def test_json_of_agreeing_dumps_in_flight_without_a_user_site_has_null_site_and_api(
    tmp_path: Path,
) -> None:
    stuck = _dump([_entry(1, frames=_LIBRARY_ONLY, state="scheduled", retired=False)])
    trace = _analysed(tmp_path, {0: stuck, 1: stuck})

    record = trace_json(trace, {("/job/train.py", 10): "unused"})

    waiting = {
        "op": "all_reduce",
        "position": 0,
        "group": [0, 1],
        "group_name": "0",
        "shapes": [[4]],
        "dtypes": ["float32"],
        "api": None,
        "site": None,
        "static": None,
        "state": "scheduled",
    }
    assert record["divergence"] is None
    assert record["in_flight"] == {"0": waiting, "1": waiting}
    assert (record["collectives_compared"], record["inferred_groups"]) == (1, [])


# --- real dumps, written by forked gloo ranks ------------------------------------------


def _write_dump(rank: int, out: str) -> None:
    import torch

    dump = bytes(torch._C._distributed_c10d._dump_fr_trace())
    Path(out, f"{PREFIX}{rank}").write_bytes(dump)


def _stuck_in_flight(rank: int, world_size: int) -> None:
    """Rank 0 dumps while waiting in an all_reduce rank 1 never issues, as NCCL's dump on
    timeout does (a gloo collective that timed out counts as completed in its dump)."""
    import torch
    import torch.distributed as dist

    tensor, total = torch.ones(4), dist.ReduceOp.SUM
    dist.all_reduce(tensor, op=total)
    if rank == 0:  # the divergence this scenario records, on purpose
        work = dist.all_reduce(tensor, op=total, async_op=True)  # ranklint: ignore[RNK102]
        _write_dump(rank, os.environ["RANKLINT_TEST_DUMPS"])
        work.wait()


def _rank(rank: int, world_size: int, fn: Callable[[int, int], Any], store: str, out: str) -> None:
    """One forked rank: run ``fn`` on gloo, write its Flight Recorder dump, wait for the
    others' (a store key each, no sleep), leave."""
    import torch
    import torch.distributed as dist

    code = 0
    try:
        torch.set_num_threads(1)
        os.environ["RANKLINT_TEST_DUMPS"] = out
        # Long enough that a loaded machine cannot time out the collective rank 0
        # enqueued before its dump is written (a timed-out gloo op reads as completed).
        timeout = datetime.timedelta(seconds=5)
        dist.init_process_group(
            "gloo", init_method=f"file://{store}", rank=rank, world_size=world_size, timeout=timeout
        )
        # The rank left in a collective its peer never issues times out.
        with contextlib.suppress(RuntimeError):
            fn(rank, world_size)
        if not Path(out, f"{PREFIX}{rank}").exists():  # not dumped by ``fn`` itself
            _write_dump(rank, out)
        meet = dist.FileStore(f"{store}.meet", world_size)
        meet.set(f"dumped{rank}", "1")
        meet.wait([f"dumped{r}" for r in range(world_size)], datetime.timedelta(seconds=60))
    except BaseException:
        Path(f"{store}.rank{rank}.error").write_text(traceback.format_exc())
        code = 1
    finally:
        os._exit(code)


def _gloo_dumps(fn: Callable[[int, int], Any], folder: Path, store: Path) -> Path:
    import multiprocessing

    folder.mkdir(parents=True)
    context = multiprocessing.get_context("fork")
    processes = [
        context.Process(target=_rank, args=(rank, 2, fn, str(store), str(folder)), daemon=True)
        for rank in range(2)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(60)
        if process.is_alive():
            process.kill()
    assert [process.exitcode for process in processes] == [0, 0]
    return folder


@pytest.fixture(scope="module")
def real_dumps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Real gloo dumps of a hang, a shape mismatch and a clean run, written once; and
    of a rank that dumped while still waiting in the collective its peer skipped."""
    pytest.importorskip("torch", reason="the dumps come from torch's Flight Recorder")
    from tests import runtime_cases as cases

    root = tmp_path_factory.mktemp("fr-dumps")
    scenarios = {
        "hang": cases.guarded_all_reduce,
        "mismatch": cases.different_shapes,
        "clean": cases.balanced_sum,
        "stuck": _stuck_in_flight,
    }
    return {
        name: _gloo_dumps(fn, root / name, root / f"{name}.store") for name, fn in scenarios.items()
    }


def _site(marker: str) -> str:
    from tests import runtime_cases as cases

    return f"runtime_cases.py:{cases.line_of(marker)}"


@pytest.mark.slow
@pytest.mark.distributed
def test_real_hang_dumps_name_the_guarded_all_reduce_rank_0_is_stuck_in(
    run_cli, real_dumps: dict[str, Path]
) -> None:
    run = run_cli("trace", str(real_dumps["hang"]), cwd=REPO_ROOT)

    lines = run.out.splitlines()
    assert run.code == 1
    assert lines[0] == "ranks diverged at collective #1 on group [0, 1]: rank 1 never issued it"
    assert lines[1].startswith("  rank 0: all_reduce(group=[0, 1], shape=(4,)) at tests/")
    assert lines[1].endswith(f"{_site('guarded')} in guarded_all_reduce()")
    # rank 0's chain (the test's forking helpers), then the static note.
    member = lines[2 : next(i for i, line in enumerate(lines) if line.startswith("  rank 1"))]
    assert member[0].startswith("      called from tests/runtime/test_trace.py:")
    assert member[-1].startswith("      ranklint: RNK102 rank-divergent-collective:")


@pytest.mark.slow
@pytest.mark.distributed
def test_real_dump_taken_while_waiting_shows_the_collective_rank_0_is_stuck_in(
    run_cli, real_dumps: dict[str, Path]
) -> None:
    run = run_cli("trace", "--no-static", str(real_dumps["stuck"]))

    record = json.loads(
        run_cli("trace", "--output-format", "json", "--no-static", str(real_dumps["stuck"])).out
    )
    assert run.code == 1
    # The divergence is at #1, which rank 1 never issues.
    assert run.out.startswith(
        "ranks diverged at collective #1 on group [0, 1]: rank 1 never issued it"
    ), run.out
    # Where rank 0 stood: in #1, scheduled, or started where gloo's worker thread
    # picked it up before the dump (a race that load decides, seen in a CI run); or
    # still in #0 where the recorder had not yet retired it (gloo marks an entry
    # completed later than the caller's wait returns: seen in a CI run on a quiet
    # machine; a 2-rank gloo run polled for 5 s never saw its entry completed).
    stuck = re.compile(
        r"  rank 0: in all_reduce (#1 on group \[0, 1\] \((scheduled|started)"
        r"|#0 on group \[0, 1\] \(scheduled), not"
    )
    assert any(stuck.match(line) for line in run.out.splitlines()), run.out
    # Rank 0 is stuck in #1. Rank 1 may also list its last collective (#0) when its
    # dump races gloo's completion bookkeeping (seen under load), never a later one.
    assert "0" in record["in_flight"]
    assert set(record["in_flight"]) <= {"0", "1"}
    assert "all_reduce #1 " not in next(
        (line for line in run.out.splitlines() if line.startswith("  rank 1: in ")), ""
    )


@pytest.mark.slow
@pytest.mark.distributed
def test_real_mismatch_dumps_report_the_two_shapes(run_cli, real_dumps: dict[str, Path]) -> None:
    run = run_cli("trace", "--output-format", "json", str(real_dumps["mismatch"]), cwd=REPO_ROOT)

    found = json.loads(run.out)["divergence"]
    assert run.code == 1
    assert (found["position"], found["reason"]) == (0, "the ranks disagree on the shape")
    assert {rank: c["shapes"] for rank, c in found["ranks"].items()} == {"0": [[2]], "1": [[3]]}
    assert {c["site"]["line"] for c in found["ranks"].values()} == {
        int(_site("shapes").rpartition(":")[2])
    }


@pytest.mark.slow
@pytest.mark.distributed
def test_real_clean_dumps_agree(run_cli, real_dumps: dict[str, Path]) -> None:
    run = run_cli("trace", str(real_dumps["clean"]))

    assert run.code == 0
    assert run.out.splitlines()[0] == "no divergence across 2 ranks, 1 collective compared"


@pytest.mark.slow
@pytest.mark.distributed
def test_gloo_mode_and_trace_read_a_real_dump_alike(real_dumps: dict[str, Path]) -> None:
    from ranklint.runtime import _torch

    data = (real_dumps["hang"] / f"{PREFIX}0").read_bytes()

    ops = _torch.read_flight_recorder(data)

    assert [traced.op for traced in flight_recorder.read_dump(data, 0, "x").ops] == ops
    assert [op.op for op in ops] == ["all_reduce", "all_reduce"]


def _fr_trace(folder: Path, tmp_path: Path) -> str:
    """torch's analyzer on a copy of ``folder`` whose dumps carry the pg_config an NCCL
    job writes (gloo leaves it empty, and fr_trace then stops on a KeyError)."""
    copy = tmp_path / folder.name
    shutil.copytree(folder, copy)
    for path in copy.iterdir():
        dump = pickle.loads(path.read_bytes())
        dump["pg_config"] = {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1]"}}
        path.write_bytes(pickle.dumps(dump))
    module = "torch.distributed.flight_recorder.fr_trace"
    result = run_subprocess(sys.executable, "-m", module, str(copy), "-p", PREFIX, cwd=tmp_path)
    return result.stdout + result.stderr


@pytest.mark.slow
@pytest.mark.distributed
def test_torch_fr_trace_agrees_on_the_hang_the_mismatch_and_the_clean_run(
    run_cli, real_dumps: dict[str, Path], tmp_path: Path
) -> None:
    pytest.importorskip("torch.distributed.flight_recorder.fr_trace")

    hang = _fr_trace(real_dumps["hang"], tmp_path)
    mismatch = _fr_trace(real_dumps["mismatch"], tmp_path)
    clean = _fr_trace(real_dumps["clean"], tmp_path)
    ours = run_cli("trace", "--output-format", "json", str(real_dumps["mismatch"]))

    # fr_trace numbers collectives from 1 (collective_seq_id); the diff from 0.
    position = json.loads(ours.out)["divergence"]["position"]
    assert f"Collective sequence number: {position + 1} has errors" in mismatch
    assert "SIZE_OR_SYNTAX_MISMATCH" in mismatch
    assert "has errors" not in clean
    # ranklint: "ranks diverged at collective #1 ...: rank 1 never issued it".
    assert "Not all ranks joining collective, sequence number: 2" in hang
    assert "missing ranks: {1}" in hang


def test_folder_with_a_given_prefix_ending_in_a_digit_reads_the_ranks_after_it(
    tmp_path: Path,
) -> None:
    from ranklint.runtime.trace import find_dumps

    for rank in (0, 1):
        (tmp_path / f"run7{rank}").write_bytes(b"x")
    (tmp_path / "run7x").write_bytes(b"x")

    found = find_dumps([str(tmp_path)], prefix="run7")

    assert [(rank, path.name) for rank, path in found] == [(0, "run70"), (1, "run71")]
