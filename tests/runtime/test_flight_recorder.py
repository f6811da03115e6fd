"""Reading Flight Recorder dumps without torch: the restricted unpickler and the fields.

Hand-built dumps shaped like torch's, pickled; ``tests/runtime/test_trace.py``
reads real ones that gloo ranks write.
"""

from __future__ import annotations

import io
import os
import pickle
from typing import Any

import pytest

from ranklint.runtime import flight_recorder as fr


def _entry(seq: int = 1, op: str = "all_reduce", **fields: Any) -> dict[str, Any]:
    """One collective's entry with the fields torch writes; ``fields`` override them."""
    entry: dict[str, Any] = {
        "pg_id": 0,
        "process_group": ("0", "default_pg"),
        "collective_seq_id": seq,
        "profiling_name": f"nccl:{op}",
        "time_created_ns": 5000 + seq,
        "input_sizes": [[4, 2]],
        "input_dtypes": ["Float"],
        "output_sizes": [[4, 2]],
        "output_dtypes": ["Float"],
        "state": "scheduled",
        "retired": False,
        "is_p2p": False,
        "frames": [{"filename": "/job/train.py", "line": 7, "name": "step"}],
    }
    entry.update(fields)
    return entry


def _dump(entries: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    return {"version": "2.10", "pg_config": {}, "pg_status": {}, "entries": entries, **fields}


def _read(dump: Any, rank: int | None = 0, source: str = "/dumps/rank0") -> fr.RankDump:
    return fr.read_dump(pickle.dumps(dump), rank, source)


def _error(dump: Any, rank: int | None = 0) -> str:
    with pytest.raises(fr.DumpError) as caught:
        _read(dump, rank)
    return str(caught.value)


# --- the restricted unpickler -------------------------------------------------------


class _Calls:
    """Unpickled by plain pickle, this would call ``function(*args)``."""

    def __init__(self, function: Any, *args: Any) -> None:
        self.call = (function, args)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return self.call


@pytest.mark.parametrize(
    ("payload", "protocol", "named"),
    [
        (_Calls(eval, "1"), 5, "builtins.eval"),
        (_Calls(eval, "1"), 2, "__builtin__.eval"),
        (_Calls(getattr, 1, "real"), 5, "builtins.getattr"),
        (_Calls(os.system, "true"), 5, f"{os.system.__module__}.system"),
        (_Calls(dict, [("a", 1)]), 5, "builtins.dict"),
        (_Calls(set, [1]), 5, None),  # allowed: the controls
        (_Calls(frozenset, [1]), 2, None),
    ],
)
def test_unpickler_refuses_every_global_but_set_and_frozenset_with_the_exact_reason(
    payload: Any, protocol: int, named: str | None
) -> None:
    data = pickle.dumps({"entries": [payload]}, protocol=protocol)

    if named is None:
        assert fr.loads_restricted(data) == {"entries": [payload.call[0]([1])]}
        return
    with pytest.raises(fr.UnsafeDumpError) as caught:
        fr.loads_restricted(data)
    assert str(caught.value) == (
        f"the pickle names the global {named}; a Flight Recorder dump holds only builtin "
        "containers and scalars, so it was not unpickled (unpickling runs code)"
    )


def test_unpickler_refuses_a_persistent_id_with_the_reason() -> None:
    class _Persistent(pickle.Pickler):
        def persistent_id(self, obj: Any) -> str | None:
            return "ref" if obj == "external" else None

    buffer = io.BytesIO()
    _Persistent(buffer).dump({"entries": ["external"]})

    with pytest.raises(fr.UnsafeDumpError) as caught:
        fr.loads_restricted(buffer.getvalue())
    assert str(caught.value) == "the pickle holds a persistent id; not a Flight Recorder dump"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"not a pickle at all", "not a pickle (UnpicklingError: invalid load key, 'n'.)"),
        (b"", "not a pickle (EOFError: Ran out of input)"),
    ],
)
def test_bytes_that_are_not_a_pickle_name_the_unpicklers_error(data: bytes, message: str) -> None:
    with pytest.raises(fr.DumpError) as caught:
        fr.loads_restricted(data)

    assert str(caught.value) == message


# --- one entry ------------------------------------------------------------------------


