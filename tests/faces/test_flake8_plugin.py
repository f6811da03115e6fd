"""The flake8 face, run through real flake8: same lines as the CLI, same suppressions."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from ranklint.api import LintResult
from ranklint.faces.flake8_plugin import RanklintFlake8Plugin, _config_in
from ranklint.findings import InternalError
from tests.conftest import FIXTURES, run_subprocess, write

pytest.importorskip("flake8", reason="flake8 is a test extra")

SAMPLE = """\
import torch.distributed as dist
from torch.distributed import *

dist.init_process_group("gloo")
GROUP = dist.new_group(
    ranks=[0, 1],
)  # noqa: RNK101
MESH = dist.new_group([0])  # ranklint: ignore[RNK101]
CAFÉ = 1 if True else dist.new_group([1])
OP = ReduceOp
"""


def flake8_lines(cwd: Path, *args: str) -> list[str]:
    result = run_subprocess(
        sys.executable, "-m", "flake8", "--isolated", "--select", "RNK", *args, cwd=cwd
    )
    assert result.returncode in (0, 1), result.stderr
    return sorted(result.stdout.splitlines())


def cli_lines(cwd: Path, *args: str) -> list[str]:
    result = run_subprocess(
        sys.executable, "-m", "ranklint", "check", "--output-format", "concise", *args, cwd=cwd
    )
    assert result.returncode in (0, 1), result.stderr
    # Call-chain trace lines are indented under their finding; flake8 has none.
    return sorted(line for line in result.stdout.splitlines() if not line.startswith(" "))


def test_flake8_prints_the_same_lines_as_the_cli_run_file_by_file_on_the_fixtures() -> None:
    # flake8 hands plugins one file at a time: call chains into other files are
    # the CLI's (documented); file by file, both faces agree exactly.
    paths = [str(path.relative_to(FIXTURES)) for path in sorted(FIXTURES.rglob("*.py"))]

    from_flake8 = flake8_lines(FIXTURES, *paths)
    from_cli = sorted(line for path in paths for line in cli_lines(FIXTURES, path))

    assert from_flake8 == from_cli
    assert len(from_cli) >= 4


def test_flake8_honours_the_same_suppressions_and_columns_as_the_cli(tmp_path: Path) -> None:
    write(tmp_path / "sample.py", SAMPLE)

    from_flake8 = flake8_lines(tmp_path, "sample.py")
    from_cli = cli_lines(tmp_path, "sample.py")

    assert from_flake8 == from_cli
    assert [line.split(" ", 2)[:2] for line in from_cli] == [
        ["sample.py:2:1:", "RNK301"],
        ["sample.py:4:1:", "RNK101"],
        ["sample.py:9:23:", "RNK101"],
    ]


@pytest.mark.parametrize(
    "comment", ["# noqa: RNK1", "# noqa: rnk111", "# noqa: RNK111", "# noqa: RNK2", ""]
)
def test_flake8_and_the_cli_give_a_suppression_comment_one_meaning(
    tmp_path: Path, comment: str
) -> None:
    # RNK111 (import-time distributed state, opt-in): suppressed by its code, its
    # prefix and its lower-case spelling in both faces, by another prefix in neither.
    source = f"import torch.distributed as dist\n\nRANK = dist.get_rank()  {comment}\n"
    write(tmp_path / "state.py", source)
    write(tmp_path / "pyproject.toml", '[tool.ranklint]\nextend-select = ["RNK111"]\n')

    from_flake8 = flake8_lines(tmp_path, "state.py")
    from_cli = cli_lines(tmp_path, "state.py")

    assert from_flake8 == from_cli
    suppressed = comment not in ("", "# noqa: RNK2")
    assert [line.split(" ", 2)[1] for line in from_cli] == ([] if suppressed else ["RNK111"])


def test_flake8_parallel_mode_prints_what_serial_mode_prints(tmp_path: Path) -> None:
    for index in range(6):
        write(tmp_path / f"m{index}.py", SAMPLE)

    serial = flake8_lines(tmp_path, "-j", "1", ".")
    parallel = flake8_lines(tmp_path, "-j", "2", ".")

    assert serial == parallel
    assert len(serial) == 18


def test_bad_ranklint_config_under_flake8_is_one_clear_error(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.ranklint]\nselec = 1\n")
    write(tmp_path / "a.py", "from os import *; sep\n")

    result = run_subprocess(
        sys.executable, "-m", "flake8", "--isolated", "--select", "RNK", "a.py", cwd=tmp_path
    )
    output = result.stdout + result.stderr

    assert result.returncode != 0
    assert "unknown key 'selec' (did you mean 'select'?)" in output
    assert "Traceback" not in output


def test_plugin_yields_flake8_tuples_with_zero_based_columns_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # In-process (the other tests run real flake8): what flake8 receives from the plugin.
    monkeypatch.chdir(tmp_path)
    _config_in.cache_clear()
    source = (
        "import torch.distributed as dist\n\n\ndef f():\n    pass\n\n\n    \ndist.new_group()\n"
    )
    lines = source.splitlines(keepends=True)

    plugin = RanklintFlake8Plugin(ast.parse(source), "m.py", lines)
    found = list(plugin.run())

    assert len(found) == 1
    line, col, text, kind = found[0]
    assert (line, col, kind) == (9, 0, RanklintFlake8Plugin)
    assert text.startswith("RNK101 ")
    assert "runs when this module is imported" in text


def test_plugin_raises_on_an_internal_error_with_the_error_described(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _config_in.cache_clear()
    broken = InternalError("m.py", "rule RNK101 (import-time-process-group)", "boom", "trace")
    monkeypatch.setattr(
        "ranklint.faces.flake8_plugin.lint_source",
        lambda *args, **kwargs: LintResult(findings=[], errors=[broken], files_checked=1),
    )

    with pytest.raises(RuntimeError) as info:
        RanklintFlake8Plugin(ast.parse("x = 1\n"), "m.py", ["x = 1\n"])

    assert str(info.value) == broken.describe()


_UNMARKED_TEST = "import torch\n\n\ndef test_on_gpu():\n    torch.ones(2, device='cuda')\n"


@pytest.mark.parametrize(
    ("filename", "expected"), [("tests/test_gpu.py", ["RNK603"]), ("gpu.py", [])]
)
def test_plugin_lints_under_the_file_name_flake8_gives_and_the_project_selection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, filename: str, expected: list[str]
) -> None:
    write(tmp_path / "pyproject.toml", '[tool.ranklint]\nselect = ["RNK6"]\n')
    monkeypatch.chdir(tmp_path)
    _config_in.cache_clear()
    source = _UNMARKED_TEST + "from os import *; sep\n"  # RNK301: not selected

    plugin = RanklintFlake8Plugin(ast.parse(source), filename, source.splitlines(keepends=True))

    assert [text.split()[0] for _, _, text, _ in plugin.run()] == expected


def test_plugin_raises_with_every_internal_error_joined(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _config_in.cache_clear()
    errors = [
        InternalError("m.py", "rule RNK101", "one"),
        InternalError("m.py", "rule RNK301", "two"),
    ]
    monkeypatch.setattr(
        "ranklint.faces.flake8_plugin.lint_source",
        lambda *args, **kwargs: LintResult(findings=[], errors=errors, files_checked=1),
    )

    with pytest.raises(RuntimeError) as info:
        RanklintFlake8Plugin(ast.parse("x = 1\n"), "m.py", ["x = 1\n"])

    assert str(info.value) == f"{errors[0].describe()}; {errors[1].describe()}"


_MESH_USER = """\
from torch.distributed.device_mesh import init_device_mesh


