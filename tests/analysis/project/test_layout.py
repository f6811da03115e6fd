"""The project layout from metadata (analysis/project/layout.py): own packages, dependencies.

Each test builds a small project in ``tmp_path`` and calls the module's public readers
(``read_layout``, ``layout_of``, ``layout_fingerprint``) directly.
"""

from __future__ import annotations

import codecs
import locale
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from ranklint.analysis.project.layout import (
    ProjectLayout,
    import_root_modules,
    layout_fingerprint,
    layout_of,
    project_folder,
    read_layout,
)
from tests.conftest import write

# A fixed modification time far in the past (2001): a later write always moves it.
_OLD_MTIME_NS = 1_000_000_000 * 1_000_000_000


@pytest.fixture(autouse=True)
def _fresh_layout_caches() -> Iterator[None]:
    """The readers cache per folder: each test starts and ends with empty caches."""
    for cached in (read_layout, project_folder, import_root_modules):
        cached.cache_clear()
    yield
    for cached in (read_layout, project_folder, import_root_modules):
        cached.cache_clear()


@pytest.fixture
def ascii_locale() -> Iterator[None]:
    """The C locale, whose default text encoding is ASCII (restored afterwards)."""
    previous = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        encoding = locale.getpreferredencoding(False)
        if codecs.lookup(encoding).name == "utf-8":
            pytest.skip("the C locale reads text as UTF-8 on this platform")
        yield
    finally:
        locale.setlocale(locale.LC_CTYPE, previous)


def required_of(folder: Path) -> frozenset[str]:
    return read_layout(folder).required_modules


def own_of(folder: Path) -> frozenset[str]:
    return read_layout(folder).own_modules


# -- own modules -------------------------------------------------------------------


def test_own_modules_are_the_packages_and_modules_of_the_folder_and_of_src(
    tmp_path: Path,
) -> None:
    write(tmp_path / "pkg" / "__init__.py", "")
    write(tmp_path / "nspkg" / "part.py", "")  # a namespace package: Python files inside
    write(tmp_path / "helpers.py", "")
    write(tmp_path / "x.py", "")  # a one-letter module name
    write(tmp_path / "src" / "inner" / "__init__.py", "")
    # Not modules: a folder without Python files, folders and files whose names are
    # not identifiers, files that are not .py.
    write(tmp_path / "assets" / "logo.svg", "")
    write(tmp_path / "my-tools" / "run.py", "")
    write(tmp_path / "run-me.py", "")
    write(tmp_path / "Makefile", "all:\n")
    write(tmp_path / "README.md", "")

    own = own_of(tmp_path)

    assert own == {"pkg", "nspkg", "helpers", "x", "inner"}


def test_own_modules_skip_a_package_folder_that_cannot_be_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path / "readable" / "__init__.py", "")
    locked = tmp_path / "locked"
    write(locked / "__init__.py", "")
    iterdir = Path.iterdir

    def refuse_locked(self: Path) -> Iterator[Path]:
        if self == locked:
            raise PermissionError(13, "Permission denied", str(self))
        return iterdir(self)

    monkeypatch.setattr(Path, "iterdir", refuse_locked)

    own = own_of(tmp_path)

    assert own == {"readable"}


def test_is_own_matches_the_top_level_name_of_a_dotted_module() -> None:
    layout = ProjectLayout(None, frozenset({"pkg"}), frozenset())

    assert layout.is_own("pkg")
    assert layout.is_own("pkg.sub.leaf")
    assert not layout.is_own("other.pkg")
    assert not layout.is_own("pkgextra")


def test_is_required_matches_a_prefix_and_its_submodules_in_any_case_but_not_longer_names() -> None:
    layout = ProjectLayout(None, frozenset(), frozenset({"torch", "megatron.core"}))

    assert layout.is_required("torch")
    assert layout.is_required("Torch.cuda")
    assert layout.is_required("megatron.core.tensor_parallel")
    assert not layout.is_required("torchvision")
    assert not layout.is_required("megatron")
    assert not layout.is_required("megatron.training")


def test_setup_py_name_is_an_own_module_in_normalized_form(tmp_path: Path) -> None:
    write(tmp_path / "setup.py", 'from setuptools import setup\nsetup(name="My-Lib.Core")\n')

    own = own_of(tmp_path)

    assert own == {"setup", "my_lib_core"}


def test_setup_py_without_a_literal_name_adds_no_own_module(tmp_path: Path) -> None:
    write(
        tmp_path / "setup.py",
        'from setuptools import setup\nNAME = compute()\nsetup(install_requires=["torch"])\n',
    )

    layout = read_layout(tmp_path)

    assert layout.own_modules == {"setup"}
    assert layout.required_modules == {"torch"}


def test_setup_py_name_and_install_requires_bound_at_module_level_are_read_without_keywords(
    tmp_path: Path,
) -> None:
    write(
        tmp_path / "setup.py",
        """
        from setuptools import setup
        name = "my-lib"
        install_requires = ["torch", "wandb"]
        setup(**dict(name=name, install_requires=install_requires))
        """,
    )

    layout = read_layout(tmp_path)

    assert layout.own_modules == {"setup", "my_lib"}
    assert layout.required_modules == {"torch", "wandb"}


