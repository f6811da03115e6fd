"""The adapter to torch's private APIs fails loudly when they move."""

from __future__ import annotations

import pickle

import pytest

pytest.importorskip("torch", reason="the runtime companion needs torch")

from ranklint.runtime import _torch


def test_threads_api_on_this_torch_has_every_piece() -> None:
    api = _torch.threads_api()

    assert sorted(api.ops) == sorted(_torch._OP_CLASSES)
    assert _torch.threads_available()


def test_threads_api_missing_piece_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from torch.testing._internal.distributed import multi_threaded_pg

    monkeypatch.delattr(multi_threaded_pg, "AllReduce")

    with pytest.raises(_torch.TorchAdapterError, match=r"multi_threaded_pg\.AllReduce"):
        _torch.threads_api()
    assert not _torch.threads_available()


def test_flight_recorder_dump_without_entries_is_an_adapter_error() -> None:
    with pytest.raises(_torch.TorchAdapterError, match="Flight Recorder dump"):
        _torch.read_flight_recorder(pickle.dumps({"version": "9"}))


def test_flight_recorder_entry_missing_a_field_is_an_adapter_error() -> None:
    dump = pickle.dumps({"entries": [{"process_group": ("0", "default_pg")}]})

    with pytest.raises(_torch.TorchAdapterError, match="collective_seq_id"):
        _torch.read_flight_recorder(dump)


def test_flight_recorder_entries_become_ops_and_scatter_compares_its_output() -> None:
    entry = {
        "process_group": ("3", "undefined"),
        "collective_seq_id": 2,
        "profiling_name": "gloo:scatter",
        "input_sizes": [[2, 2], [2, 2]],
        "input_dtypes": ["Float"],
        "output_sizes": [[2, 2]],
        "output_dtypes": ["Float"],
        "frames": [{"filename": "/a.py", "line": 3, "name": "f"}],
        "is_p2p": False,
    }
    p2p = {**entry, "is_p2p": True}

    ops = _torch.read_flight_recorder(pickle.dumps({"entries": [entry, p2p]}))

    assert ops == [
        _torch.RecordedOp("3", 2, "scatter", ((2, 2),), ("float",), (("/a.py", 3, "f"),))
    ]


def test_this_torch_records_collectives_in_flight_recorder() -> None:
    """The gloo mode's source: a real dump of this process (no group: no entries)."""
    ops = _torch.read_flight_recorder(_torch.dump_flight_recorder())

    assert isinstance(ops, list)
