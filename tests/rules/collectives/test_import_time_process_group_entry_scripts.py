"""RNK101 in entry scripts: reported only when another file of the run imports them."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ranklint import Config, lint_paths, lint_source
from ranklint.testing import expected_findings

pytestmark = pytest.mark.timeout(30)

_SCRIPT = """
    import argparse

    import torch.distributed as dist

    parser = argparse.ArgumentParser()
    args = parser.parse_args()
    dist.init_process_group("gloo"){mark}
    group = dist.new_group([0, 1]){mark}
"""

_GUARDED = """
    import torch.distributed as dist

    dist.init_process_group("gloo"){mark}


    def main():
        pass


    if __name__ == "__main__":
        main()
"""


def _run(root: Path, files: dict[str, str]) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    expected: list[tuple[str, int]] = []
    for name, text in files.items():
        source = textwrap.dedent(text).lstrip()
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
        expected += [(name, line) for line, code in expected_findings(source) if code == "RNK101"]
    result = lint_paths([root], Config(select=("RNK101",), root=root), jobs=1)
    assert result.errors == []
    found = [(Path(f.path).relative_to(root).as_posix(), f.line) for f in result.findings]
    return sorted(found), sorted(expected)


@pytest.mark.parametrize("script", [_SCRIPT, _GUARDED])
def test_script_that_nothing_imports_is_not_reported(tmp_path: Path, script: str) -> None:
    found, expected = _run(
        tmp_path,
        {"train.py": script.format(mark=""), "model.py": "import torch\n"},
    )

    assert found == expected == []


@pytest.mark.parametrize(
    "importer",
    [
        "import train\n",
        "from train import group\n",
        "def load():\n    import train\n",
    ],
)
def test_script_that_another_file_imports_is_reported(tmp_path: Path, importer: str) -> None:
    found, expected = _run(
        tmp_path,
        {"train.py": _SCRIPT.format(mark="  # expect: RNK101"), "use.py": importer},
    )

    assert found == expected


def test_script_imported_relatively_from_its_package_is_reported(tmp_path: Path) -> None:
    found, expected = _run(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/launch.py": _GUARDED.format(mark="  # expect: RNK101"),
            "pkg/sub/__init__.py": "",
            "pkg/sub/use.py": "from ..launch import main\n",
        },
    )

    assert found == expected


def test_importing_a_submodule_imports_the_package_script(tmp_path: Path) -> None:
    found, expected = _run(
        tmp_path,
        {
            "pkg/__init__.py": _GUARDED.format(mark="  # expect: RNK101"),
            "pkg/mod.py": "",
            "use.py": "import pkg.mod\n",
        },
    )

    assert found == expected


def test_script_that_imports_itself_is_not_reported(tmp_path: Path) -> None:
    found, expected = _run(tmp_path, {"train.py": "import train\n" + _SCRIPT.format(mark="")})

    assert found == expected == []


def test_message_names_the_file_that_imports_the_script(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(textwrap.dedent(_SCRIPT.format(mark="")), encoding="utf-8")
    (tmp_path / "use.py").write_text("import train\n", encoding="utf-8")

    result = lint_paths([tmp_path], Config(select=("RNK101",), root=tmp_path), jobs=1)

    assert [f.message.split(";")[0] for f in result.findings] == [
        "`torch.distributed.init_process_group()` runs when this script is imported "
        f"({tmp_path / 'use.py'} imports it)",
        "`torch.distributed.new_group()` runs when this script is imported "
        f"({tmp_path / 'use.py'} imports it)",
    ]


def test_library_module_is_reported_whether_or_not_it_is_imported(tmp_path: Path) -> None:
    found, expected = _run(
        tmp_path,
        {
            "dist_utils.py": """
                import torch.distributed as dist

                group = dist.new_group([0, 1])  # expect: RNK101
            """,
        },
    )

    assert found == expected


def test_module_under_a_script_folder_counts_as_a_script(tmp_path: Path) -> None:
    found, expected = _run(
        tmp_path,
        {
            "scripts/bench_allreduce.py": """
                import torch.distributed as dist

                dist.init_process_group("gloo")
            """,
        },
    )

    assert found == expected == []


def test_code_run_only_on_import_is_reported_even_in_a_script(tmp_path: Path) -> None:
    found, expected = _run(
        tmp_path,
        {
            "train.py": """
                import torch.distributed as dist

                if __name__ == "__main__":
                    pass
                else:
                    group = dist.new_group([0, 1])  # expect: RNK101
                if __name__ != "__main__":
                    group = dist.new_group([0, 1])  # expect: RNK101
            """,
        },
    )

    assert found == expected


def test_one_file_lint_of_a_script_does_not_guess_its_importers() -> None:
    source = textwrap.dedent(_SCRIPT.format(mark=""))

    result = lint_source(source, "train.py", Config(select=("RNK101",)))

    assert result.findings == []


def test_every_imported_script_is_reported_after_one_that_is_not(tmp_path: Path) -> None:
    found, expected = _run(
        tmp_path,
        {
            "a_alone.py": _GUARDED.format(mark=""),
            "b_used.py": _GUARDED.format(mark="  # expect: RNK101"),
            "c_use.py": "import b_used\n",
        },
    )

    assert found == expected


def test_library_module_message_says_the_module_is_imported(tmp_path: Path) -> None:
    (tmp_path / "dist_utils.py").write_text(
        "import torch.distributed as dist\n\ngroup = dist.new_group([0, 1])\n", encoding="utf-8"
    )

    result = lint_paths([tmp_path], Config(select=("RNK101",), root=tmp_path), jobs=1)

    assert [f.message.split(";")[0] for f in result.findings] == [
        "`torch.distributed.new_group()` runs when this module is imported"
    ]


# Module-level code that only a program runs: it ends the process or trains.
_PROGRAM = """
    import sys

    import torch
    import torch.distributed as dist

    if torch.cuda.device_count() < 2:
        print("needs two GPUs")
        {ending}
    mesh = dist.init_device_mesh("cuda", (2,)){mark}
    for step in range(10):
        loss = model(batch)
        {training}