# -- required dependencies: pyproject.toml --------------------------------------------


def test_poetry_dependencies_are_required_but_the_python_constraint_is_not(
    tmp_path: Path,
) -> None:
    write(
        tmp_path / "pyproject.toml",
        """
        [tool.poetry]
        name = "lib"

        [tool.poetry.dependencies]
        python = "^3.10"
        torch = "^2.1"
        neptune-client = "*"
        """,
    )

    required = required_of(tmp_path)

    assert required == {"torch", "neptune"}


def test_files_named_by_setuptools_dynamic_dependencies_are_read(tmp_path: Path) -> None:
    write(
        tmp_path / "pyproject.toml",
        """
        [project]
        name = "lib"
        dynamic = ["dependencies"]

        [tool.setuptools.dynamic]
        dependencies = {file = ["deps/runtime.txt"]}
        """,
    )
    write(tmp_path / "deps" / "runtime.txt", "torch>=2\nmegatron-core\n")

    required = required_of(tmp_path)

    assert required == {"torch", "megatron.core"}


def test_project_without_any_dependency_declaration_requires_nothing(tmp_path: Path) -> None:
    write(tmp_path / "setup.cfg", "[metadata]\nname = lib\n")
    write(tmp_path / "pyproject.toml", '[project]\nname = "lib"\n')

    required = required_of(tmp_path)

    assert required == frozenset()


# -- required dependencies: setup.cfg and setup.py -------------------------------------


def test_setup_cfg_with_non_ascii_text_is_read_as_utf8_in_an_ascii_locale(
    tmp_path: Path, ascii_locale: None
) -> None:
    write(
        tmp_path / "setup.cfg",
        """
        [metadata]
        name = lib
        author = Åsa Öberg

        [options]
        install_requires =
            torch
        """,
    )

    required = required_of(tmp_path)

    assert required == {"torch"}


def test_install_requires_list_skips_elements_that_are_not_string_literals(
    tmp_path: Path,
) -> None:
    write(
        tmp_path / "setup.py",
        """
        from setuptools import setup
        EXTRA = "wandb"
        setup(name="lib", install_requires=["torch", EXTRA, None, 3])
        """,
    )

    required = required_of(tmp_path)

    assert required == {"torch"}


def test_install_requires_bound_to_a_name_reads_that_name_not_another_assignment(
    tmp_path: Path,
) -> None:
    write(
        tmp_path / "setup.py",
        """
        from setuptools import setup
        deps = ["torch"]
        extras = ["pytest"]
        setup(name="lib", install_requires=deps)
        """,
    )

    required = required_of(tmp_path)

    assert required == {"torch"}


def test_requirements_file_named_by_a_setup_py_call_is_found_in_the_requirements_folder(
    tmp_path: Path,
) -> None:
    write(
        tmp_path / "setup.py",
        """
        from setuptools import setup
        setup(name="lib", install_requires=fetch_requirements("runtime.txt"))
        """,
    )
    write(tmp_path / "requirements" / "runtime.txt", "torch\n")

    required = required_of(tmp_path)

    assert required == {"torch"}


# -- required dependencies: requirements files ------------------------------------------


def test_requirements_includes_are_followed_eight_levels_deep_and_no_deeper(
    tmp_path: Path,
) -> None:
    write(tmp_path / "requirements.txt", "dep0\n-r r1.txt\n")
    for level in range(1, 10):
        write(tmp_path / f"r{level}.txt", f"dep{level}\n-r r{level + 1}.txt\n")

    required = required_of(tmp_path)

    assert required == {f"dep{level}" for level in range(9)}


def test_requirements_file_including_itself_is_read_once(tmp_path: Path) -> None:
    write(tmp_path / "requirements.txt", "torch\n-r requirements.txt\n")

    required = required_of(tmp_path)

    assert required == {"torch"}


def test_requirements_include_in_long_form_with_a_trailing_comment_is_followed(
    tmp_path: Path,
) -> None:
    write(tmp_path / "requirements.txt", "--requirement base.txt  # shared # pinned\n")
    write(tmp_path / "base.txt", "torch\n")

    required = required_of(tmp_path)

    assert required == {"torch"}


def test_editable_requirements_name_their_project_by_egg(tmp_path: Path) -> None:
    write(
        tmp_path / "requirements.txt",
        """
        -e ./vendor/apex#egg=apex
        --editable ./vendor/te#egg=transformer-engine
        -e .
        """,
    )

    required = required_of(tmp_path)

    assert required == {"apex", "transformer_engine"}


def test_direct_url_references_name_their_project_before_the_at_sign(tmp_path: Path) -> None:
    write(
        tmp_path / "requirements.txt",
        """
        deepspeed @ git+ssh://git@github.com/microsoft/DeepSpeed.git
        flash-attn@https://example.com/flash_attn-2.5.whl
        https://example.com/no_name_given.whl
        """,
    )

    required = required_of(tmp_path)

    assert required == {"deepspeed", "flash_attn"}