def build(world):
    mesh = init_device_mesh("cuda", (2, 4), ("dp", "tp", "pp"))
    return mesh, world


def shard(device_mesh):
    return device_mesh["zz_shard"], device_mesh["zz_nowhere"]
"""
_MESH_HELPER = """\
from torch.distributed.device_mesh import init_device_mesh


def build(world):
    return init_device_mesh("cuda", (world,), mesh_dim_names=("zz_shard",))
"""


def test_plugin_stays_silent_on_mesh_dimensions_another_file_may_declare_but_keeps_shape_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One file of a larger project: "zz_shard" and "zz_nowhere" may be declared elsewhere.
    write(tmp_path / "pyproject.toml", '[tool.ranklint]\nselect = ["RNK507"]\n')
    monkeypatch.chdir(tmp_path)
    _config_in.cache_clear()
    lines = _MESH_USER.splitlines(keepends=True)

    plugin = RanklintFlake8Plugin(ast.parse(_MESH_USER), "model.py", lines)

    assert [(line, text.split()[0]) for line, _, text, _ in plugin.run()] == [(5, "RNK507")]


def test_flake8_reports_no_mesh_dimension_the_project_declares_where_the_cli_reports_the_undeclared(
    tmp_path: Path,
) -> None:
    write(tmp_path / "pyproject.toml", '[tool.ranklint]\nselect = ["RNK507"]\n')
    write(tmp_path / "pkg" / "__init__.py", "")
    write(tmp_path / "pkg" / "model.py", _MESH_USER)
    write(tmp_path / "pkg" / "parallel.py", _MESH_HELPER)

    from_flake8 = flake8_lines(tmp_path, "pkg")
    from_cli = cli_lines(tmp_path, "pkg")

    assert [line.split(" ")[:2] for line in from_flake8] == [["pkg/model.py:5:12:", "RNK507"]]
    assert [line.split(" ")[:2] for line in from_cli] == [  # sorted as text
        ["pkg/model.py:10:37:", "RNK507"],
        ["pkg/model.py:5:12:", "RNK507"],
    ]


def test_plugin_run_in_process_from_another_directory_uses_that_directorys_selection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An earlier in-process run elsewhere must not leak its [tool.ranklint] selection.
    narrow, plain = tmp_path / "narrow", tmp_path / "plain"
    write(narrow / "pyproject.toml", '[tool.ranklint]\nselect = ["RNK6"]\n')
    plain.mkdir()
    source = "import torch.distributed as dist\ndist.init_process_group('gloo')\n"
    lines = source.splitlines(keepends=True)
    monkeypatch.chdir(narrow)
    narrow_codes = [
        t.split()[0] for _, _, t, _ in RanklintFlake8Plugin(ast.parse(source), "m.py", lines).run()
    ]
    monkeypatch.chdir(plain)

    plain_codes = [
        t.split()[0] for _, _, t, _ in RanklintFlake8Plugin(ast.parse(source), "m.py", lines).run()
    ]

    assert (narrow_codes, plain_codes) == ([], ["RNK101"])


def test_broken_ranklint_config_does_not_break_flake8_runs_without_rnk(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.ranklint]\nselec = 1\n")
    write(tmp_path / "a.py", "import os\n")

    result = run_subprocess(
        sys.executable, "-m", "flake8", "--isolated", "--select", "F", "a.py", cwd=tmp_path
    )

    assert result.returncode == 1
    assert result.stdout.splitlines() == ["a.py:1:1: F401 'os' imported but unused"]
    assert "ranklint" not in result.stdout + result.stderr


def test_flake8_applies_ranklint_per_file_ignores_but_not_its_excludes(tmp_path: Path) -> None:
    write(
        tmp_path / "pyproject.toml",
        "[tool.ranklint]\n"
        'per-file-ignores = { "quiet/*" = ["RNK101"] }\n'
        'extend-exclude = ["loud/"]\n',
    )
    source = "import torch.distributed as dist\ndist.init_process_group()\n"
    write(tmp_path / "quiet" / "a.py", source)
    write(tmp_path / "loud" / "b.py", source)

    lines = flake8_lines(tmp_path, "quiet/a.py", "loud/b.py")

    assert [line.split(":")[0] for line in lines] == ["loud/b.py"]


def test_covers_rnk_reads_flake8_selectors() -> None:
    from ranklint.faces.flake8_plugin import _covers_rnk

    assert [_covers_rnk(c) for c in ("RNK", "R", "rnk1", "ALL", "E", "RN1", "F")] == [
        True,
        True,
        True,
        True,
        False,
        False,
        False,
    ]


def test_flake8_uses_each_files_nearest_configuration_like_the_cli(tmp_path: Path) -> None:
    bug = "import torch.distributed as dist\n\nGROUP = dist.new_group([0, 1])\n"
    write(tmp_path / "pyproject.toml", "[tool.ranklint]\n")
    write(tmp_path / "root_job.py", bug)
    write(tmp_path / "trainer" / "ranklint.toml", "ignore = ['RNK101']\n")
    write(tmp_path / "trainer" / "job.py", bug)

    lines = flake8_lines(tmp_path, ".")

    assert [line.split(":")[0] for line in lines] == ["./root_job.py"]
    assert sorted(cli_lines(tmp_path, ".")) == [line.removeprefix("./") for line in lines]
