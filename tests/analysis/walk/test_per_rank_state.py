"""Tests of per-rank state: files a function writes, objects a rank gathers (RNK102)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ranklint.analysis.walk.bodies import gathered_objects, written_paths
from ranklint.analysis.walk.names import NameTable
from tests.conftest import codes_by_line, findings_of

SELECT = ("RNK102",)


def _written(source: str) -> frozenset[str]:
    module = cst.parse_module(textwrap.dedent(source))
    table = NameTable()
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            small = statement.body[0]
            if isinstance(small, (cst.Import, cst.ImportFrom)):
                table.bind_import_statement(small)
    function = next(s for s in module.body if isinstance(s, cst.FunctionDef))
    return written_paths(function, table)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('with open(path, "w") as f:\n                f.write(s)', {"path"}),
        ('open(path, mode="wb")', {"path"}),
        ('open(file=out, mode="a")', {"out"}),
        ('open(path, "x")', {"path"}),
        ('open(path, "rb")', set()),
        ("open(path)", set()),
        ("torch.save(state, ckpt_path)", {"ckpt_path"}),
        ("shutil.copy(src, dst)", {"dst"}),
        ("os.makedirs(cache_dir, exist_ok=True)", {"cache_dir"}),
        ("os.replace(tmp, final)", {"final"}),
        ("Path(p).write_text(s)", {"Path(p)"}),
        ("target.touch()", {"target"}),
        ("torch.load(path)", set()),
        ("os.path.join(a, b)", set()),
    ],
)
def test_written_paths_names_the_path_each_writing_call_creates(
    body: str, expected: set[str]
) -> None:
    source = f"""
        import os
        import shutil
        import torch
        from pathlib import Path


        def f(path, src, dst, cache_dir, tmp, final, p, s, target, state, ckpt_path, out, a, b):
            {body}
    """

    assert _written(source) == expected


def test_written_paths_leaves_out_nested_functions() -> None:
    source = """
        def f(path):
            def later():
                open(path, "w")
            return later
    """

    assert _written(source) == frozenset()


def test_written_paths_ignores_a_local_named_open() -> None:
    function = cst.parse_statement('def f(path, open):\n    open(path, "w")\n')
    table = NameTable()
    table.bind_other("open")

    assert written_paths(function, table) == frozenset()


def _lines(source: str) -> list[int]:
    return [line for line, _ in codes_by_line(textwrap.dedent(source).lstrip(), select=SELECT)]


def test_barrier_behind_a_test_of_a_file_rank_zero_writes_is_reported() -> None:
    source = """
        import os

        import torch.distributed as dist


        def cache(path, text):
            if not os.path.isfile(path):
                if dist.get_rank() == 0:
                    with open(path, "w") as f:
                        f.write(text)
                dist.barrier()
    """

    assert _lines(source) == [11]


def test_test_of_a_file_the_function_only_reads_is_uniform() -> None:
    source = """
        import os

        import torch
        import torch.distributed as dist


        def load(checkpoint):
            if os.path.isfile(checkpoint):
                raise ValueError("expected a folder")
            if not os.path.exists(checkpoint):
                return None
            dist.barrier()
            return torch.load(checkpoint)
    """

    assert _lines(source) == []


def test_early_exit_on_a_written_file_says_why_the_ranks_disagree() -> None:
    source = """
        import os

        import torch
        import torch.distributed as dist


        def save(state, path):
            if os.path.exists(path):
                return
            if dist.get_rank() == 0:
                torch.save(state, path)
            dist.barrier()
    """
    [finding] = findings_of(textwrap.dedent(source).lstrip(), select=SELECT)

    assert finding.line == 12
    assert "(this function writes that path on some ranks" in finding.message


def _gathered(source: str) -> frozenset[str]:
    module = cst.parse_module(textwrap.dedent(source))
    table = NameTable()
    for statement in (
        "import torch.distributed as dist",
        "from torch.distributed import all_gather_object as gather_all",
    ):
        table.bind_import_statement(cst.parse_statement(statement).body[0])
    function = next(s for s in module.body if isinstance(s, cst.FunctionDef))
    return gathered_objects(function, table)


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("dist.all_gather_object(out, metrics)", {"metrics"}),
        ("dist.all_gather_object(out, obj=self.stats)", {"self.stats"}),
        ("dist.gather_object(metrics, out, dst=0)", {"metrics"}),
        ("dist.gather_object(obj=metrics)", {"metrics"}),
        ("dist.all_gather_object(out, make())", set()),
        ("dist.broadcast_object_list(out, src=0)", set()),
        ("other.all_gather_object(out, metrics)", set()),
        # Renamed by an import, or reached through the module that defines it.
        ("gather_all(out, metrics)", {"metrics"}),
        ("dist.distributed_c10d.all_gather_object(out, metrics)", {"metrics"}),
        ("dist.all_gather_object.__wrapped__(out, metrics)", set()),
    ],
)
def test_gathered_objects_names_what_each_rank_contributes(call: str, expected: set[str]) -> None:
    assert _gathered(f"def f(out, metrics, obj):\n    {call}\n") == expected


def test_early_return_on_the_object_a_rank_then_gathers_is_reported() -> None:
    # https://github.com/bo-ke/llm-internal-medicine/pull/45
    source = """
        import torch.distributed as dist


        def gather_metrics(local_metrics):
            if not local_metrics:
                return {}
            gathered = [None] * dist.get_world_size()
            dist.all_gather_object(gathered, local_metrics)
            return gathered
    """

    assert _lines(source) == [8]


def test_test_of_another_value_before_an_object_gather_is_uniform() -> None:
    source = """
        import torch.distributed as dist


        def gather_metrics(local_metrics, enabled):
            if not enabled:
                return {}
            gathered = [None] * dist.get_world_size()
            dist.all_gather_object(gathered, local_metrics)
            return gathered
    """

    assert _lines(source) == []


def test_gathered_objects_leave_out_nested_functions() -> None:
    source = (
        "def f(out, metrics):\n    def later():\n        dist.all_gather_object(out, metrics)\n"
    )

    assert _gathered(source) == frozenset()


def test_written_paths_skip_unpacked_arguments() -> None:
    source = """
        import shutil


        def f(pair, dst):
            shutil.copy(*pair, dst)
    """

    assert _written(source) == frozenset()


def test_test_of_a_written_path_spelled_with_spaces_matches_its_write() -> None:
    source = """
        import os

        import torch.distributed as dist


        def cache(folder, text):
            if not os.path.isfile(os.path.join(folder, "x.py")):
                if dist.get_rank() == 0:
                    with open(os.path.join(folder,  "x.py"), "w") as f:
                        f.write(text)
                dist.barrier()
    """

    assert _lines(source) == [11]