def test_requirements_file_with_bytes_that_are_not_utf8_is_still_read(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_bytes(b"torch\nnumpy  # caf\xe9\n")

    required = required_of(tmp_path)

    assert required == {"torch", "numpy"}


# -- the project holding a file ----------------------------------------------------------


def test_layout_of_a_file_outside_any_project_holds_only_the_modules_beside_it(
    tmp_path: Path,
) -> None:
    if project_folder(tmp_path) is not None:
        pytest.skip("the temporary folder lies inside a project")
    write(tmp_path / "tool" / "run.py", "")
    write(tmp_path / "tool" / "util.py", "")

    layout = layout_of(tmp_path / "tool" / "run.py")

    assert layout == ProjectLayout(None, frozenset({"run", "util"}), frozenset())


def test_layout_of_a_file_in_a_script_folder_keeps_the_project_folder_and_its_dependencies(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    write(project / "pyproject.toml", '[project]\nname = "lib"\ndependencies = ["torch"]\n')
    write(project / "scripts" / "train.py", "")
    write(project / "scripts" / "common.py", "")

    layout = layout_of(project / "scripts" / "train.py")

    assert layout == ProjectLayout(
        project, frozenset({"lib", "scripts", "train", "common"}), frozenset({"torch"})
    )


def test_layout_of_follows_an_edit_of_setup_py(tmp_path: Path) -> None:
    setup_py = write(tmp_path / "setup.py", 'setup(name="lib", install_requires=["torch"])\n')
    source = tmp_path / "lib" / "core.py"
    before = layout_of(source).required_modules

    setup_py.write_text('setup(name="lib", install_requires=["torch", "wandb"])\n')

    assert before == {"torch"}
    assert layout_of(source).required_modules == {"torch", "wandb"}


def test_layout_of_follows_an_edit_of_setup_cfg(tmp_path: Path) -> None:
    setup_cfg = write(tmp_path / "setup.cfg", "[options]\ninstall_requires = torch\n")
    source = tmp_path / "lib" / "core.py"
    before = layout_of(source).required_modules

    setup_cfg.write_text("[options]\ninstall_requires =\n    torch\n    wandb\n")

    assert before == {"torch"}
    assert layout_of(source).required_modules == {"torch", "wandb"}


def test_layout_of_follows_a_file_added_to_the_requirements_folder(tmp_path: Path) -> None:
    write(tmp_path / "setup.py", 'setup(name="lib", install_requires=read("runtime.txt"))\n')
    folder = tmp_path / "requirements"
    write(folder / "dev.txt", "pytest\n")
    os.utime(folder, ns=(_OLD_MTIME_NS, _OLD_MTIME_NS))
    source = tmp_path / "lib" / "core.py"
    before = layout_of(source).required_modules

    write(folder / "runtime.txt", "torch\n")

    assert before == frozenset()
    assert layout_of(source).required_modules == {"torch"}


def test_layout_fingerprints_of_projects_with_equal_metadata_in_different_folders_differ(
    tmp_path: Path,
) -> None:
    for name in ("one", "two"):
        write(tmp_path / name / "pyproject.toml", '[project]\nname = "lib"\n')

    first = layout_fingerprint(tmp_path / "one")
    second = layout_fingerprint(tmp_path / "two")

    assert first != second


# -- malformed metadata ---------------------------------------------------------------


@pytest.mark.parametrize("tool", ["tool = 1\n", "[tool]\nsetuptools = 1\npoetry = 'x'\n"])
def test_pyproject_whose_tool_entries_are_not_tables_requires_nothing(
    tmp_path: Path, tool: str
) -> None:
    write(tmp_path / "pyproject.toml", '[project]\nname = "lib"\n' + tool)

    required = required_of(tmp_path)

    assert required == frozenset()


def test_requirements_file_starting_with_a_bom_keeps_its_first_requirement(
    tmp_path: Path,
) -> None:
    (tmp_path / "requirements.txt").write_bytes(b"\xef\xbb\xbftorch\nnumpy\n")

    required = required_of(tmp_path)

    assert required == {"torch", "numpy"}


def test_setup_cfg_starting_with_a_bom_is_read(tmp_path: Path) -> None:
    text = "[options]\ninstall_requires =\n    wandb\n"
    (tmp_path / "setup.cfg").write_bytes(b"\xef\xbb\xbf" + text.encode())

    required = required_of(tmp_path)

    assert required == {"wandb"}


def test_requirements_include_with_a_tab_before_its_comment_is_followed(
    tmp_path: Path,
) -> None:
    write(tmp_path / "requirements.txt", "-r base.txt\t# shared\nnumpy\t#pinned\n")
    write(tmp_path / "base.txt", "torch\n")

    required = required_of(tmp_path)

    assert required == {"torch", "numpy"}