def test_entry_is_read_into_op_shapes_lowercase_dtypes_frames_and_time() -> None:
    entry = _entry(
        3,
        input_sizes=[[4, 2], [1]],
        input_dtypes=["Float", "BFloat16"],
        frames=[
            {"filename": "/torch/c10d.py", "line": 1, "name": "all_reduce"},
            {"filename": "/job/train.py", "line": 7, "name": "step"},
        ],
    )

    assert fr.recorded_op(entry) == fr.RecordedOp(
        group_name="0",
        seq=3,
        op="all_reduce",
        shapes=((4, 2), (1,)),
        dtypes=("float", "bfloat16"),
        frames=(("/torch/c10d.py", 1, "all_reduce"), ("/job/train.py", 7, "step")),
        time_ns=5003,
    )


@pytest.mark.parametrize("time", [None, 0])
def test_entry_without_a_creation_time_has_time_0(time: int | None) -> None:
    op = fr.recorded_op(_entry(time_created_ns=time))

    assert op is not None
    assert op.time_ns == 0


def test_entry_without_a_creation_time_field_has_time_0() -> None:
    entry = _entry()
    del entry["time_created_ns"]

    op = fr.recorded_op(entry)

    assert op is not None
    assert op.time_ns == 0


def test_op_name_is_the_part_of_profiling_name_after_its_last_colon() -> None:
    op = fr.recorded_op(_entry(profiling_name="pg:nccl:all_gather"))

    assert op is not None
    assert op.op == "all_gather"


def test_scatter_takes_its_output_sizes_and_dtypes_which_every_rank_shares() -> None:
    non_root = _entry(
        op="scatter",
        input_sizes=[],
        input_dtypes=[],
        output_sizes=[[3]],
        output_dtypes=["Long"],
    )

    op = fr.recorded_op(non_root)

    assert op is not None
    assert (op.shapes, op.dtypes) == (((3,),), ("long",))


def test_other_collectives_take_their_input_sizes_and_dtypes() -> None:
    gather = _entry(
        op="all_gather",
        input_sizes=[[2]],
        input_dtypes=["Half"],
        output_sizes=[[4]],
        output_dtypes=["Float"],
    )

    op = fr.recorded_op(gather)

    assert op is not None
    assert (op.shapes, op.dtypes) == (((2,),), ("half",))


def test_entry_missing_a_field_names_every_required_field() -> None:
    entry = _entry()
    del entry["frames"]

    with pytest.raises(fr.DumpError) as caught:
        fr.recorded_op(entry)
    assert str(caught.value) == (
        "Flight Recorder entries with the fields process_group, collective_seq_id, "
        "profiling_name, input_sizes, input_dtypes, frames"
    )


def test_point_to_point_entries_are_skipped_and_collectives_kept_in_order() -> None:
    entries = [_entry(1), _entry(0, "send", is_p2p=True), _entry(2, "broadcast")]

    ops = fr.recorded_ops(entries)

    assert fr.recorded_op(entries[1]) is None
    assert [(op.seq, op.op) for op in ops] == [(1, "all_reduce"), (2, "broadcast")]


# --- a whole dump -------------------------------------------------------------------


def test_dump_keeps_rank_source_version_and_the_collectives_after_a_p2p_entry() -> None:
    dump = _dump([_entry(0, "recv", is_p2p=True), _entry(1), _entry(2, "broadcast")])

    read = _read(dump, rank=3, source="/dumps/rank3")

    assert (read.rank, read.source, read.version) == (3, "/dumps/rank3", "2.10")
    assert [(t.op.seq, t.op.op) for t in read.ops] == [(1, "all_reduce"), (2, "broadcast")]


def test_dump_without_a_version_has_an_empty_version() -> None:
    dump = _dump([])
    del dump["version"]

    assert _read(dump).version == ""


@pytest.mark.parametrize(
    ("fields", "state", "completed"),
    [
        ({"state": "completed"}, "completed", True),
        ({"state": "started"}, "started", False),
        ({"state": "scheduled", "retired": True}, "scheduled", True),
        ({"state": None}, "", False),
    ],
)
def test_entry_state_and_retired_decide_whether_it_completed(
    fields: dict[str, Any], state: str, completed: bool
) -> None:
    (traced,) = _read(_dump([_entry(1, **fields)])).ops

    assert (traced.state, traced.completed) == (state, completed)