"""


@pytest.mark.parametrize(
    ("ending", "training"),
    [
        ("sys.exit()", "pass"),
        ("exit(1)", "pass"),
        ("quit()", "pass"),
        ("pass", "loss.backward()"),
    ],
)
def test_module_that_ends_the_program_or_trains_at_module_level_is_a_script(
    tmp_path: Path, ending: str, training: str
) -> None:
    script = _PROGRAM.format(ending=ending, training=training, mark="")

    found, expected = _run(tmp_path, {"tp_example.py": script})

    assert found == expected == []


def test_program_module_that_another_file_imports_is_reported(tmp_path: Path) -> None:
    script = _PROGRAM.format(ending="sys.exit()", training="pass", mark="  # expect: RNK101")

    found, expected = _run(tmp_path, {"tp_example.py": script, "use.py": "import tp_example\n"})

    assert found == expected != []


@pytest.mark.parametrize(
    "body",
    [
        # An exit or a backward pass inside a function runs only when it is called.
        "def main():\n    sys.exit()\n",
        "def step(loss):\n    loss.backward()\n",
        # A method named like an exit on another object is no exit of the program.
        "status = checker.exit_code()\n",
    ],
)
def test_library_module_with_exits_only_inside_functions_is_reported(
    tmp_path: Path, body: str
) -> None:
    source = (
        "import sys\n\nimport torch.distributed as dist\n\n"
        f"{body}\n\ngroup = dist.new_group([0, 1])  # expect: RNK101\n"
    )

    found, expected = _run(tmp_path, {"helpers.py": source})

    assert found == expected != []


@pytest.mark.parametrize(
    ("name", "reported"),
    [
        # `import` cannot name these files: they are only ever run.
        ("test-t5.py", False),
        ("2d_parallel.py", False),
        ("class.py", False),
        ("inference/test-electra.py", False),
        # Importable names stay library modules.
        ("test_t5.py", True),
        ("dist_setup.py", True),
    ],
)
def test_file_that_no_import_can_name_is_a_script(
    tmp_path: Path, name: str, reported: bool
) -> None:
    source = "import torch.distributed as dist\n\ngroup = dist.new_group([0, 1])\n"
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text(source, encoding="utf-8")

    result = lint_paths(
        [tmp_path], Config(select=("RNK101",), root=tmp_path, confidence="low"), jobs=1
    )

    assert result.errors == []
    assert [f.line for f in result.findings] == ([3] if reported else [])


def test_source_without_a_python_file_name_is_judged_by_its_code() -> None:
    source = "import torch.distributed as dist\n\ngroup = dist.new_group([0, 1])\n"

    result = lint_source(source, "<stdin>", Config(select=("RNK101",)))

    assert [f.line for f in result.findings] == [3]


def test_argument_parser_under_a_module_level_test_does_not_make_a_library_a_script(
    tmp_path: Path,
) -> None:
    source = """
        import argparse

        import torch.distributed as dist

        if HAVE_CLI:
            parser = argparse.ArgumentParser()
        group = dist.new_group([0, 1])  # expect: RNK101
    """

    found, expected = _run(tmp_path, {"helpers.py": source})

    assert found == expected != []