@pytest.mark.parametrize(
    ("status", "completed"),
    [
        ({"0": {"last_completed_collective": 2}}, [True, True, False]),
        ({"0": {"last_completed_collective": 0}}, [False, False, False]),
        ({"0": {"last_enqueued_collective": 3}}, [False, False, False]),
        ({"1": {"last_completed_collective": 3}}, [False, False, False]),
        ({}, [False, False, False]),
        ("not a mapping", [False, False, False]),
    ],
)
def test_pg_status_completes_the_entries_up_to_its_group_last_completed_collective(
    status: Any, completed: list[bool]
) -> None:
    dump = _dump([_entry(seq) for seq in (1, 2, 3)], pg_status=status)

    assert [traced.completed for traced in _read(dump).ops] == completed


@pytest.mark.parametrize(
    ("group", "desc"),
    [(("0", "default_pg"), "default_pg"), (["3", "undefined"], "undefined"), (("0",), "")],
)
def test_group_description_is_the_process_groups_second_field_where_it_has_one(
    group: Any, desc: str
) -> None:
    (traced,) = _read(_dump([_entry(process_group=group)])).ops

    assert (traced.op.group_name, traced.group_desc) == (group[0], desc)


def test_pg_config_gives_each_named_group_its_ranks_from_a_string_or_a_list() -> None:
    config = {
        "0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1, 2, 3]"},
        "1": "not a mapping",
        "2": {"name": "pg_even", "ranks": [0, 2]},
        "3": {"ranks": ("1", "3")},
        "4": {"name": "gloo_like", "ranks": "[]"},
        "5": {"name": "no_ranks"},
    }

    groups = _read(_dump([], pg_config=config)).groups

    assert groups == {"0": (0, 1, 2, 3), "pg_even": (0, 2), "3": (1, 3)}


@pytest.mark.parametrize("config", [None, "[0, 1]", [{"name": "0", "ranks": [0, 1]}]])
def test_pg_config_that_is_not_a_mapping_names_no_groups(config: Any) -> None:
    assert _read(_dump([], pg_config=config)).groups == {}


@pytest.mark.parametrize(
    ("dump", "message"),
    [
        ({"version": "2.10"}, "not a Flight Recorder dump (no list of 'entries')"),
        ([1, 2], "not a Flight Recorder dump (no list of 'entries')"),
        (
            _dump([_entry(collective_seq_id="first")]),
            "a malformed entry (ValueError: invalid literal for int() with base 10: 'first')",
        ),
        (_dump([_entry(frames=[{"filename": "a.py"}])]), "a malformed entry (KeyError: 'line')"),
    ],
)
def test_data_that_is_not_a_dump_raises_dump_error_with_the_reason(dump: Any, message: str) -> None:
    assert _error(dump) == message


def test_rank_comes_from_the_dump_when_the_file_name_has_none() -> None:
    assert _read({**_dump([]), "rank": 5}, rank=None).rank == 5
    assert _read({**_dump([]), "rank": 5}, rank=2).rank == 2


@pytest.mark.parametrize("named", [None, "5", 5.0])
def test_dump_naming_no_integer_rank_and_a_file_name_without_one_is_refused(named: Any) -> None:
    dump = _dump([]) if named is None else {**_dump([]), "rank": named}

    assert _error(dump, rank=None) == (
        "no rank: neither the file name ends in one nor the dump names one"
    )


def test_as_collective_keeps_the_root_and_reduce_op_the_wrappers_recorded() -> None:
    from ranklint.runtime.flight_recorder import RecordedOp, as_collective

    op = RecordedOp("1", 3, "broadcast", ((4,),), ("float",), (("/w/train.py", 9, "step"),))

    collective = as_collective(op, (2, 3), 5, roots=(), root=3, reduce_op="AVG")

    assert (collective.group, collective.seq, collective.dtypes) == ((2, 3), 5, ("float32",))
    assert (collective.root, collective.reduce_op) == (3, "AVG")
    assert (collective.site.file, collective.site.line) == ("/w/train.py", 9)
